"""Hidden suite of `safety-interceptor`, level 1: the classifier races prefill."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from safety_interceptor_oracle import o_gateway, outcome_tuple

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def run(impl, rows, cost=1):
    got = impl.run_gateway([impl.Request(*r) for r in rows], cost)
    return {k: outcome_tuple(v) for k, v in got.items()}


PROMPT_ROWS = [("a", 0, 100, 30, False), ("b", 10, 50, 20, True), ("c", 20, 40, 200, False),
               ("d", 25, 100, 130, True), ("e", 30, 20, 5, False)]


@graded(1, 3, "the prompt's example: served, refused before its turn, waiting on a slow verdict, cancelled, served after the cancel")
def test_prompt_example(impl):
    want = {"a": ("served", 100, None, 100), "b": ("refused", None, 30, 0), "c": ("served", 220, None, 40),
            "d": ("refused", None, 155, 15), "e": ("served", 175, None, 20)}
    check(run(impl, PROMPT_ROWS), want, "run_gateway(the prompt's five requests, 1)")


@graded(1, 2, "TTFT is a max, not a sum: a fast classifier hides behind prefill, a slow prefill behind the classifier")
def test_ttft_is_a_max(impl):
    check(run(impl, [("a", 5, 10, 3, False)], 2), {"a": ("served", 25, None, 10)}, "run_gateway([a: 10 tokens, classify 3], 2)")
    check(run(impl, [("a", 5, 10, 50, False)], 2), {"a": ("served", 55, None, 10)}, "run_gateway([a: 10 tokens, classify 50], 2)")


@graded(1, 2, "a verdict exactly at the request's turn: never prefilled (verdict <= start)")
def test_verdict_at_start(impl):
    rows = [("a", 0, 10, 0, False), ("b", 0, 5, 10, True), ("c", 0, 5, 0, False)]
    want = {"a": ("served", 10, None, 10), "b": ("refused", None, 10, 0), "c": ("served", 15, None, 5)}
    check(run(impl, rows), want, f"run_gateway({rows}, 1)")


@graded(1, 2, "a verdict exactly at the end of prefill: completed and wasted (verdict >= end), engine free at the end")
def test_verdict_at_end(impl):
    rows = [("a", 0, 10, 10, True), ("b", 0, 5, 0, False)]
    want = {"a": ("refused", None, 10, 10), "b": ("served", 15, None, 5)}
    check(run(impl, rows), want, f"run_gateway({rows}, 1)")


@graded(1, 2, "a cancelled prefill counts whole tokens done, (verdict - start) // prefill_cost, and frees the engine at the verdict")
def test_cancel_counts_whole_tokens(impl):
    rows = [("a", 0, 10, 7, True), ("b", 1, 2, 0, False)]
    want = {"a": ("refused", None, 7, 2), "b": ("served", 13, None, 2)}  # cost 3: 7 // 3 = 2 tokens
    check(run(impl, rows, 3), want, f"run_gateway({rows}, 3)")


@graded(1, 1, "a cancelled prefill's whole tokens are an exact integer floor past 2**53, rounding neither down nor up")
def test_cancel_tokens_exact_past_2_53(impl):
    big = 2**60
    for elapsed, cost in ((2**53 + 1, 1), (3 * (2**53 + 1) + 2, 3), (10**18 + 1, 1)):
        rows = [("a", 0, big, elapsed, True), ("b", 0, 1, 0, False)]
        want = {"a": ("refused", None, elapsed, elapsed // cost), "b": ("served", elapsed + cost, None, 1)}
        check(run(impl, rows, cost), want, f"run_gateway([a: 2**60 tokens, classify {elapsed}, flagged; b], {cost})")


@graded(1, 1, "the engine waits for arrivals: an idle gap starts the next prefill at its arrival")
def test_idle_gap(impl):
    rows = [("a", 0, 5, 0, False), ("b", 100, 5, 1, False)]
    check(run(impl, rows), {"a": ("served", 5, None, 5), "b": ("served", 105, None, 5)}, f"run_gateway({rows}, 1)")


@graded(1, 1, "arrival ties keep input order; the input list may be in any order")
def test_arrival_order(impl):
    rows = [("z", 3, 5, 0, False), ("y", 0, 5, 0, False), ("x", 3, 5, 0, False)]
    want = {"y": ("served", 5, None, 5), "z": ("served", 10, None, 5), "x": ("served", 15, None, 5)}
    check(run(impl, rows), want, f"run_gateway({rows}, 1)")


@graded(1, 1, "a refused request that was never prefilled does not move the engine's clock")
def test_skip_keeps_clock(impl):
    rows = [("a", 0, 4, 0, False), ("b", 1, 100, 2, True), ("c", 10, 3, 0, False)]
    want = {"a": ("served", 4, None, 4), "b": ("refused", None, 3, 0), "c": ("served", 13, None, 3)}
    check(run(impl, rows), want, f"run_gateway({rows}, 1)")


@graded(1, 1, "no token before the verdict even with classify_time 0 and an idle engine; an empty list gives {}")
def test_trivial(impl):
    check(run(impl, [("a", 7, 1, 0, False)]), {"a": ("served", 8, None, 1)}, "run_gateway([a at 7, 1 token], 1)")
    check(run(impl, []), {}, "run_gateway([], 1)")


@graded(1, 1, "run_gateway leaves the caller's list in its order")
def test_list_not_modified(impl):
    reqs = [impl.Request(*r) for r in reversed(PROMPT_ROWS)]
    before = list(reqs)
    impl.run_gateway(reqs, 1)
    check([r.id for r in reqs], [row[0] for row in reversed(PROMPT_ROWS)], "run_gateway(requests, 1), then the list's ids")
    assert all(a is b for a, b in zip(reqs, before)), "Called run_gateway(requests, 1): the caller's list now holds other objects."


@graded(1, 4, "run_gateway matches a tick-by-tick oracle on generated traces")
@PROPERTY
@given(rows=st.lists(st.tuples(st.integers(0, 30), st.integers(1, 8), st.integers(0, 40), st.booleans()), max_size=8),
       cost=st.integers(1, 3))
@example(rows=[(0, 10, 10, True), (0, 5, 0, False)], cost=1)
def test_matches_oracle(impl, rows, cost):
    rows = [(f"r{i}", *r) for i, r in enumerate(rows)]
    check(run(impl, rows, cost), o_gateway(rows, cost), f"run_gateway({rows}, {cost})")


@graded(1, 2, "every field: True, 2.0, None, '2' and values below the minimum name the field; flagged must be a bool")
def test_invalid_fields(impl):
    for index, name, minimum in ((1, "arrival", 0), (2, "prompt_tokens", 1), (3, "classify_time", 0)):
        for bad in (True, 2.0, None, "2", minimum - 1):
            row = ["a", 0, 1, 0, False]
            row[index] = bad
            check_raises(lambda: impl.run_gateway([impl.Request(*row)], 1), name, f"run_gateway([Request{tuple(row)}], 1)")
    for bad in (1, None, "yes"):
        check_raises(lambda: impl.run_gateway([impl.Request("a", 0, 1, 0, bad)], 1), "flagged", f"run_gateway([.. flagged={bad!r}], 1)")


@graded(1, 2, "duplicate ids name id; prefill_cost is checked after the requests; the first bad request wins")
def test_invalid_order(impl):
    R = impl.Request
    check_raises(lambda: impl.run_gateway([R("a", 0, 1, 0, False), R("a", 1, 1, 0, False)], 1), "id", "run_gateway([a, a], 1)")
    check_raises(lambda: impl.run_gateway([R("a", 0, 1, 0, False), R("a", -1, 1, 0, False)], 1), "arrival",
                 "run_gateway([a, a with arrival -1], 1) (fields before the duplicate)")
    check_raises(lambda: impl.run_gateway([R("a", -1, 1, 0, False)], 0), "arrival", "run_gateway([arrival -1], 0)")
    for bad in (0, True, 1.0, None):
        check_raises(lambda: impl.run_gateway([], bad), "prefill_cost", f"run_gateway([], {bad!r})")


@graded(1, 1, "one request that repeats an id and also has a bad field of its own names the field: every field, the last included, is checked before the id")
def test_duplicate_and_bad_field_in_one_request(impl):
    R = impl.Request
    for row, name in ((("a", 0, 1, 0, "yes"), "flagged"), (("a", 0, 1, 0, None), "flagged"), (("a", 0, 1, -1, False), "classify_time"),
                      (("a", 0, 0, 0, False), "prompt_tokens"), (("a", -1, 1, 0, False), "arrival")):
        check_raises(lambda: impl.run_gateway([R("a", 0, 1, 0, False), R(*row)], 1), name,
                     f"run_gateway([Request('a', 0, 1, 0, False), Request{row}], 1) (the second repeats the id)")


@graded(1, 1, "a slow verdict on a served request does not hold the engine: the next prefill starts at the end")
def test_slow_verdict_does_not_block_engine(impl):
    rows = [("a", 0, 5, 100, False), ("b", 0, 5, 0, False)]
    check(run(impl, rows), {"a": ("served", 100, None, 5), "b": ("served", 10, None, 5)}, f"run_gateway({rows}, 1)")


@graded(1, 1, "prefill takes prompt_tokens * prefill_cost")
def test_prefill_cost_scales(impl):
    rows = [("a", 2, 7, 0, False), ("b", 2, 3, 0, False)]
    check(run(impl, rows, 4), {"a": ("served", 30, None, 7), "b": ("served", 42, None, 3)}, f"run_gateway({rows}, 4)")


@graded(1, 1, "a flagged request with classify_time 0 on an idle engine is never prefilled (verdict == start)")
def test_instant_flag(impl):
    check(run(impl, [("a", 9, 5, 0, True)]), {"a": ("refused", None, 9, 0)}, "run_gateway([a at 9, classify 0, flagged], 1)")


@graded(1, 1, "a cancel one time unit after start with prefill_cost 2 counts 0 whole tokens")
def test_cancel_before_first_token(impl):
    rows = [("a", 0, 5, 1, True), ("b", 0, 1, 0, False)]
    check(run(impl, rows, 2), {"a": ("refused", None, 1, 0), "b": ("served", 3, None, 1)}, f"run_gateway({rows}, 2)")


@graded(1, 1, "a verdict that arrives while the request waits in the queue costs it nothing: first token at the prefill's end")
def test_verdict_while_queued(impl):
    rows = [("a", 0, 50, 0, False), ("b", 1, 10, 5, False)]
    check(run(impl, rows), {"a": ("served", 50, None, 50), "b": ("served", 60, None, 10)}, f"run_gateway({rows}, 1)")
