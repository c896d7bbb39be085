"""Hidden suite, level 3: checkpoint save and restore cost time, full or incremental."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from priority_scheduler_oracle import SLOW_HINT, overloaded_trace, reference, request_rows, simulate

from kata.checks import check_speed, digest, graded
from kata.strict import same


def outs(outcomes):
    return {i: (o.start, o.finish, o.preemptions) for i, o in outcomes.items()}


def reqs_of(impl, rows):
    return [impl.Request(*row) for row in rows]


def run(impl, rows, k, kv, bw, inc):
    report = impl.schedule_with_checkpoints(reqs_of(impl, rows), k, kv, bw, inc)
    return outs(report.outcomes), report.checkpoint_overhead


def check(impl, rows, k, kv, bw, inc, expected, overhead):
    got = run(impl, rows, k, kv, bw, inc)
    assert same(got, (expected, overhead)), (
        f"Called schedule_with_checkpoints({rows}, {k}, {kv}, {bw}, {inc}). "
        f"Returned outcomes {got[0]} with overhead {got[1]}, expected {expected} with overhead {overhead}."
    )


PROMPT_ROWS = [(1, 0, 2, 10), (2, 3, 0, 2), (3, 12, 0, 2)]


# --- the rules, one case each ------------------------------------------------


@graded(3, 2, "the prompt's level-3 example, full checkpoints")
def test_prompt_example_full(impl):
    check(impl, PROMPT_ROWS, 1, 4, 8, False, {1: (0, 24, 2), 2: (3, 7, 0), 3: (12, 17, 0)}, 10)


@graded(3, 2, "the prompt's level-3 example, incremental checkpoints")
def test_prompt_example_incremental(impl):
    check(impl, PROMPT_ROWS, 1, 4, 8, True, {1: (0, 23, 2), 2: (3, 7, 0), 3: (12, 16, 0)}, 9)


@graded(3, 1, "transfer times are exact integer ceilings past 2**53: (6 * bw + 1) bytes take 7 time units, not 6")
def test_transfer_time_exact_beyond_2_53(impl):
    bw = 2**60 + 1
    kv = 6 * bw + 1  # one token's KV: kv / bw as a float rounds to exactly 6.0
    rows = [(1, 0, 2, 10), (2, 1, 0, 2)]
    expected, overhead = simulate(reqs_of(impl, rows), 1, True, kv, bw, False)
    assert same((expected[2], overhead), ((1, 10, 0), 14))  # the oracle: save 7, run 2; restore 7
    check(impl, rows, 1, kv, bw, False, expected, overhead)


@graded(3, 1, "no requests: empty outcomes and zero overhead")
def test_empty_input(impl):
    report = impl.schedule_with_checkpoints([], 2, 4, 8, True)
    got = (report.outcomes, report.checkpoint_overhead)
    assert same(got, ({}, 0)), f"Called schedule_with_checkpoints([], 2, 4, 8, True). Returned {got}, expected ({{}}, 0)."


@graded(3, 2, "a transfer time is ceil(bytes / bandwidth): 6 bytes at 4 per unit take 2 units, not 1")
def test_transfer_time_rounds_up(impl):
    check(impl, [(1, 0, 1, 5), (2, 2, 0, 1)], 1, 3, 4, False, {1: (0, 10, 1), 2: (2, 5, 0)}, 4)


@graded(3, 2, "a restore always moves the whole state, also with incremental saves")
def test_restore_is_always_full(impl):
    check(impl, [(1, 0, 2, 10), (2, 2, 0, 1), (3, 8, 0, 1)], 1, 1, 1, True,
          {1: (0, 20, 2), 2: (2, 5, 0), 3: (8, 10, 0)}, 8)


@graded(3, 1, "full checkpoints save everything processed so far at every preemption")
def test_full_saves_everything_each_time(impl):
    check(impl, [(1, 0, 2, 10), (2, 2, 0, 1), (3, 8, 0, 1)], 1, 1, 1, False,
          {1: (0, 22, 2), 2: (2, 5, 0), 3: (8, 12, 0)}, 10)


@graded(3, 3, "incremental checkpoints after several preemptions of the same request save only the new tokens each time")
def test_incremental_after_several_preemptions(impl):
    rows = [(1, 0, 2, 12), (2, 2, 0, 1), (3, 6, 0, 1), (4, 10, 0, 1), (5, 14, 0, 1)]
    check(impl, rows, 1, 2, 2, True,
          {1: (0, 28, 4), 2: (2, 5, 0), 3: (7, 8, 0), 4: (10, 11, 0), 5: (14, 16, 0)}, 12)
    check(impl, rows, 1, 2, 2, False,
          {1: (0, 30, 3), 2: (2, 5, 0), 3: (7, 10, 0), 4: (10, 11, 0), 5: (14, 18, 0)}, 14)


@graded(3, 2, "among the least urgent, the victim is the cheapest to save, even when it arrived earlier")
def test_victim_is_cheapest_to_save(impl):
    rows = [(1, 0, 2, 30), (9, 0, 1, 10), (2, 3, 0, 1), (3, 5, 2, 20), (4, 18, 0, 1)]
    check(impl, rows, 2, 2, 1, True,
          {1: (0, 58, 2), 9: (0, 10, 0), 2: (3, 10, 0), 3: (10, 30, 0), 4: (18, 23, 0)}, 26)
    check(impl, rows, 2, 2, 1, False,
          {1: (0, 64, 2), 9: (0, 10, 0), 2: (3, 10, 0), 3: (10, 30, 0), 4: (18, 29, 0)}, 32)


@graded(3, 2, "the cost only breaks ties among the least urgent: a cheaper but more urgent request is not the victim")
def test_victim_urgency_before_cost(impl):
    check(impl, [(1, 0, 2, 10), (2, 3, 1, 10), (3, 5, 0, 1)], 2, 1, 1, False,
          {1: (0, 21, 1), 2: (3, 13, 0), 3: (5, 11, 0)}, 10)


@graded(3, 1, "equal save cost among the least urgent: the later arrival, then the larger id, is the victim")
def test_victim_cost_tie(impl):
    # 1 and 2 arrived together and have both processed 4 tokens at t=4: 2 has the larger id
    check(impl, [(1, 0, 2, 8), (2, 0, 2, 8), (3, 4, 0, 1)], 2, 1, 2, False,
          {1: (0, 8, 0), 2: (0, 13, 1), 3: (4, 7, 0)}, 4)


@graded(3, 2, "the victim's save cost is counted in the current mode: all tokens with full checkpoints, only those since its last save with incremental ones")
def test_victim_save_cost_follows_the_mode(impl):
    # 2 slots, 1 byte per token, 10 bytes per time unit. Both modes agree until t=20:
    # t=0:  1 (prio 2) and 2 (prio 3) start.
    # t=11: 3 (prio 2) arrives and preempts 2 (prio 3, 11 tokens, save 2): 3 sets up 11..13, works from 13.
    # t=12: 4 (prio 0) arrives; 3 is in its setup, so 1 is the victim (12 tokens, save 2): 4 sets up
    #       12..14, works 14..16.
    # t=16: 1 resumes (restore 12 tokens = 2): works from 18.
    # t=20: 5 (prio 0) arrives. Candidates 1 and 3, both prio 2. 1 has 14 tokens, 2 since its save at
    #       t=12; 3 has 7 tokens, never saved.
    rows = [(1, 0, 2, 30), (2, 0, 3, 30), (3, 11, 2, 30), (4, 12, 0, 2), (5, 20, 0, 2)]
    # full: 3 moves fewer bytes (7 < 14): 3 is preempted (save 1), 5 sets up 20..21, works 21..23.
    # t=23: 3 resumes (restore 1), works 24..47. t=36: 1 finishes; 2 resumes (restore 2), works 38..57.
    # overhead 2 + 2 + 2 + 1 + 1 + 2 = 10.
    check(impl, rows, 2, 1, 10, False,
          {1: (0, 36, 1), 2: (0, 57, 1), 3: (11, 47, 1), 4: (12, 16, 0), 5: (20, 23, 0)}, 10)
    # incremental: 1 moves fewer bytes (2 < 7): 1 is preempted (save 1), 5 sets up 20..21, works 21..23.
    # t=23: 1 resumes (restore 14 tokens = 2), works 25..41. 3 runs on to 43. t=41: 2 resumes
    # (restore 2), works 43..62. overhead 2 + 2 + 2 + 1 + 2 + 2 = 11.
    check(impl, rows, 2, 1, 10, True,
          {1: (0, 41, 2), 2: (0, 62, 1), 3: (11, 43, 0), 4: (12, 16, 0), 5: (20, 23, 0)}, 11)


@graded(3, 2, "a request in its setup is skipped as a victim, and the other running requests are still candidates")
def test_victim_chosen_past_a_request_in_setup(impl):
    # 2 slots, 1 byte per token, 1 byte per time unit, full checkpoints.
    # t=0: 1 (prio 2) and 2 (prio 1) start.
    # t=2: 3 (prio 0) preempts 1 (2 tokens, save 2): 3 sets up 2..4, works 4..9.
    # t=3: 4 (prio 0) arrives; 3 is in its setup, 2 (prio 1) is preemptible: 2 is preempted at 3
    #      (3 tokens, save 3), 4 sets up 3..6, works 6..11.
    # t=9: 3 finishes; 2 resumes (restore 3), works 12..29. t=11: 4 finishes; 1 resumes (restore 2),
    #      works 13..21. overhead 2 + 3 + 3 + 2 = 10.
    # (The request in setup is listed first, so a scan that stops at it finds no victim.)
    check(impl, [(3, 2, 0, 5), (1, 0, 2, 10), (2, 0, 1, 20), (4, 3, 0, 5)], 2, 1, 1, False,
          {1: (0, 21, 1), 2: (0, 29, 1), 3: (2, 9, 0), 4: (3, 11, 0)}, 10)


@graded(3, 2, "a request in its setup cannot be preempted: a more urgent arrival waits for the setup to end")
def test_no_preemption_during_setup(impl):
    got, _ = run(impl, [(1, 0, 3, 10), (2, 4, 1, 2), (3, 5, 0, 1)], 1, 1, 1, False)
    assert got[3][0] >= 8, (
        f"Called schedule_with_checkpoints([(1, 0, 3, 10), (2, 4, 1, 2), (3, 5, 0, 1)], 1, 1, 1, False). "
        f"Request 3 started at {got[3][0]}, expected no earlier than 8, when request 2's setup (saving request 1) ends."
    )


@graded(3, 2, "a waiting request preempts at the instant a setup ends, though nothing arrives or completes then")
def test_preemption_at_setup_end(impl):
    check(impl, [(1, 0, 3, 10), (2, 4, 1, 2), (3, 5, 0, 1)], 1, 1, 1, False,
          {1: (0, 21, 1), 2: (4, 11, 1), 3: (8, 9, 0)}, 8)


@graded(3, 1, "a zero-duration preemptor still spends the victim's save time in the slot")
def test_zero_duration_preemptor_pays_the_save(impl):
    check(impl, [(1, 0, 1, 5), (2, 3, 0, 0)], 1, 1, 1, False, {1: (0, 11, 1), 2: (3, 6, 0)}, 6)


@graded(3, 2, "no checkpoint cost (0 bytes per token): exactly level 2's outcomes, zero overhead")
def test_zero_cost_is_level2(impl):
    rows = [(1, 0, 2, 6), (2, 0, 1, 4), (3, 2, 0, 3), (4, 3, 0, 1)]
    check(impl, rows, 2, 0, 5, True, {1: (0, 9, 1), 2: (0, 5, 1), 3: (2, 5, 0), 4: (3, 4, 0)}, 0)


@graded(3, 2, "starvation without aging: a low-priority request waits behind a stream of urgent ones until it ends")
def test_starvation_without_aging(impl):
    rows = [(1, 0, 0, 4), (2, 0, 3, 2)] + [(10 + i, 4 * i + 1, 0, 4) for i in range(5)]
    got, overhead = run(impl, rows, 1, 0, 1, False)
    assert same(got[2], (24, 26, 0)), (
        f"Called schedule_with_checkpoints(priority-3 request behind a priority-0 stream, 1, 0, 1, False). "
        f"Request 2 got {got[2]}, expected (24, 26, 0): level 3 has no aging."
    )


# --- invalid input --------------------------------------------------------------


INVALID = [
    (0, 1, 1, False, "num_slots"),
    (1, -1, 1, False, "kv_bytes_per_token"),
    (1, 1, 0, False, "bandwidth"),
    (1, 1, -4, True, "bandwidth"),
    (1, 1, 1, 1, "incremental"),
    (1, 1, 1, "yes", "incremental"),
    (2.0, 1, 1, False, "num_slots"),
    (1, True, 1, False, "kv_bytes_per_token"),
    (1, 2.0, 1, False, "kv_bytes_per_token"),
    (1, None, 1, False, "kv_bytes_per_token"),
    (1, 1, True, False, "bandwidth"),
    (1, 1, 2.0, False, "bandwidth"),
    (1, 1, "2", False, "bandwidth"),
    (1, 1, 1, None, "incremental"),
]


@graded(3, 1, "invalid arguments raise ValueError naming the argument")
@pytest.mark.parametrize("k, kv, bw, inc, word", INVALID, ids=[f"{w}-{i}" for i, (*_, w) in enumerate(INVALID)])
def test_invalid_arguments(impl, k, kv, bw, inc, word):
    with pytest.raises(ValueError, match=word):
        impl.schedule_with_checkpoints([impl.Request(1, 0, 0, 1)], k, kv, bw, inc)


# one invalid value per argument, in signature order, and the name the message must contain
ORDERED = (("requests", "arrival"), ("num_slots", "num_slots"), ("kv_bytes_per_token", "kv_bytes_per_token"),
           ("bandwidth", "bandwidth"), ("incremental", "incremental"))


@graded(3, 2, "two invalid arguments at once: requests first, then the others in signature order (every pair)")
def test_invalid_arguments_every_pair(impl):
    good = {"requests": [impl.Request(1, 0, 0, 1)], "num_slots": 1, "kv_bytes_per_token": 1, "bandwidth": 1,
            "incremental": False}
    bad = {"requests": [impl.Request(1, 0, 0, 1), impl.Request(2, -1, 0, 1)], "num_slots": 0,
           "kv_bytes_per_token": -1, "bandwidth": 0, "incremental": 1}
    for i, (first, word) in enumerate(ORDERED):
        for second, _ in ORDERED[i + 1:]:
            args = {**good, first: bad[first], second: bad[second]}
            with pytest.raises(ValueError) as err:
                impl.schedule_with_checkpoints(**args)
            assert word in str(err.value), (
                f"Called schedule_with_checkpoints with {first} and {second} invalid. Raised "
                f"ValueError({str(err.value)!r}), expected a message naming {word} (checked first).")


# --- against the oracle ---------------------------------------------------------

REQUEST_ROWS = request_rows(7)


@graded(3, 6, "generated traces, both modes: outcomes and overhead match a step-by-step simulation of the prompt's rules")
@settings(max_examples=60)
@given(rows=REQUEST_ROWS, k=st.integers(1, 3), kv=st.integers(0, 5), bw=st.integers(1, 6), inc=st.booleans())
@example(rows=[(1, 0, 3, 10), (2, 4, 1, 2), (3, 5, 0, 1)], k=1, kv=1, bw=1, inc=False)
@example(rows=[(1, 0, 2, 12), (2, 2, 0, 1), (3, 6, 0, 1), (4, 10, 0, 1)], k=1, kv=2, bw=2, inc=True)
@example(rows=[(1, 0, 2, 30), (9, 0, 1, 10), (2, 3, 0, 1), (3, 5, 2, 20), (4, 18, 0, 1)], k=2, kv=2, bw=1, inc=True)
@example(rows=[(1, 0, 1, 5), (2, 2, 0, 1)], k=1, kv=3, bw=4, inc=False)
def test_matches_oracle(impl, rows, k, kv, bw, inc):
    expected = simulate(reqs_of(impl, rows), k, True, kv, bw, inc)
    got = run(impl, rows, k, kv, bw, inc)
    assert same(got, expected), (
        f"Called schedule_with_checkpoints({rows}, {k}, {kv}, {bw}, {inc}). "
        f"Returned {got[0]} with overhead {got[1]}, expected {expected[0]} with overhead {expected[1]}."
    )


# --- complexity -----------------------------------------------------------------

N = 8_000


@pytest.mark.complexity
@graded(3, 2, f"{N:,} overloaded requests on 4 slots with incremental checkpoints: within 10x of the reference")
@pytest.mark.timeout(120)
def test_complexity(impl):
    rows = overloaded_trace(lambda *row: row, N, 4, seed=11)
    mine = reqs_of(impl, rows)

    def answer(report):
        return digest((outs(report.outcomes), report.checkpoint_overhead))
    check_speed(f"schedule_with_checkpoints({N:,} overloaded requests, 4, 2, 16, True)",
                lambda: impl.schedule_with_checkpoints(mine, 4, 2, 16, True),
                lambda theirs: reference().schedule_with_checkpoints(theirs, 4, 2, 16, True), "the result",
                ref_setup=lambda: reqs_of(reference(), rows), answer=answer, hint=SLOW_HINT)
