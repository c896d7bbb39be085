"""Hidden suite, level 2: K slots and preemption."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from priority_scheduler_oracle import SLOW_HINT, overloaded_trace, reference, request_rows, simulate

from kata.checks import check_raises, check_speed, digest, graded
from kata.strict import same


def outs(outcomes):
    return {i: (o.start, o.finish, o.preemptions) for i, o in outcomes.items()}


def reqs_of(impl, rows):
    return [impl.Request(*row) for row in rows]


def check(impl, rows, k, expected):
    got = outs(impl.schedule_preemptive(reqs_of(impl, rows), k))
    assert same(got, expected), f"Called schedule_preemptive({rows}, {k}). Returned {got}, expected {expected}."


# --- the rules, one case each ------------------------------------------------


@graded(2, 2, "the prompt's level-2 example")
def test_prompt_example(impl):
    check(impl, [(1, 0, 2, 6), (2, 0, 1, 4), (3, 2, 0, 3), (4, 3, 0, 1)], 2,
          {1: (0, 9, 1), 2: (0, 5, 1), 3: (2, 5, 0), 4: (3, 4, 0)})


@graded(2, 1, "no requests: an empty dict")
def test_empty_input(impl):
    got = impl.schedule_preemptive([], 3)
    assert same(got, {}), f"Called schedule_preemptive([], 3). Returned {got!r}, expected {{}}."


@graded(2, 2, "K = 1: a strictly more urgent arrival preempts the running request, which resumes afterwards")
def test_single_slot_preemption(impl):
    check(impl, [(1, 0, 1, 5), (2, 2, 0, 2)], 1, {1: (0, 7, 1), 2: (2, 4, 0)})


@graded(2, 2, "equal priority never preempts, even with an earlier arrival or smaller id")
def test_equal_priority_does_not_preempt(impl):
    check(impl, [(5, 0, 1, 4), (1, 1, 1, 1)], 1, {5: (0, 4, 0), 1: (4, 5, 0)})


@graded(2, 2, "the victim is the least urgent running request (largest priority number)")
def test_victim_is_least_urgent(impl):
    check(impl, [(1, 0, 1, 5), (2, 0, 3, 5), (3, 0, 2, 5), (4, 1, 0, 2)], 3,
          {1: (0, 5, 0), 2: (0, 7, 1), 3: (0, 5, 0), 4: (1, 3, 0)})


@graded(2, 2, "among equally urgent running requests, the victim is the one that arrived last")
def test_victim_tie_latest_arrival(impl):
    check(impl, [(1, 0, 2, 6), (2, 1, 2, 6), (3, 3, 0, 1)], 2,
          {1: (0, 6, 0), 2: (1, 8, 1), 3: (3, 4, 0)})


@graded(2, 2, "equally urgent running requests with the same arrival: the victim has the larger id")
def test_victim_tie_larger_id(impl):
    check(impl, [(4, 0, 2, 6), (7, 0, 2, 6), (1, 2, 0, 1)], 2,
          {4: (0, 6, 0), 7: (0, 7, 1), 1: (2, 3, 0)})


@graded(2, 2, "free slots are filled before anyone is preempted")
def test_fill_before_preempting(impl):
    check(impl, [(1, 0, 3, 5), (2, 1, 0, 2)], 2, {1: (0, 5, 0), 2: (1, 3, 0)})


@graded(2, 2, "a preempted request keeps its progress: it needs only the remaining work")
def test_preempted_request_keeps_progress(impl):
    check(impl, [(1, 0, 2, 10), (2, 6, 0, 3)], 1, {1: (0, 13, 1), 2: (6, 9, 0)})


@graded(2, 1, "start is the first instant in a slot, not the instant it resumed")
def test_start_is_first_dispatch(impl):
    got = outs(impl.schedule_preemptive(reqs_of(impl, [(1, 3, 2, 4), (2, 4, 0, 2)]), 1))
    assert same(got[1][0], 3), f"Called schedule_preemptive([(1, 3, 2, 4), (2, 4, 0, 2)], 1). Request 1 has start {got[1][0]}, expected 3 (not its resume at 6)."


@graded(2, 2, "a preemption chain: a victim resumes and is preempted again; preemptions counts both")
def test_preemption_chain(impl):
    check(impl, [(1, 0, 2, 6), (2, 1, 1, 2), (3, 4, 0, 1), (4, 6, 1, 1)], 1,
          {1: (0, 10, 3), 2: (1, 3, 0), 3: (4, 5, 0), 4: (6, 7, 0)})


@graded(2, 2, "a request is never preempted at the instant its work ends: it completes first")
def test_no_preemption_at_finishing_instant(impl):
    check(impl, [(1, 0, 2, 4), (2, 4, 0, 2), (3, 1, 3, 1)], 1,
          {1: (0, 4, 0), 2: (4, 6, 0), 3: (6, 7, 0)})


@graded(2, 2, "an arrival at the instant another request completes takes the freed slot instead of preempting")
def test_arrival_at_completion_takes_freed_slot(impl):
    check(impl, [(1, 0, 1, 3), (2, 0, 2, 6), (3, 3, 0, 2)], 2,
          {1: (0, 3, 0), 2: (0, 6, 0), 3: (3, 5, 0)})


@graded(2, 2, "all requests of one priority: first come first served, no preemption")
def test_one_priority_is_fifo(impl):
    rows = [(10 - i, i // 2, 2, 3 + i % 3) for i in range(8)]
    reqs = reqs_of(impl, rows)
    got = outs(impl.schedule_preemptive(reqs, 2))
    expected, _ = simulate(reqs, 2, True)
    assert same(got, expected), f"Called schedule_preemptive({rows}, 2). Returned {got}, expected {expected}."
    assert all(p == 0 for _, _, p in got.values())
    order = sorted(got, key=lambda i: (got[i][0], i))
    fifo = [r[0] for r in sorted(rows, key=lambda r: (r[1], r[0]))]
    assert same(order, fifo), f"Called schedule_preemptive(one priority, 2). Start order {order}, expected {fifo}."


@graded(2, 2, "two urgent arrivals at one instant preempt two victims, least urgent first")
def test_simultaneous_urgent_arrivals(impl):
    check(impl, [(1, 0, 1, 5), (2, 0, 2, 5), (3, 0, 3, 5), (4, 2, 0, 1), (5, 2, 0, 1)], 3,
          {1: (0, 5, 0), 2: (0, 6, 1), 3: (0, 6, 1), 4: (2, 3, 0), 5: (2, 3, 0)})


@graded(2, 2, "a zero-duration urgent arrival preempts, finishes at once, and the victim resumes the same instant")
def test_zero_duration_preemptor(impl):
    check(impl, [(1, 0, 2, 4), (2, 2, 0, 0)], 1, {1: (0, 4, 1), 2: (2, 2, 0)})


@graded(2, 1, "more slots than requests: everything runs at its arrival")
def test_more_slots_than_requests(impl):
    check(impl, [(1, 0, 3, 4), (2, 1, 0, 2), (3, 1, 1, 5)], 64, {1: (0, 4, 0), 2: (1, 3, 0), 3: (1, 6, 0)})


# --- pick_victim ----------------------------------------------------------------


@graded(2, 2, "pick_victim: the least urgent running request, only when strictly more urgent; ties to latest arrival then larger id")
def test_pick_victim(impl):
    R = impl.Request
    a, b, c, d = R(1, 0, 2, 6), R(2, 0, 1, 4), R(3, 5, 2, 1), R(4, 5, 2, 1)
    cases = [
        ([a, b], R(9, 2, 0, 3), a),
        ([a, b], R(9, 2, 2, 3), None),
        ([a, b], R(9, 2, 1, 3), a),
        ([a, c, b], R(9, 6, 0, 1), c),
        ([d, a, c], R(9, 6, 1, 1), d),
        ([], R(9, 6, 0, 1), None),
        ([R(8, 1, 2, 1), R(6, 4, 2, 1)], R(9, 6, 0, 1), R(6, 4, 2, 1)),  # arrival decides before id
    ]
    for running, incoming, expected in cases:
        got = impl.pick_victim(running, incoming)
        assert same(got, expected), f"Called pick_victim({running}, {incoming}). Returned {got}, expected {expected}."


@graded(2, 2, "pick_victim: equally urgent running requests with the same arrival tie to the larger id, wherever it sits in the list")
def test_pick_victim_tie_by_id_not_list_order(impl):
    R = impl.Request
    small, large = R(3, 5, 2, 1), R(4, 5, 2, 1)
    for running in ([small, large], [large, small], [R(8, 1, 2, 1), small, large, R(1, 0, 1, 1)]):
        got = impl.pick_victim(running, R(9, 6, 0, 1))
        assert same(got, large), f"Called pick_victim({running}, Request(9, 6, 0, 1)). Returned {got}, expected {large}."


@graded(2, 2, "schedule_preemptive: a victim tie (same priority, same arrival) goes to the larger id even when it comes first in the list")
def test_victim_tie_larger_id_listed_first(impl):
    check(impl, [(7, 0, 2, 6), (4, 0, 2, 6), (1, 2, 0, 1)], 2,
          {7: (0, 7, 1), 4: (0, 6, 0), 1: (2, 3, 0)})


# --- invalid input --------------------------------------------------------------


@graded(2, 1, "num_slots below 1 or not an int raises ValueError naming num_slots")
@pytest.mark.parametrize("k", [0, -3, True, 1.5, 2.0, None, "2"])
def test_invalid_num_slots(impl, k):
    with pytest.raises(ValueError, match="num_slots"):
        impl.schedule_preemptive([impl.Request(1, 0, 0, 1)], k)


@graded(2, 1, "invalid requests raise ValueError naming the field at level 2 too")
def test_invalid_request(impl):
    with pytest.raises(ValueError, match="id"):
        impl.schedule_preemptive([impl.Request(1, 0, 0, 1), impl.Request(1, 0, 0, 1)], 2)


# --- against the oracle ---------------------------------------------------------

REQUEST_ROWS = request_rows(8)


@graded(2, 5, "generated traces, K = 1 to 3: matches a step-by-step simulation of the prompt's rules")
@settings(max_examples=60)
@given(rows=REQUEST_ROWS, k=st.integers(1, 3))
@example(rows=[(1, 0, 1, 3), (2, 0, 1, 3), (3, 1, 0, 2)], k=2)
@example(rows=[(1, 0, 2, 4), (2, 4, 0, 2), (3, 1, 3, 1)], k=1)
@example(rows=[(1, 0, 2, 6), (2, 1, 1, 2), (3, 4, 0, 1), (4, 6, 1, 1)], k=1)
@example(rows=[(1, 0, 1, 3), (2, 0, 1, 3), (3, 1, 1, 2)], k=1)
def test_matches_oracle(impl, rows, k):
    expected, _ = simulate(reqs_of(impl, rows), k, True)
    got = outs(impl.schedule_preemptive(reqs_of(impl, rows), k))
    assert same(got, expected), f"Called schedule_preemptive({rows}, {k}). Returned {got}, expected {expected}."


# --- complexity -----------------------------------------------------------------

N = 15_000


@pytest.mark.complexity
@graded(2, 3, f"{N:,} requests arriving faster than 4 slots serve them, with preemptions: within 10x of the reference")
@pytest.mark.timeout(120)
def test_complexity(impl):
    rows = overloaded_trace(lambda *row: row, N, 4)
    mine = reqs_of(impl, rows)
    check_speed(f"schedule_preemptive({N:,} overloaded requests, 4)", lambda: impl.schedule_preemptive(mine, 4),
                lambda theirs: reference().schedule_preemptive(theirs, 4), "the outcomes",
                ref_setup=lambda: reqs_of(reference(), rows), answer=lambda r: digest(outs(r)), hint=SLOW_HINT)


@graded(2, 1, "pick_victim checks running (a list), then incoming (a Request), then every request's "
              "fields, ids unique across both")
def test_pick_victim_checks_its_arguments(impl):
    r = impl.Request(1, 0, 1, 3)
    cases = [
        ("pick_victim(None, r)", lambda: impl.pick_victim(None, r), "running"),
        ("pick_victim((r,), r2)", lambda: impl.pick_victim((r,), impl.Request(2, 0, 0, 1)), "running"),
        ("pick_victim([], None)", lambda: impl.pick_victim([], None), "incoming"),
        ("pick_victim(None, None) (running is checked first)", lambda: impl.pick_victim(None, None), "running"),
        ("pick_victim([r], a request with priority -2)",
         lambda: impl.pick_victim([r], impl.Request(2, 0, -2, 1)), "priority"),
        ("pick_victim([r], another request with id 1)", lambda: impl.pick_victim([r], impl.Request(1, 0, 0, 1)), "id"),
    ]
    for call, fn, word in cases:
        check_raises(fn, word, call, anywhere=True)
    assert impl.pick_victim([], r) is None
