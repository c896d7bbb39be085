"""Hidden suite, level 1: one worker, a priority queue, nearest-rank percentiles."""

import pytest
from hypothesis import example, given, settings

from priority_scheduler_oracle import (SLOW_HINT, latencies_by_class, nearest_rank, overloaded_trace, reference,
                                       request_rows, simulate)

from kata.checks import check_raises, check_speed, digest, graded
from kata.strict import same


def outs(outcomes):
    """{id: (start, finish, preemptions)}: results compared as plain data."""
    return {i: (o.start, o.finish, o.preemptions) for i, o in outcomes.items()}


def reqs_of(impl, rows):
    return [impl.Request(*row) for row in rows]


def check_schedule(impl, rows, expected):
    got = outs(impl.schedule(reqs_of(impl, rows)))
    assert same(got, expected), f"Called schedule({rows}). Returned {got}, expected {expected}."


# --- the rules, one case each ------------------------------------------------


@graded(1, 2, "the prompt's level-1 example")
def test_prompt_example(impl):
    check_schedule(impl, [(1, 0, 1, 4), (2, 1, 0, 2), (3, 1, 1, 1), (4, 2, 0, 3)],
                   {1: (0, 4, 0), 2: (4, 6, 0), 4: (6, 9, 0), 3: (9, 10, 0)})


@graded(1, 1, "each Outcome carries its request's id, not only the dict key")
def test_outcomes_carry_request_ids(impl):
    rows = [(1, 0, 1, 4), (2, 1, 0, 2), (3, 1, 1, 1), (4, 2, 0, 3)]
    got = impl.schedule(reqs_of(impl, rows))
    # the prompt's level-1 example, compared as whole Outcome(id, start, finish, preemptions) values
    O = impl.Outcome
    expected = {1: O(1, 0, 4, 0), 2: O(2, 4, 6, 0), 4: O(4, 6, 9, 0), 3: O(3, 9, 10, 0)}
    assert same(got, expected), f"Called schedule({rows}). Returned {got!r}, expected {expected!r}."


@graded(1, 1, "no requests: an empty dict")
def test_empty_input(impl):
    got = impl.schedule([])
    assert same(got, {}), f"Called schedule([]). Returned {got!r}, expected {{}}."


@graded(1, 1, "a lone request starts at its arrival and finishes duration later")
def test_single_request(impl):
    check_schedule(impl, [(7, 3, 2, 5)], {7: (3, 8, 0)})


@graded(1, 2, "when the worker frees, a more urgent later arrival goes before an earlier, less urgent one")
def test_priority_beats_earlier_arrival(impl):
    check_schedule(impl, [(1, 0, 0, 3), (2, 1, 2, 1), (3, 2, 1, 1)],
                   {1: (0, 3, 0), 3: (3, 4, 0), 2: (4, 5, 0)})


@graded(1, 2, "equal priority: the earlier arrival goes first, even with the larger id")
def test_tie_on_priority_goes_to_earlier_arrival(impl):
    check_schedule(impl, [(1, 0, 0, 3), (2, 2, 1, 1), (9, 1, 1, 1)],
                   {1: (0, 3, 0), 9: (3, 4, 0), 2: (4, 5, 0)})


@graded(1, 2, "equal priority and arrival: the smaller id goes first, whatever the input order")
def test_tie_on_priority_and_arrival_goes_to_smaller_id(impl):
    check_schedule(impl, [(1, 0, 0, 3), (12, 1, 1, 1), (3, 1, 1, 1), (10, 1, 1, 1)],
                   {1: (0, 3, 0), 3: (3, 4, 0), 10: (4, 5, 0), 12: (5, 6, 0)})


@graded(1, 2, "no preemption at level 1: an urgent arrival waits for the running request")
def test_no_preemption(impl):
    check_schedule(impl, [(1, 0, 3, 10), (2, 1, 0, 1)], {1: (0, 10, 0), 2: (10, 11, 0)})


@graded(1, 2, "an arrival at the exact instant the worker frees competes for it (completions, then arrivals, then dispatch)")
def test_arrival_at_completion_instant_competes(impl):
    check_schedule(impl, [(1, 0, 1, 5), (2, 1, 2, 1), (3, 5, 0, 1)],
                   {1: (0, 5, 0), 3: (5, 6, 0), 2: (6, 7, 0)})


@graded(1, 2, "an idle worker takes what has arrived; it never waits for a more urgent future request")
def test_future_requests_are_not_considered(impl):
    check_schedule(impl, [(1, 0, 3, 4), (2, 1, 0, 1)], {1: (0, 4, 0), 2: (4, 5, 0)})


@graded(1, 1, "the worker idles between requests; the next starts at its own arrival")
def test_idle_gap(impl):
    check_schedule(impl, [(1, 0, 0, 2), (2, 10, 0, 3)], {1: (0, 2, 0), 2: (10, 13, 0)})


