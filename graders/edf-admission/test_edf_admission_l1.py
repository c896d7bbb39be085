"""Hidden suite, level 1: the rules of EDF with admission control, one per test, and invalid input."""

from edf_admission_oracle import check, check_schedule

from kata.checks import graded


def _run(impl, *specs):
    jobs = [impl.Job(*spec) for spec in specs]
    call = "schedule([" + ", ".join(f"Job{spec!r}" for spec in specs) + "])"
    return impl.schedule(jobs), call


# --- admission -------------------------------------------------------------------


@graded(1, 2, "no jobs: empty finish and rejected")
def test_empty(impl):
    got = impl.schedule([])
    check_schedule(got, ({}, {}), "schedule([])")


@graded(1, 2, "a lone job starts at its arrival (idle before it) and finishes arrival + duration later")
def test_single_job(impl):
    got, call = _run(impl, ("a", 7, 3, 20))
    check_schedule(got, ({"a": 10}, {}), call)


@graded(1, 3, "arrival + duration == deadline is in time; one more unit of work is too_late")
def test_too_late_boundary(impl):
    got, call = _run(impl, ("fits", 2, 3, 5), ("late", 10, 4, 13))
    check_schedule(got, ({"fits": 5}, {"late": "too_late"}), call)


@graded(1, 1, "a deadline before the arrival is valid input: the job is too_late")
def test_deadline_before_arrival(impl):
    got, call = _run(impl, ("a", 9, 1, 4))
    check_schedule(got, ({}, {"a": "too_late"}), call)


@graded(1, 2, "too_late is decided before overload: a job that cannot finish alone is too_late even on a busy server")
def test_too_late_before_overload(impl):
    got, call = _run(impl, ("busy", 0, 10, 10), ("x", 1, 5, 5))
    check_schedule(got, ({"busy": 10}, {"x": "too_late"}), call)


@graded(1, 3, "overload: the new job itself would finish after its deadline behind earlier-deadline work")
def test_overload_new_job_late(impl):
    got, call = _run(impl, ("a", 0, 5, 6), ("b", 1, 2, 6))
    check_schedule(got, ({"a": 5}, {"b": "overload"}), call)


@graded(1, 3, "overload: the new job would be in time, but an admitted job with a later deadline would be late")
def test_overload_admitted_job_late(impl):
    got, call = _run(impl, ("a", 0, 6, 8), ("b", 2, 3, 5))
    check_schedule(got, ({"a": 6}, {"b": "overload"}), call)


@graded(1, 3, "an admitted job finishing exactly at its deadline after the new one is still in time")
def test_admitted_exactly_at_deadline(impl):
    got, call = _run(impl, ("a", 0, 6, 9), ("b", 2, 3, 5))
    check_schedule(got, ({"a": 9, "b": 5}, {}), call)


@graded(1, 3, "admission counts the work an admitted job has left at the arrival, not its whole duration")
def test_admission_uses_work_left(impl):
    got, call = _run(impl, ("a", 0, 10, 20), ("b", 5, 10, 15))
    check_schedule(got, ({"a": 20, "b": 15}, {}), call)


@graded(1, 2, "admission counts from the arrival time, not from when the server last started a job")
def test_admission_counts_from_now(impl):
    got, call = _run(impl, ("a", 0, 2, 2), ("b", 6, 3, 9))
    check_schedule(got, ({"a": 2, "b": 9}, {}), call)


@graded(1, 2, "a rejected job changes nothing: the running job finishes as if it had not arrived")
def test_rejected_changes_nothing(impl):
    got, call = _run(impl, ("a", 0, 6, 6), ("b", 3, 1, 3), ("c", 3, 2, 7))
    check_schedule(got, ({"a": 6}, {"b": "too_late", "c": "overload"}), call)


# --- EDF order and preemption ----------------------------------------------------


@graded(1, 3, "an admitted job with an earlier deadline preempts the running one at once; it resumes later")
def test_preemption(impl):
    got, call = _run(impl, ("long", 0, 5, 20), ("short", 2, 1, 4))
    check_schedule(got, ({"long": 6, "short": 3}, {}), call)


@graded(1, 2, "an admitted job with a later deadline waits: the running job keeps the server")
def test_no_preemption_for_later_deadline(impl):
    got, call = _run(impl, ("a", 0, 5, 10), ("b", 2, 1, 30))
    check_schedule(got, ({"a": 5, "b": 6}, {}), call)


