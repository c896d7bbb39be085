"""Hidden suite, level 1: dynamic batching with padding (plan_batches)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from token_batcher_oracle import oracle_plan
from token_batcher_support import build, bulk_requests, complexity_check

from kata.checks import digest, graded
from kata.strict import same


def plan(impl, rows, max_batch_size, max_batch_tokens, window):
    return impl.plan_batches(build(impl, rows), max_batch_size, max_batch_tokens, window)


def batches(p):
    return [(list(b.request_ids), b.dispatch_time, b.reason, b.padded_tokens, b.useful_tokens)
            for b in p.batches]


def call(rows, *params):
    return f"plan_batches({rows}, {', '.join(map(str, params))})"


def check(impl, rows, params, expected_batches, expected_rejected=None, expected_waste=None):
    p = plan(impl, rows, *params)
    got = batches(p)
    assert same(got, expected_batches), (
        f"Called {call(rows, *params)}. Returned batches {got}, expected {expected_batches}.")
    if expected_rejected is not None:
        assert same(dict(p.rejected), expected_rejected), (
            f"Called {call(rows, *params)}. Returned rejected {p.rejected}, expected {expected_rejected}.")
    if expected_waste is not None:
        assert same(p.padding_waste, expected_waste), (
            f"Called {call(rows, *params)}. Returned padding_waste {p.padding_waste}, expected {expected_waste}.")
    return p


# --- the prompt and the simplest cases ---------------------------------------


@graded(1, 2, "the prompt's worked example")
def test_prompt_example(impl):
    rows = [("a", 0, 2, 1), ("b", 1, 4, 1), ("c", 2, 1, 0), ("x", 3, 50, 0),
            ("d", 9, 3, 3), ("e", 10, 7, 2), ("f", 16, 1, 1)]
    check(impl, rows, (3, 16, 5),
          [(["a", "b", "c"], 2, "full", 15, 9), (["d"], 10, "budget", 6, 6),
           (["e"], 15, "window", 9, 9), (["f"], 21, "window", 2, 2)],
          {"x": "exceeds_batch_tokens"}, 6)


@graded(1, 1, "empty input: no batches, nothing rejected, zero waste")
def test_empty_input(impl):
    check(impl, [], (4, 10, 3), [], {}, 0)


@graded(1, 1, "one request: its batch closes by its window at arrival + window")
def test_single_request(impl):
    check(impl, [("a", 7, 3, 2)], (4, 10, 3), [(["a"], 10, "window", 5, 5)], {}, 0)


@graded(1, 1, "zero output tokens: the size is the prompt alone")
def test_zero_output_tokens(impl):
    check(impl, [("a", 0, 4, 0), ("b", 0, 2, 0)], (4, 100, 0),
          [(["a", "b"], 0, "window", 8, 6)], {}, 2)


# --- full ------------------------------------------------------------------------


@graded(1, 2, "a batch that reaches max_batch_size closes at once, at the arrival of the request that filled it")
def test_full_batch_dispatches_at_last_arrival(impl):
    rows = [("a", 0, 1, 1), ("b", 2, 1, 1), ("c", 3, 1, 1)]
    check(impl, rows, (2, 100, 10),
          [(["a", "b"], 2, "full", 4, 4), (["c"], 13, "window", 2, 2)])


@graded(1, 2, "max_batch_size 1: every request is its own full batch, dispatched on arrival")
def test_max_batch_size_one(impl):
    rows = [("a", 0, 1, 1), ("b", 0, 2, 1), ("c", 5, 3, 0)]
    check(impl, rows, (1, 100, 10),
          [(["a"], 0, "full", 2, 2), (["b"], 0, "full", 3, 3), (["c"], 5, "full", 3, 3)], {}, 0)


@graded(1, 1, "full takes precedence: the batch closes as full even if the next request would also overflow it")
def test_full_before_next_request(impl):
    rows = [("a", 0, 2, 0), ("b", 1, 2, 0), ("c", 2, 9, 0)]
    check(impl, rows, (2, 10, 10),
          [(["a", "b"], 1, "full", 4, 4), (["c"], 12, "window", 9, 9)])


# --- budget ----------------------------------------------------------------------


@graded(1, 2, "a padded footprint exactly equal to max_batch_tokens fits (<=)")
def test_footprint_equal_to_budget_fits(impl):
    rows = [("a", 0, 3, 1), ("b", 1, 2, 2), ("c", 2, 1, 3)]  # 3 * 4 = 12
    check(impl, rows, (5, 12, 10), [(["a", "b", "c"], 10, "window", 12, 12)])


@graded(1, 2, "one token over max_batch_tokens closes the batch at the newcomer's arrival with reason budget")
def test_footprint_over_budget_closes(impl):
    rows = [("a", 0, 3, 1), ("b", 1, 2, 2), ("c", 4, 2, 3)]  # 3 * 5 = 15 > 14
    check(impl, rows, (5, 14, 10),
          [(["a", "b"], 4, "budget", 8, 8), (["c"], 14, "window", 5, 5)])


@graded(1, 2, "padding: a longer newcomer re-pads every member, so the footprint is size x longest, not the sum")
def test_padding_uses_longest_request(impl):
    rows = [("a", 0, 1, 0), ("b", 1, 1, 0), ("c", 2, 1, 0), ("d", 3, 5, 1)]  # 4 * 6 = 24 > 20
    check(impl, rows, (8, 20, 10),
          [(["a", "b", "c"], 3, "budget", 3, 3), (["d"], 13, "window", 6, 6)], {}, 0)


@graded(1, 1, "padding waste: padded minus useful, summed over all batches")
def test_padding_waste_sums_batches(impl):
    rows = [("a", 0, 1, 0), ("b", 0, 6, 2), ("c", 20, 2, 0), ("d", 20, 1, 0)]
    check(impl, rows, (4, 100, 1),
          [(["a", "b"], 1, "window", 16, 9), (["c", "d"], 21, "window", 4, 3)], {}, 8)


# --- window ----------------------------------------------------------------------


@graded(1, 2, "a request arriving exactly at t0 + window still joins (the window includes its end)")
def test_window_end_is_inclusive(impl):
    check(impl, [("a", 4, 1, 1), ("b", 9, 1, 1)], (8, 100, 5),
          [(["a", "b"], 9, "window", 4, 4)])


@graded(1, 2, "a request arriving at t0 + window + 1 closes the batch at t0 + window")
def test_window_one_past_end_closes(impl):
    check(impl, [("a", 4, 1, 1), ("b", 10, 1, 1)], (8, 100, 5),
          [(["a"], 9, "window", 2, 2), (["b"], 15, "window", 2, 2)])


@graded(1, 2, "window is checked before budget: a late request that would also overflow closes by window at t0 + window")
def test_window_checked_before_budget(impl):
    check(impl, [("a", 0, 5, 0), ("b", 9, 6, 0)], (8, 10, 5),
          [(["a"], 5, "window", 5, 5), (["b"], 14, "window", 6, 6)])


@graded(1, 2, "window 0: a batch holds only requests arriving at the same instant as its first")
def test_window_zero_groups_same_instant(impl):
    rows = [("a", 3, 1, 0), ("b", 3, 1, 0), ("c", 4, 1, 0)]
    check(impl, rows, (8, 100, 0),
          [(["a", "b"], 3, "window", 2, 2), (["c"], 4, "window", 1, 1)])


@graded(1, 1, "idle gap: a batch still closes at t0 + window, not when the next (much later) request arrives")
def test_idle_gap_between_arrivals(impl):
    check(impl, [("a", 0, 1, 0), ("b", 1000, 1, 0)], (8, 100, 7),
          [(["a"], 7, "window", 1, 1), (["b"], 1007, "window", 1, 1)])


@graded(1, 1, "the window is measured from the batch's first request, not from the latest one")
def test_window_from_first_request(impl):
    rows = [("a", 0, 1, 0), ("b", 3, 1, 0), ("c", 6, 1, 0)]
    check(impl, rows, (8, 100, 5),
          [(["a", "b"], 5, "window", 2, 2), (["c"], 11, "window", 1, 1)])


# --- rejection -------------------------------------------------------------------


@graded(1, 2, "a request larger than max_batch_tokens is rejected and does not close, open or join any batch")
def test_oversized_request_is_ignored(impl):
    rows = [("a", 0, 2, 0), ("x", 1, 30, 0), ("b", 2, 2, 0)]
    check(impl, rows, (8, 10, 5), [(["a", "b"], 5, "window", 4, 4)],
          {"x": "exceeds_batch_tokens"}, 0)


@graded(1, 1, "a rejected request does not start a window: the next batch's window starts at the next accepted request")
def test_rejected_request_starts_no_window(impl):
    rows = [("x", 0, 30, 0), ("a", 4, 2, 0)]
    check(impl, rows, (8, 10, 5), [(["a"], 9, "window", 2, 2)], {"x": "exceeds_batch_tokens"})


@graded(1, 1, "a request exactly max_batch_tokens large is accepted alone")
def test_request_equal_to_budget_fits_alone(impl):
    check(impl, [("a", 0, 6, 4), ("b", 1, 1, 0)], (8, 10, 5),
          [(["a"], 1, "budget", 10, 10), (["b"], 6, "window", 1, 1)], {})


# --- ordering --------------------------------------------------------------------


@graded(1, 2, "unsorted input is taken in arrival order; equal arrivals keep their input order")
def test_arrival_order_is_stable(impl):
    rows = [("late", 5, 1, 0), ("b", 2, 1, 0), ("a", 2, 1, 0), ("first", 0, 1, 0)]
    check(impl, rows, (3, 100, 10),
          [(["first", "b", "a"], 2, "full", 3, 3), (["late"], 15, "window", 1, 1)])


@graded(1, 1, "equal arrival times: all join at the same instant up to the limits")
def test_equal_arrivals(impl):
    rows = [(f"r{i}", 1, 2, 0) for i in range(5)]
    check(impl, rows, (2, 100, 0),
          [(["r0", "r1"], 1, "full", 4, 4), (["r2", "r3"], 1, "full", 4, 4),
           (["r4"], 1, "window", 2, 2)])


# --- invalid input ---------------------------------------------------------------


@graded(1, 1, "duplicate ids raise ValueError naming id")
def test_duplicate_ids(impl):
    with pytest.raises(ValueError, match="id"):
        plan(impl, [("a", 0, 1, 1), ("b", 0, 1, 1), ("a", 2, 1, 1)], 4, 10, 1)


@graded(1, 1, "prompt_tokens 0 or negative raises ValueError naming prompt_tokens")
@pytest.mark.parametrize("prompt", [0, -3])
def test_nonpositive_prompt_tokens(impl, prompt):
    with pytest.raises(ValueError, match="prompt_tokens"):
        plan(impl, [("a", 0, 1, 1), ("b", 0, prompt, 1)], 4, 10, 1)


@graded(1, 1, "negative output_tokens raises ValueError naming output_tokens")
def test_negative_output_tokens(impl):
    with pytest.raises(ValueError, match="output_tokens"):
        plan(impl, [("a", 0, 1, -1)], 4, 10, 1)


@graded(1, 1, "negative arrival raises ValueError naming arrival")
def test_negative_arrival(impl):
    with pytest.raises(ValueError, match="arrival"):
        plan(impl, [("a", -1, 1, 1)], 4, 10, 1)


@graded(1, 1, "max_batch_size < 1, max_batch_tokens < 1 or window < 0 raise ValueError naming the parameter")
@pytest.mark.parametrize("params,field", [
    ((0, 10, 1), "max_batch_size"), ((2, 0, 1), "max_batch_tokens"), ((2, 10, -1), "window"),
])
def test_invalid_parameters(impl, params, field):
    with pytest.raises(ValueError, match=field):
        plan(impl, [("a", 0, 1, 1)], *params)


@graded(1, 1, "invalid parameters are rejected even for an empty request list")
def test_invalid_parameters_with_empty_input(impl):
    with pytest.raises(ValueError, match="max_batch_size"):
        plan(impl, [], 0, 10, 1)


# --- against the oracle ----------------------------------------------------------

rows_strategy = st.lists(
    st.tuples(st.integers(0, 12), st.integers(1, 8), st.integers(0, 5)), max_size=12
).map(lambda xs: [(f"r{i}", a, p, o) for i, (a, p, o) in enumerate(xs)])


@graded(1, 4, "random traces match an independent slow oracle, field by field")
@settings(max_examples=60)
@given(rows=rows_strategy, size=st.integers(1, 5), tokens=st.integers(1, 30), window=st.integers(0, 6))
@example(rows=[("r0", 0, 3, 0), ("r1", 3, 8, 0)], size=4, tokens=10, window=3)  # window before budget
@example(rows=[("r0", 2, 2, 0), ("r1", 2, 2, 0), ("r2", 1, 2, 0)], size=2, tokens=8, window=0)
@example(rows=[("r0", 0, 1, 0), ("r1", 1, 20, 0), ("r2", 2, 1, 0)], size=5, tokens=10, window=5)
@example(rows=[("r0", 0, 4, 1), ("r1", 0, 4, 1)], size=3, tokens=10, window=2)  # 2 * 5 = 10 fits
def test_matches_oracle(impl, rows, size, tokens, window):
    exp_batches, exp_rejected, exp_waste = oracle_plan(build(impl, rows), size, tokens, window)
    check(impl, rows, (size, tokens, window), exp_batches, exp_rejected, exp_waste)


# --- complexity ------------------------------------------------------------------


@pytest.mark.complexity
@graded(1, 2, "30,000 requests in batches of thousands: within 10x of the reference's time (catches O(n^2))")
@pytest.mark.timeout(60)
def test_complexity(impl, reference, runs):
    def caller(mod):
        requests = bulk_requests(runs, mod)  # 16 per time unit: a 400-unit window holds 6,400 requests
        return lambda n: mod.plan_batches(requests[:n], 100_000, 10**9, 400)

    complexity_check("plan_batches", lambda: caller(reference()), caller(impl), (5_000, 30_000),
                     answer=lambda r: digest(batches(r)), what="the batches")