@graded(1, 2, "a zero-duration request waits for the busy worker, then finishes the instant it gets it; the next starts the same instant")
def test_zero_duration_request(impl):
    check_schedule(impl, [(1, 0, 1, 4), (2, 1, 0, 0), (3, 2, 1, 2)],
                   {1: (0, 4, 0), 2: (4, 4, 0), 3: (4, 6, 0)})


@graded(1, 1, "zero-duration requests at an idle instant: all finish at once, in urgency order, then the next runs")
def test_zero_duration_burst(impl):
    check_schedule(impl, [(1, 5, 1, 0), (2, 5, 0, 0), (3, 5, 2, 3)],
                   {1: (5, 5, 0), 2: (5, 5, 0), 3: (5, 8, 0)})


@graded(1, 2, "simultaneous arrivals at an idle instant are served in urgency order")
def test_simultaneous_arrivals(impl):
    check_schedule(impl, [(4, 2, 1, 1), (3, 2, 0, 2), (2, 2, 1, 1), (1, 2, 2, 1)],
                   {3: (2, 4, 0), 2: (4, 5, 0), 4: (5, 6, 0), 1: (6, 7, 0)})


@graded(1, 1, "input not sorted by arrival, and left unmodified")
def test_unsorted_input_is_not_modified(impl):
    rows = [(3, 6, 0, 1), (1, 0, 1, 2), (2, 1, 0, 1)]
    reqs = reqs_of(impl, rows)
    before = list(reqs)
    got = outs(impl.schedule(reqs))
    expected = {1: (0, 2, 0), 2: (2, 3, 0), 3: (6, 7, 0)}
    assert same(got, expected), f"Called schedule({rows}). Returned {got}, expected {expected}."
    assert same(reqs, before), f"Called schedule({rows}). The list became {reqs}, expected it unchanged."


# --- pick_next ------------------------------------------------------------------


@graded(1, 1, "pick_next: lowest priority number, then earliest arrival, then smallest id")
def test_pick_next(impl):
    R = impl.Request
    cases = [
        ([R(1, 0, 1, 4), R(2, 1, 0, 2)], R(2, 1, 0, 2)),
        ([R(5, 3, 1, 1), R(4, 2, 1, 9)], R(4, 2, 1, 9)),
        ([R(8, 2, 1, 1), R(6, 2, 1, 1), R(7, 2, 1, 1)], R(6, 2, 1, 1)),
        ([R(4, 3, 1, 1), R(5, 2, 1, 9)], R(5, 2, 1, 9)),  # arrival decides before id
    ]
    for waiting, expected in cases:
        got = impl.pick_next(waiting)
        assert same(got, expected), f"Called pick_next({waiting}). Returned {got}, expected {expected}."


@graded(1, 1, "pick_next([]) raises ValueError naming waiting")
def test_pick_next_empty_raises(impl):
    with pytest.raises(ValueError, match="waiting"):
        impl.pick_next([])


# --- percentiles ----------------------------------------------------------------


@graded(1, 1, "nearest rank on the prompt's examples")
def test_percentile_examples(impl):
    for values, p, expected in (([5, 1, 3, 2], 50, 2), ([5, 1, 3, 2], 99, 5), ([7], 1, 7)):
        got = impl.percentile(values, p)
        assert same(got, expected), f"Called percentile({values}, {p}). Returned {got}, expected {expected}."


@graded(1, 1, "percentile, pick_next and latency_percentiles leave their arguments as they were")
def test_arguments_not_modified(impl):
    values = [5, 1, 3, 2]
    impl.percentile(values, 50)
    assert same(values, [5, 1, 3, 2]), f"Called percentile([5, 1, 3, 2], 50). The caller's list became {values}: sort a copy."
    R = impl.Request
    waiting = [R(3, 4, 1, 1), R(1, 0, 1, 1), R(2, 2, 0, 1)]
    before = list(waiting)
    impl.pick_next(waiting)
    assert same(waiting, before), f"Called pick_next({before}). The caller's list became {waiting}."
    outcomes = impl.schedule(waiting)
    kept = dict(outcomes)
    impl.latency_percentiles(waiting, outcomes)
    assert same((waiting, outcomes), (before, kept)), "Called latency_percentiles(requests, outcomes): it changed its arguments."


@graded(1, 2, "P50 of an even count is the lower middle value, of an odd count the middle; no interpolation")
def test_percentile_median_no_interpolation(impl):
    for values, expected in (([10, 40, 20, 30], 20), ([3, 1, 2], 2), ([1, 100], 1)):
        got = impl.percentile(values, 50)
        assert same(got, expected), f"Called percentile({values}, 50). Returned {got}, expected {expected}."