@graded(1, 2, "an arrival with the running job's deadline does not preempt it (the running job arrived earlier)")
def test_equal_deadline_no_preemption(impl):
    got, call = _run(impl, ("z", 0, 4, 10), ("a", 1, 2, 10))
    check_schedule(got, ({"z": 4, "a": 6}, {}), call)


@graded(1, 3, "equal deadlines: the earlier arrival runs first, even with a larger id and later in the list")
def test_tie_earlier_arrival_first(impl):
    got, call = _run(impl, ("blocker", 0, 3, 3), ("a", 2, 1, 9), ("z", 1, 1, 9))
    check_schedule(got, ({"blocker": 3, "z": 4, "a": 5}, {}), call)


@graded(1, 3, "equal deadlines and arrivals: the smaller id runs first, even when it comes later in the list")
def test_tie_smaller_id_first(impl):
    got, call = _run(impl, ("blocker", 0, 3, 3), ("b", 1, 1, 9), ("a", 1, 1, 9))
    check_schedule(got, ({"blocker": 3, "a": 4, "b": 5}, {}), call)


@graded(1, 2, "ids compare as strings: '10' comes before '9'")
def test_ids_compare_as_strings(impl):
    got, call = _run(impl, ("blocker", 0, 2, 2), ("9", 1, 1, 9), ("10", 1, 1, 9))
    check_schedule(got, ({"blocker": 2, "10": 3, "9": 4}, {}), call)


@graded(1, 2, "a preempted job resumes when the preemptor finishes, twice over")
def test_two_preemptions(impl):
    got, call = _run(impl, ("a", 0, 6, 30), ("b", 1, 1, 3), ("c", 4, 1, 6))
    want = ({"a": 8, "b": 2, "c": 5}, {})
    check_schedule(got, want, call)


@graded(1, 2, "a job preempted by a job that is itself preempted: a stack of three")
def test_nested_preemption(impl):
    got, call = _run(impl, ("a", 0, 4, 40), ("b", 1, 4, 20), ("c", 2, 1, 4))
    want = ({"a": 9, "b": 6, "c": 3}, {})
    check_schedule(got, want, call)


# --- same instant ----------------------------------------------------------------


@graded(1, 3, "jobs arriving together are decided in list order, not by id or deadline: the first one takes the room")
def test_same_instant_list_order(impl):
    got, call = _run(impl, ("z", 0, 3, 5), ("a", 0, 3, 4))
    check_schedule(got, ({"z": 3}, {"a": "overload"}), call)


@graded(1, 2, "a job arriving together with others sees the ones admitted before it at that instant")
def test_same_instant_sees_earlier_admissions(impl):
    got, call = _run(impl, ("a", 4, 2, 6), ("b", 4, 2, 8), ("c", 4, 1, 8))
    check_schedule(got, ({"a": 6, "b": 8}, {"c": "overload"}), call)


@graded(1, 2, "a job whose work ends at t has finished when a job arrives at t: no stale work is counted")
def test_finish_before_arrival_same_instant(impl):
    got, call = _run(impl, ("a", 0, 3, 3), ("b", 3, 2, 5))
    check_schedule(got, ({"a": 3, "b": 5}, {}), call)


@graded(1, 2, "the input list is in any order: jobs are considered by arrival")
def test_unsorted_input(impl):
    got, call = _run(impl, ("late", 5, 1, 6), ("early", 0, 2, 3))
    check_schedule(got, ({"early": 2, "late": 6}, {}), call)


@graded(1, 1, "the input list is not modified")
def test_input_not_modified(impl):
    jobs = [impl.Job("b", 3, 1, 9), impl.Job("a", 0, 2, 9)]
    copy = list(jobs)
    got = impl.schedule(jobs)
    check([j.id for j in jobs], [j.id for j in copy], "schedule(jobs), then [j.id for j in jobs]")
    check_schedule(got, ({"a": 2, "b": 4}, {}), "schedule(jobs)")


@graded(1, 2, "times past 2**53 are exact: a job ending exactly at a deadline of 2**62 + 2**60 + 1 is in time")
def test_exact_integers(impl):
    big = 2**62
    got, call = _run(impl, ("a", big, 2**60 + 1, big + 2**60 + 1), ("b", big, 1, big))
    check_schedule(got, ({"a": big + 2**60 + 1}, {"b": "too_late"}), call)


@graded(1, 2, "admission sums past 2**53 exactly: one unit over a huge deadline is overload")
def test_exact_integers_overload(impl):
    big = 2**60
    got, call = _run(impl, ("a", 0, big, big + 1), ("b", 1, 2, big + 1))
    check_schedule(got, ({"a": big}, {"b": "overload"}), call)
