"""Hidden suite, level 4: chunked prefill under a token budget (schedule_chunked) and TPOT
percentiles (tpot_percentiles).

As at level 3, schedules are replayed (memory held by the engine's block manager) and graded by
the rules every valid schedule obeys, then by goodput and P99 TPOT against the reference policy.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from token_batcher_replay import PHYSICS, nearest_rank, replay_schedule
from token_batcher_support import CHUNKED_SEEDS, assert_clean, build, slo_case, slo_report, trace_tests

from kata.checks import baseline, graded
from kata.strict import same

LEVEL = 4
SMALL = dict(num_blocks=8, block_size=4, max_running=3, prefill_cost=1, decode_cost=2,
             token_budget=8)


def run(impl, rows, **config):
    requests = build(impl, rows)
    cfg = impl.EngineConfig(**config)
    schedule = impl.schedule_chunked(requests, cfg)
    return requests, cfg, schedule, replay_schedule(requests, cfg, schedule, chunked=True)



# --- tpot_percentiles on given schedules ------------------------------------------


def given_schedule(impl, outcomes):
    """A Schedule holding only outcomes: id -> (first_token_time, finish_time)."""
    return impl.Schedule(
        steps=[], outcomes={k: impl.Outcome(f, t, 0, True) for k, (f, t) in outcomes.items()},
        shed=[], rejected={}, goodput=len(outcomes))


def tpot(impl, rows, outcomes):
    return impl.tpot_percentiles(build(impl, rows), given_schedule(impl, outcomes))


def as_tuple(stats):
    return (stats.count, stats.p50, stats.p90, stats.p99)


def close_stats(got, want):
    """Stats tuples equal: the count exactly, each percentile to float rounding (or both None)."""
    return same(got[0], want[0]) and len(got) == len(want) and all(
        (g is None and w is None) or (g is not None and w is not None and math.isclose(g, w))
        for g, w in zip(got[1:], want[1:]))


@graded(4, 2, "tpot_percentiles checks requests first, then outcomes: an unknown id names outcomes, "
              "finish before first token names finish_time")
def test_tpot_percentiles_validates_its_input(impl):
    good = [("a", 0, 3, 4, 10)]
    cases = [
        ("a request with prompt_tokens 0", [("a", 0, 0, 4, 10)], {"a": (5, 27)}, "prompt_tokens"),
        ("two requests with id 'a'", good + [("a", 1, 2, 2, 10)], {}, "id"),
        ("an outcome for unknown id 'zz'", good, {"a": (5, 27), "zz": (1, 2)}, "outcomes"),
        ("an outcome finishing at 4 before its first token at 5", good, {"a": (5, 4)}, "finish_time"),
        ("a bad request and an unknown outcome (requests are checked first)",
         [("a", -1, 3, 4, 10)], {"zz": (1, 2)}, "arrival"),
        ("an unknown id whose outcome also finishes before its first token (the key is checked first)",
         good, {"zz": (5, 4)}, "outcomes"),
        ("a bad request last in the list, with no outcome, and an unknown outcome",
         good + [("b", 0, 3, True, 10)], {"zz": (1, 2)}, "output_tokens"),
    ]
    for what, rows, outcomes, field in cases:
        with pytest.raises(ValueError) as err:
            tpot(impl, rows, outcomes)
        assert field in str(err.value), (
            f"Called tpot_percentiles with {what}. Raised ValueError({str(err.value)!r}), expected a "
            f"message naming {field}.")
    # a deadline of None is fine here: tpot_percentiles does not need it
    got = as_tuple(tpot(impl, [("a", 0, 3, 4, None)], {"a": (5, 26)}))
    assert close_stats(got, (1, 7.0, 7.0, 7.0)), f"Called tpot_percentiles with ttft_deadline None. Returned {got}, expected (1, 7.0, 7.0, 7.0)."


@graded(4, 2, "tpot_percentiles on the prompt's example")
def test_tpot_prompt_example(impl):
    rows = [("a", 0, 3, 4, 10), ("b", 1, 14, 2, 30), ("c", 2, 2, 2, 12)]
    got = as_tuple(tpot(impl, rows, {"a": (5, 27), "b": (27, 29), "c": (14, 22)}))
    assert close_stats(got, (3, 22 / 3, 8.0, 8.0)), f"Called tpot_percentiles(prompt example). Returned {got}, expected (3, 7.333.., 8.0, 8.0)."


@graded(4, 1, "no request with 2+ output tokens: count 0 and every percentile None")
def test_tpot_no_values(impl):
    rows = [("a", 0, 3, 1, 10), ("b", 0, 3, 0, 10)]
    got = as_tuple(tpot(impl, rows, {"a": (5, 5), "b": (7, 7)}))
    assert same(got, (0, None, None, None)), f"Called tpot_percentiles(outputs of 1 and 0 tokens). Returned {got}, expected (0, None, None, None)."


@graded(4, 1, "requests with fewer than 2 output tokens and requests without an outcome (shed) have no TPOT")
def test_tpot_skips_short_and_shed(impl):
    rows = [("one", 0, 3, 1, 10), ("two", 0, 3, 2, 10), ("shed", 0, 3, 5, 10)]
    got = as_tuple(tpot(impl, rows, {"one": (4, 4), "two": (4, 10)}))
    assert close_stats(got, (1, 6.0, 6.0, 6.0)), f"Called tpot_percentiles(one finished 2-token request). Returned {got}, expected (1, 6.0, 6.0, 6.0)."


@graded(4, 2, "nearest rank with 10 values: p50 is the 5th value (no interpolation), p90 the 9th (not the 10th)")
def test_tpot_rank_exact_multiples(impl):
    rows = [(f"r{i}", 0, 1, 2, 10) for i in range(10)]
    outcomes = {f"r{i}": (0, i + 1) for i in range(10)}  # TPOTs 1..10
    got = as_tuple(tpot(impl, rows, outcomes))
    assert close_stats(got, (10, 5.0, 9.0, 10.0)), f"Called tpot_percentiles(TPOTs 1..10). Returned {got}, expected (10, 5.0, 9.0, 10.0)."


@graded(4, 1, "nearest rank with 100 and 101 values: p99 is the 99th, then the 100th value")
def test_tpot_p99_ranks(impl):
    for n, want in ((100, 99.0), (101, 100.0)):
        rows = [(f"r{i}", 0, 1, 2, 10) for i in range(n)]
        outcomes = {f"r{i}": (0, i + 1) for i in range(n)}
        got = tpot(impl, rows, outcomes).p99
        assert got is not None and math.isclose(got, want), f"Called tpot_percentiles(TPOTs 1..{n}). Returned p99 {got}, expected {want}."


@graded(4, 1, "TPOT is a true division (a float), over output_tokens - 1")
def test_tpot_true_division(impl):
    rows = [("a", 0, 1, 4, 10)]
    got = tpot(impl, rows, {"a": (3, 13)}).p50
    assert got is not None and math.isclose(got, 10 / 3), f"Called tpot_percentiles(first token 3, finish 13, 4 outputs). Returned p50 {got}, expected 3.333.."


@graded(4, 2, "random outcomes: percentiles match an independent nearest-rank oracle")
@settings(max_examples=40)
@given(data=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 50), st.integers(0, 50)), max_size=25))
@example(data=[(2, 0, 9)] * 10)
def test_tpot_matches_oracle(impl, data):
    rows = [(f"r{i}", 0, 1, o, 10) for i, (o, _, _) in enumerate(data)]
    outcomes = {f"r{i}": (f, f + d) for i, (_, f, d) in enumerate(data)}
    values = [d / (o - 1) for (o, _, d) in data if o >= 2]
    want = (len(values),) + tuple(nearest_rank(values, p) if values else None for p in (50, 90, 99))
    got = as_tuple(tpot(impl, rows, outcomes))
    assert close_stats(got, want), f"Called tpot_percentiles(TPOTs {sorted(values)}). Returned {got}, expected {want}."


# --- small schedules -------------------------------------------------------------


@graded(4, 2, "the prompt's worked example: a valid chunked schedule with goodput 3")
def test_prompt_example(impl):
    rows = [("a", 0, 3, 4, 10), ("b", 1, 14, 2, 30), ("c", 2, 2, 2, 12)]
    _, _, _, rep = run(impl, rows, **SMALL)
    assert_clean(rep, "schedule_chunked(prompt example)")
    assert same(rep.goodput, 3), f"Called schedule_chunked(prompt example). Returned goodput {rep.goodput}, expected 3."


@graded(4, 1, "empty input: no steps, no outcomes, goodput 0")
def test_empty_input(impl):
    _, _, s, _ = run(impl, [], **SMALL)
    got = (list(s.steps), dict(s.outcomes), list(s.shed), dict(s.rejected), s.goodput)
    assert same(got, ([], {}, [], {}, 0)), f"Called schedule_chunked([], ...). Returned {got}, expected ([], {{}}, [], {{}}, 0)."


@graded(4, 2, "a prompt far longer than the token budget is prefilled in chunks and served")
def test_long_prompt_is_chunked(impl):
    _, _, s, rep = run(impl, [("long", 0, 30, 2, 1000)], **SMALL)
    assert_clean(rep, "schedule_chunked(prompt of 30 tokens, token_budget 8)")
    assert rep.goodput == 1 and len(s.steps) >= 5, f"Called schedule_chunked(prompt 30, budget 8). Returned {len(s.steps)} steps, goodput {rep.goodput}; expected >= 5 steps (4 chunks, then a decode) and goodput 1."


@graded(4, 2, "decodes keep running while a long prompt is prefilled: each decode takes one token of the budget")
def test_decodes_share_the_budget(impl):
    rows = [("a", 0, 2, 6, 100), ("b", 0, 2, 6, 100), ("long", 1, 24, 1, 1000)]
    _, _, _, rep = run(impl, rows, **dict(SMALL, num_blocks=16))
    assert_clean(rep, "schedule_chunked(two decoding requests and a 24-token prompt, budget 8)")
    assert same(rep.goodput, 3), f"Called schedule_chunked(two decoders and a long prompt). Returned goodput {rep.goodput}, expected 3."


@graded(4, 1, "token_budget exactly max_running is valid")
def test_budget_equal_to_max_running(impl):
    rows = [("a", 0, 5, 2, 1000), ("b", 0, 3, 3, 1000)]
    _, _, _, rep = run(impl, rows, **dict(SMALL, token_budget=3))
    assert_clean(rep, "schedule_chunked(token_budget 3 = max_running)")
    assert same(rep.goodput, 2), f"Called schedule_chunked(token_budget == max_running). Returned goodput {rep.goodput}, expected 2."


@graded(4, 1, "zero output tokens: the prefill completes, the request finishes in that step")
def test_zero_output_tokens(impl):
    _, _, s, rep = run(impl, [("a", 0, 12, 0, 1000)], **SMALL)
    assert_clean(rep, "schedule_chunked(prompt 12, no output, budget 8)")
    o = s.outcomes.get("a")
    assert o is not None and o.first_token_time == o.finish_time, f"Called schedule_chunked(0 output tokens). Returned outcome {o}, expected first_token_time == finish_time."


@graded(4, 1, "a request larger than the cache is rejected as exceeds_cache (no endless loop)")
@pytest.mark.timeout(10)
def test_too_large_is_rejected(impl):
    _, _, s, rep = run(impl, [("big", 0, 30, 3, 10**6), ("a", 0, 2, 1, 100)], **SMALL)
    assert same(dict(s.rejected), {"big": "exceeds_cache"}), f"Called schedule_chunked(33 tokens, cache 32). Returned rejected {s.rejected}, expected {{'big': 'exceeds_cache'}}."
    assert_clean(rep, "schedule_chunked(one too-large request and a small one)")


# Cases where a prefill, once started, may fall behind its deadline. A shed request must not be
# running after the last step, and a step must run something: a request running alone can only be
# finished, or never started. Only validity is asserted (the policy is free).
LATE_PREFILL_CASES = [
    # 2 prompt tokens at 1 token per step: first token >= 4 + 2 * 4 = 12 > 4 + 5 = 9, never in time
    ([("a", 4, 2, 0, 5)], dict(num_blocks=6, block_size=3, max_running=1, prefill_cost=0,
                               decode_cost=4, token_budget=1)),
    # 3 prompt tokens at 2 per step: first token >= 1 + 2 * 3 + 3 * 1 = 10 > 1 + 8 = 9
    ([("a", 1, 3, 3, 8)], dict(num_blocks=8, block_size=4, max_running=1, prefill_cost=1,
                               decode_cost=3, token_budget=2)),
    # a arrives while b runs; a's first token is due at 2 + 21 = 23, with b decoding beside it
    ([("a", 2, 4, 0, 21), ("b", 1, 3, 2, 21)],
     dict(num_blocks=8, block_size=2, max_running=2, prefill_cost=2, decode_cost=4, token_budget=5)),
    # c starts with a partial chunk next to a decoding request that then finishes
    ([("a", 2, 5, 2, 29), ("b", 0, 12, 1, 26), ("c", 3, 3, 2, 28)],
     dict(num_blocks=10, block_size=4, max_running=2, prefill_cost=0, decode_cost=4, token_budget=3)),
    # x's prefill falls behind once y has finished: x is then running alone, and shedding it would
    # need a step that runs nothing
    ([("y", 0, 2, 2, 100), ("x", 1, 4, 1, 2)],
     dict(num_blocks=8, block_size=4, max_running=2, prefill_cost=0, decode_cost=1, token_budget=2)),
    # b's prefill falls behind while a still decodes beside it: b may be shed (preempted in a step
    # in which a runs) or finished late
    ([("a", 2, 2, 3, 5), ("b", 2, 4, 0, 8)],
     dict(num_blocks=9, block_size=2, max_running=2, prefill_cost=1, decode_cost=3, token_budget=4)),
    # a's 10-token prefill, 2 tokens a step beside b's decode, falls behind after b finishes
    ([("a", 3, 10, 4, 29), ("b", 3, 1, 3, 28)],
     dict(num_blocks=12, block_size=2, max_running=3, prefill_cost=2, decode_cost=2, token_budget=4)),
]


@graded(4, 2, "a prefill that cannot (or can no longer) make its deadline: the schedule stays valid, nothing shed is left running")
@pytest.mark.timeout(10)
@pytest.mark.parametrize("rows,config", LATE_PREFILL_CASES)
def test_late_prefill_schedule_stays_valid(impl, rows, config):
    _, _, _, rep = run(impl, rows, **config)
    assert_clean(rep, f"schedule_chunked({rows}, EngineConfig(**{config}))")


@graded(4, 1, "token_budget None or below max_running raises ValueError naming token_budget")
@pytest.mark.parametrize("budget", [None, 2, 0])
def test_invalid_token_budget(impl, budget):
    with pytest.raises(ValueError, match="token_budget"):
        run(impl, [("a", 0, 1, 1, 5)], **dict(SMALL, token_budget=budget))


@graded(4, 1, "ttft_deadline None raises ValueError naming ttft_deadline; other config fields are checked too")
def test_invalid_deadline_and_config(impl):
    with pytest.raises(ValueError, match="ttft_deadline"):
        run(impl, [("a", 0, 1, 1, None)], **SMALL)
    with pytest.raises(ValueError, match="decode_cost"):
        run(impl, [("a", 0, 1, 1, 5)], **dict(SMALL, decode_cost=0))


# --- invariants on the seeded traces -----------------------------------------------


INVARIANTS = [
    ("budget", 2, "no step computes more than token_budget tokens (decodes + prefill chunks)"),
    ("prefill", 2, "prefill chunks: only running requests in prefill, 1 <= chunk <= what is left"),
    ("arrival", 1, "no request is admitted before it arrives"),
    ("memory", 2, "memory never exceeded: the schedule replayed through the engine's block manager always fits"),
    ("max_running", 1, "never more than max_running requests running"),
    ("transitions", 1, "valid transitions: admit only waiting requests, preempt only running ones, no empty step"),
    ("cost", 1, "every step's end is start + decode_cost + prefill_cost * prompt tokens computed"),
    ("start", 1, "no idling while requests run"),
    ("coverage", 1, "every request that is not rejected is finished or shed, exactly once"),
    ("rejected", 1, "exactly the requests too large for the cache are rejected"),
    ("blocks_claim", 1, "the blocks_in_use reported for each step are the blocks the replay holds"),
    ("finished_claim", 1, "each step's finished list is what the replay finishes"),
    ("outcomes", 1, "outcomes match the replay (first token when the last chunk completes)"),
    ("goodput_claim", 1, "the reported goodput is the number of outcomes that met their SLO"),
]


globals().update(trace_tests(4, INVARIANTS))


@graded(4, 1, "tpot_percentiles of its own schedule agree with the replay's TPOTs (seeded traces)")
def test_traces_tpot_of_own_schedule(impl, runs):
    for seed in CHUNKED_SEEDS:
        requests, _, schedule = slo_case(runs, impl, LEVEL, seed)
        rep = slo_report(runs, impl, LEVEL, seed)
        if rep.first("outcomes"):
            pytest.fail(f"Called schedule_chunked(seeded trace {seed}). Its outcomes differ from the replay: {rep.first('outcomes')}.")
        got = as_tuple(impl.tpot_percentiles(requests, schedule))
        want = (len(rep.tpot),) + tuple(nearest_rank(rep.tpot, p) for p in (50, 90, 99))
        assert close_stats(got, want), f"Called tpot_percentiles(its schedule of seeded trace {seed}). Returned {got}, expected {want}."


# --- generated small cases ---------------------------------------------------------

case_strategy = st.tuples(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 20), st.integers(0, 6),
                       st.integers(0, 80)), max_size=8),
    st.integers(1, 8), st.integers(1, 4), st.integers(1, 3), st.integers(0, 2), st.integers(1, 3),
    st.integers(0, 5),
)


@graded(4, 3, "random small traces (tiny budgets and caches): the replay finds no broken rule and every claim matches")
@settings(max_examples=40)
@given(case=case_strategy)
@example(case=([(0, 3, 4, 10), (1, 14, 2, 30), (2, 2, 2, 12)], 8, 4, 3, 1, 2, 5))
@example(case=([(0, 20, 0, 0), (0, 1, 6, 60), (2, 12, 1, 20)], 5, 4, 1, 0, 1, 0))
@example(case=([(5, 4, 6, 9), (5, 4, 6, 9), (5, 4, 6, 60)], 4, 2, 3, 1, 2, 0))
def test_random_schedules_are_valid(impl, case):
    raw, nb, bs, mr, pc, dc, extra = case
    rows = [(f"r{i}", a, p, o, d) for i, (a, p, o, d) in enumerate(raw)]
    params = dict(num_blocks=nb, block_size=bs, max_running=mr, prefill_cost=pc, decode_cost=dc,
                  token_budget=mr + extra)
    _, _, _, rep = run(impl, rows, **params)
    assert_clean(rep, f"schedule_chunked({rows}, EngineConfig(**{params}))")


# --- goodput and TPOT against the reference --------------------------------------


def totals(mod, runs):
    """(valid on every trace?, first problem, goodput summed, P99 TPOT summed) over the traces."""
    goodput = p99 = 0
    for seed in CHUNKED_SEEDS:
        rep = slo_report(runs, mod, LEVEL, seed)
        if not rep.valid:
            return False, f"the schedule on seeded trace {seed} breaks a rule: {rep.first(*PHYSICS)}", 0, 0
        goodput += rep.goodput
        p99 += nearest_rank(rep.tpot, 99) if rep.tpot else math.inf
    return True, None, goodput, p99


def _goodput_test(threshold, points):
    @graded(4, points, f"goodput on seeded traces with long prompts >= {threshold}% of the reference policy's")
    def test(impl, reference, runs):
        ok, problem, ours, _ = totals(impl, runs)
        theirs, _ = baseline("goodput and P99 TPOT", lambda: totals(reference(), runs)[2:])
        assert ok, f"Called schedule_chunked on {len(CHUNKED_SEEDS)} seeded traces. Returned a schedule that {problem}."
        assert ours * 100 >= threshold * theirs, (
            f"Called schedule_chunked on {len(CHUNKED_SEEDS)} seeded traces. Returned goodput {ours} "
            f"({ours / theirs:.0%} of the reference's {theirs}), expected >= {threshold}%.")

    test.__name__ = f"test_goodput_at_least_{threshold}_percent"
    return test


def _tpot_test(threshold, points):
    @graded(4, points, f"P99 TPOT summed over seeded traces <= {threshold}% of the reference's (with goodput >= 75% of its)")
    def test(impl, reference, runs):
        ok, problem, goodput, ours = totals(impl, runs)
        ref_goodput, theirs = baseline("goodput and P99 TPOT", lambda: totals(reference(), runs)[2:])
        where = f"Called schedule_chunked on {len(CHUNKED_SEEDS)} seeded traces."
        assert ok, f"{where} Returned a schedule that {problem}."
        assert goodput * 100 >= 75 * ref_goodput, (
            f"{where} Returned goodput {goodput}, below 75% of the reference's {ref_goodput}: TPOT is not graded.")
        assert ours * 100 <= threshold * theirs, (
            f"{where} Returned P99 TPOTs summing to {ours:.1f} ({ours / theirs:.0%} of the "
            f"reference's {theirs:.1f}), expected <= {threshold}%.")

    test.__name__ = f"test_p99_tpot_within_{threshold}_percent"
    return test


for _threshold, _points in ((50, 2), (75, 2), (90, 2), (100, 2)):
    globals()[f"test_goodput_at_least_{_threshold}_percent"] = _goodput_test(_threshold, _points)
for _threshold, _points in ((200, 1), (150, 1), (125, 1), (100, 1)):
    globals()[f"test_p99_tpot_within_{_threshold}_percent"] = _tpot_test(_threshold, _points)