@graded(1, 2, "P99 is the maximum of up to 99 values, rank 99 of 100, 100 of 101, 198 of 200 (integer ceil)")
def test_percentile_p99_ranks(impl):
    for n, rank in ((99, 99), (100, 99), (101, 100), (200, 198), (1000, 990), (150, 149)):
        values = list(range(n, 0, -1))  # 1..n, reversed: must sort
        got = impl.percentile(values, 99)
        assert same(got, rank), f"Called percentile(1..{n} in reverse order, 99). Returned {got}, expected {rank}."


@graded(1, 1, "p=100 is the maximum, p=1 of 150 values is rank 2")
def test_percentile_extremes(impl):
    values = list(range(1, 151))
    assert same(impl.percentile(values, 100), 150), "Called percentile(1..150, 100). Expected 150."
    got = impl.percentile(values, 1)
    assert same(got, 2), f"Called percentile(1..150, 1). Returned {got}, expected 2 (rank ceil(1.5) = 2)."


@graded(1, 1, "percentile: p outside 1..100 or not an int raises ValueError naming p; empty values names values")
@pytest.mark.parametrize("values, p, word", [([1], 0, "p"), ([1], 101, "p"), ([1], True, "p"), ([], 50, "values"),
                                            ([1], 50.0, "p"), ([1], None, "p"), ([1], "50", "p")])
def test_percentile_invalid(impl, values, p, word):
    with pytest.raises(ValueError, match=word):
        impl.percentile(values, p)


@graded(1, 2, "percentile, latency_percentiles and pick_next check the type of every argument, and "
              "the first argument's error wins")
def test_every_argument_is_checked_in_order(impl):
    good = reqs_of(impl, [(1, 0, 0, 3)])
    cases = [
        ("percentile('abc', 50)", lambda: impl.percentile("abc", 50), "values"),
        ("percentile((1, 2), 50)", lambda: impl.percentile((1, 2), 50), "values"),
        ("percentile([1, True], 50)", lambda: impl.percentile([1, True], 50), "values"),
        ("percentile([1, 2.0], 50)", lambda: impl.percentile([1, 2.0], 50), "values"),
        ("percentile(None, 50)", lambda: impl.percentile(None, 50), "values"),
        ("percentile([], 0) (both bad: values is checked first)", lambda: impl.percentile([], 0), "values"),
        ("latency_percentiles(reqs, None)", lambda: impl.latency_percentiles(good, None), "outcomes"),
        ("latency_percentiles(reqs, [])", lambda: impl.latency_percentiles(good, []), "outcomes"),
        ("latency_percentiles with duration -1 and outcomes None (requests are checked first)",
         lambda: impl.latency_percentiles(reqs_of(impl, [(1, 0, 0, -1)]), None), "duration"),
        ("pick_next([])", lambda: impl.pick_next([]), "waiting"),
        ("pick_next('abc')", lambda: impl.pick_next("abc"), "waiting"),
        ("pick_next(a request with arrival -1)", lambda: impl.pick_next(reqs_of(impl, [(1, -1, 0, 3)])), "arrival"),
        ("pick_next(two requests with id 1)", lambda: impl.pick_next(reqs_of(impl, [(1, 0, 0, 3), (1, 1, 0, 3)])), "id"),
    ]
    for call, fn, word in cases:
        check_raises(fn, word, call, anywhere=True)


@graded(1, 1, "latency_percentiles reports only the priorities that have requests")
def test_latency_percentiles_only_present_classes(impl):
    reqs = reqs_of(impl, [(1, 0, 2, 3), (2, 0, 5, 1), (3, 1, 2, 1)])
    outcomes = {1: impl.Outcome(1, 0, 3), 2: impl.Outcome(2, 4, 5), 3: impl.Outcome(3, 3, 4)}
    got = impl.latency_percentiles(reqs, outcomes)
    assert same(got, {2: (3, 3), 5: (5, 5)}), f"Called latency_percentiles(...). Returned {got}, expected {{2: (3, 3), 5: (5, 5)}}."
    assert same(impl.latency_percentiles([], {}), {})


@graded(1, 1, "latency_percentiles: a request with no outcome raises ValueError naming outcomes; extra outcomes are ignored")
def test_latency_percentiles_missing_outcome(impl):
    reqs = reqs_of(impl, [(1, 0, 0, 3), (2, 0, 0, 1)])
    with pytest.raises(ValueError, match="outcomes"):
        impl.latency_percentiles(reqs, {1: impl.Outcome(1, 0, 3)})
    extra = {1: impl.Outcome(1, 0, 3), 2: impl.Outcome(2, 3, 4), 99: impl.Outcome(99, 0, 50)}
    got = impl.latency_percentiles(reqs, extra)
    assert same(got, {0: (3, 4)}), f"Called latency_percentiles with an extra outcome. Returned {got}, expected {{0: (3, 4)}}."


@graded(1, 2, "latency_percentiles over 101 latencies: P99 is rank 100 (the second largest), not the maximum")
def test_latency_percentiles_p99_of_101(impl):
    # priority 1: requests 0..100 all arrive at 0 and finish at 1..101, so the latencies are 1..101.
    # n = 101: P50 rank (50 * 101 + 99) // 100 = 51 -> 51; P99 rank (99 * 101 + 99) // 100 = 100 -> 100.
    # priority 0: one request, latency 7 -> (7, 7).
    reqs = reqs_of(impl, [(i, 0, 1, 1) for i in range(101)] + [(500, 3, 0, 1)])
    outcomes = {i: impl.Outcome(i, 0, i + 1) for i in range(101)}
    outcomes[500] = impl.Outcome(500, 3, 10)
    got = impl.latency_percentiles(reqs, outcomes)
    expected = {0: (7, 7), 1: (51, 100)}
    assert same(got, expected), (
        f"Called latency_percentiles(101 priority-1 requests with latencies 1..101 and one priority-0 "
        f"request with latency 7, ...). Returned {got}, expected {expected}."
    )


# --- invalid input --------------------------------------------------------------


INVALID = [
    ([(1, 0, 0, -1)], "duration"),
    ([(1, -1, 0, 1)], "arrival"),
    ([(1, 0, -2, 1)], "priority"),
    ([(-1, 0, 0, 1)], "id"),
    ([(1, 0, 0, 1), (1, 3, 1, 2)], "id"),
    ([(1, 0, True, 1)], "priority"),
    ([(1, 0.5, 0, 1)], "arrival"),
    ([(1, 0, 0, 1), (1, -1, 0, 1)], "arrival"),  # a repeated id whose fields are also bad: fields first
    ([(1, 0, 0, 1), (2, 0, 0, 1), (3, 0, 0, 1), (4, 0, 0, 1), (5, 0, 0, True)], "duration"),  # bad last
]


@graded(1, 1, "invalid requests (negative field, duplicate id, bool or float field) raise ValueError naming the field")
@pytest.mark.parametrize("rows, word", INVALID, ids=[f"{w}-{i}" for i, (_, w) in enumerate(INVALID)])
def test_invalid_requests(impl, rows, word):
    with pytest.raises(ValueError, match=word):
        impl.schedule(reqs_of(impl, rows))


# --- against the oracle ---------------------------------------------------------

REQUEST_ROWS = request_rows(8)


@graded(1, 4, "generated traces: schedule matches a step-by-step simulation of the prompt's rules")
@settings(max_examples=60)
@given(rows=REQUEST_ROWS)
@example(rows=[(1, 0, 1, 5), (2, 1, 2, 1), (3, 5, 0, 1)])
@example(rows=[(5, 0, 0, 2), (4, 0, 0, 2), (3, 1, 0, 0)])
@example(rows=[(2, 3, 1, 1), (1, 3, 1, 1), (0, 0, 0, 3)])
def test_matches_oracle(impl, rows):
    expected, _ = simulate(reqs_of(impl, rows))
    got = outs(impl.schedule(reqs_of(impl, rows)))
    assert same(got, expected), f"Called schedule({rows}). Returned {got}, expected {expected}."


@graded(1, 2, "generated traces: latency_percentiles matches nearest rank computed by counting")
@settings(max_examples=40)
@given(rows=REQUEST_ROWS)
@example(rows=[(i, 0, 0, 1) for i in range(4)])
def test_percentiles_match_oracle(impl, rows):
    reqs = reqs_of(impl, rows)
    finish = {i: f for i, (_, f, _) in simulate(reqs)[0].items()}
    outcomes = {i: impl.Outcome(i, 0, f) for i, f in finish.items()}
    expected = {
        prio: (nearest_rank(lat, 50), nearest_rank(lat, 99))
        for prio, lat in latencies_by_class(reqs, finish).items()
    }
    got = impl.latency_percentiles(reqs, outcomes)
    assert same(got, expected), f"Called latency_percentiles({rows}, ...). Returned {got}, expected {expected}."


# --- complexity -----------------------------------------------------------------


@pytest.mark.complexity
@graded(1, 3, "10,000 requests arriving faster than one worker serves them: within 10x of the reference (a heap, not a scan)")
@pytest.mark.timeout(120)
def test_complexity(impl):
    rows = overloaded_trace(lambda *row: row, 10_000, 1)
    mine = reqs_of(impl, rows)
    check_speed("schedule(10,000 overloaded requests)", lambda: impl.schedule(mine),
                lambda theirs: reference().schedule(theirs), "the outcomes", ref_setup=lambda: reqs_of(reference(), rows),
                answer=lambda r: digest(outs(r)), hint=SLOW_HINT)
