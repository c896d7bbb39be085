"""Hidden suite, level 3: admission under a time-to-first-token SLO (schedule_slo).

The policy is the candidate's: tests check the rules every valid schedule obeys, by replaying it
(token_batcher_replay.py, memory held by the engine's block manager), and grade goodput against
the reference policy on seeded traces.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from token_batcher_replay import PHYSICS, replay_schedule
from token_batcher_support import SLO_SEEDS, assert_clean, build, slo_report, trace_tests

from kata.checks import baseline, graded
from kata.strict import same

LEVEL = 3


def run(impl, rows, **config):
    requests = build(impl, rows)
    cfg = impl.EngineConfig(**config)
    schedule = impl.schedule_slo(requests, cfg)
    return requests, cfg, schedule, replay_schedule(requests, cfg, schedule, chunked=False)



SMALL = dict(num_blocks=8, block_size=4, max_running=2, prefill_cost=1, decode_cost=3)


# --- small cases -----------------------------------------------------------------


@graded(3, 2, "the prompt's worked example: a valid schedule with the best possible goodput (2)")
def test_prompt_example(impl):
    rows = [("a", 0, 5, 2, 10), ("b", 1, 6, 1, 20), ("c", 1, 2, 3, 5), ("d", 3, 9, 1, 10),
            ("e", 4, 20, 0, 50)]
    _, _, schedule, rep = run(impl, rows, num_blocks=4, block_size=4, max_running=3,
                              prefill_cost=1, decode_cost=2)
    assert_clean(rep, "schedule_slo(prompt example)")
    assert same(rep.goodput, 2), f"Called schedule_slo(prompt example). Returned a schedule with goodput {rep.goodput}, expected 2."


@graded(3, 1, "empty input: no steps, no outcomes, nothing shed or rejected, goodput 0")
def test_empty_input(impl):
    _, _, s, _ = run(impl, [], **SMALL)
    got = (list(s.steps), dict(s.outcomes), list(s.shed), dict(s.rejected), s.goodput)
    assert same(got, ([], {}, [], {}, 0)), f"Called schedule_slo([], ...). Returned {got}, expected ([], {{}}, [], {{}}, 0)."


@graded(3, 2, "one request with a loose deadline: served, and its outcome follows the cost model")
def test_single_request(impl):
    _, _, s, rep = run(impl, [("a", 5, 10, 4, 1000)], **SMALL)
    assert_clean(rep, "schedule_slo(one request)")
    assert same(rep.goodput, 1), f"Called schedule_slo(one request, deadline 1000). Returned goodput {rep.goodput}, expected 1."


@graded(3, 1, "a lone request that cannot make its deadline (decode_cost alone overruns it): shed or served late, the schedule stays valid")
@pytest.mark.timeout(10)
def test_lone_request_beyond_deadline(impl):
    # its first token comes at 3 + 4 + 1 * 2 = 9 at the earliest, after 3 + 3 = 6: goodput 0
    rows = [("a", 3, 1, 1, 3)]
    _, _, _, rep = run(impl, rows, num_blocks=11, block_size=4, max_running=3, prefill_cost=2, decode_cost=4)
    assert_clean(rep, f"schedule_slo({rows}, decode_cost 4, prefill_cost 2)")
    assert same(rep.goodput, 0), f"Called schedule_slo({rows}, decode_cost 4, prefill_cost 2). Returned goodput {rep.goodput}, expected 0 (the first token cannot come before 9 > 6)."


@graded(3, 2, "a first token exactly at arrival + ttft_deadline meets the SLO (<=)")
def test_deadline_met_with_equality(impl):
    # the only way: admit at 5, first token at 5 + 3 + 10 = 18 = 5 + 13
    _, _, s, rep = run(impl, [("a", 5, 10, 4, 13)], **SMALL)
    assert_clean(rep, "schedule_slo(a at 5, prompt 10, deadline 13)")
    got = s.outcomes.get("a")
    got = None if got is None else (got.first_token_time, got.finish_time, got.num_preemptions, got.met_slo)
    assert same(got, (18, 27, 0, True)), f"Called schedule_slo(a at 5, prompt 10, deadline 13, decode_cost 3). Returned outcome {got}, expected (18, 27, 0, True)."


@graded(3, 1, "a deadline no step can meet (0): the request is shed or finishes late; goodput 0, schedule valid")
def test_impossible_deadline(impl):
    _, _, _, rep = run(impl, [("a", 0, 2, 2, 0)], **SMALL)
    assert_clean(rep, "schedule_slo(deadline 0)")
    assert same(rep.goodput, 0), f"Called schedule_slo(deadline 0). Returned goodput {rep.goodput}, expected 0."


@graded(3, 2, "zero output tokens: first token time is when its prefill completes; it finishes in that step")
def test_zero_output_tokens(impl):
    _, _, s, rep = run(impl, [("a", 2, 6, 0, 100)], **SMALL)
    assert_clean(rep, "schedule_slo(a with 0 output tokens)")
    o = s.outcomes.get("a")
    got = None if o is None else (o.first_token_time == o.finish_time, o.met_slo)
    assert same(got, (True, True)), f"Called schedule_slo(a with 0 output tokens). Returned outcome {o}, expected first_token_time == finish_time and met_slo."


@graded(3, 2, "a request larger than the cache is rejected as exceeds_cache, not shed (and no endless loop)")
@pytest.mark.timeout(10)
def test_too_large_is_rejected(impl):
    _, _, s, rep = run(impl, [("big", 0, 40, 1, 10**6), ("a", 0, 2, 1, 100)], **SMALL)
    assert same(dict(s.rejected), {"big": "exceeds_cache"}), f"Called schedule_slo(a request of 41 tokens, cache 32). Returned rejected {s.rejected}, expected {{'big': 'exceeds_cache'}}."
    assert_clean(rep, "schedule_slo(one too-large request and a small one)")


@graded(3, 1, "a prompt that exactly fills the cache (no output) can be served")
def test_prompt_exactly_fills_cache(impl):
    _, _, _, rep = run(impl, [("a", 0, 32, 0, 1000)], **SMALL)
    assert_clean(rep, "schedule_slo(prompt of exactly 32 tokens, cache 32)")
    assert same(rep.goodput, 1), f"Called schedule_slo(prompt exactly filling the cache). Returned goodput {rep.goodput}, expected 1."


@graded(3, 1, "a prompt whose first token exactly fills the cache (31 + 1 = 32 slots) is served, its prefill whole")
@pytest.mark.timeout(10)
def test_prompt_and_first_token_exactly_fill_cache(impl):
    # ceil((31 + 1) / 4) = 8 = num_blocks: not rejected, and it fits only with the cache to itself
    _, _, _, rep = run(impl, [("a", 0, 31, 1, 1000)], **SMALL)
    assert_clean(rep, "schedule_slo(prompt 31, 1 output token, cache of 8 blocks of 4)")
    assert same(rep.goodput, 1), f"Called schedule_slo(prompt 31 + its first token exactly filling the cache, deadline 1000). Returned goodput {rep.goodput}, expected 1."


@graded(3, 2, "block_size 1, one block free: a 1-token prompt also needs a block for its first token, so it waits")
@pytest.mark.timeout(10)
def test_first_token_needs_its_block(impl):
    # a: 1 + 1 = 2 tokens = 2 of the 3 blocks. b: 1 + 1 = 2 blocks, only 1 is free while a runs;
    # admitting b next to a would hold 4 > 3 blocks. Serving a, then b, meets both deadlines.
    rows = [("a", 0, 1, 2, 100), ("b", 0, 1, 1, 100)]
    _, _, _, rep = run(impl, rows, num_blocks=3, block_size=1, max_running=2, prefill_cost=1,
                       decode_cost=1)
    assert_clean(rep, f"schedule_slo({rows}, 3 blocks of 1, max_running 2)")
    assert same(rep.goodput, 2), f"Called schedule_slo({rows}, 3 blocks of 1). Returned goodput {rep.goodput}, expected 2."


@graded(3, 2, "requests that cannot all fit at their peak: the schedule must preempt or wait, never exceed memory")
def test_memory_pressure_small(impl):
    rows = [("a", 0, 4, 12, 10**6), ("b", 0, 4, 12, 10**6), ("c", 1, 4, 12, 10**6)]
    # each ends at 16 tokens = 4 blocks; 8 blocks in all, 3 may run
    _, _, _, rep = run(impl, rows, **dict(SMALL, max_running=3))
    assert_clean(rep, "schedule_slo(three requests of 4 blocks each at the end, 8 blocks)")
    assert same(rep.goodput, 3), f"Called schedule_slo(three loose requests). Returned goodput {rep.goodput}, expected 3."


@graded(3, 2, "two requests that cannot run together: serving the tight deadline first serves both (goodput 2)")
def test_tight_deadline_first(impl):
    # each needs 3 of the 4 blocks; loose first would push tight's first token to 24 > 12
    rows = [("loose", 0, 10, 4, 1000), ("tight", 0, 10, 1, 12)]
    _, _, _, rep = run(impl, rows, num_blocks=4, block_size=4, max_running=2, prefill_cost=1,
                       decode_cost=2)
    assert_clean(rep, "schedule_slo(loose and tight requests that do not fit together)")
    assert same(rep.goodput, 2), f"Called schedule_slo(loose (deadline 1000) listed before tight (deadline 12), room for one at a time). Returned goodput {rep.goodput}, expected 2."


@graded(3, 1, "idle gap between arrivals: the schedule may wait; it stays valid and serves both")
def test_idle_gap(impl):
    _, _, _, rep = run(impl, [("a", 0, 2, 1, 50), ("b", 10**9, 2, 1, 50)], **SMALL)
    assert_clean(rep, "schedule_slo(arrivals at 0 and 10**9)")
    assert same(rep.goodput, 2), f"Called schedule_slo(two requests far apart). Returned goodput {rep.goodput}, expected 2."


@graded(3, 1, "equal arrival times, more than max_running: valid, and all are served with loose deadlines")
def test_equal_arrivals(impl):
    rows = [(f"r{i}", 3, 2, 2, 10**6) for i in range(5)]
    _, _, _, rep = run(impl, rows, **SMALL)
    assert_clean(rep, "schedule_slo(5 requests at the same time, max_running 2)")
    assert same(rep.goodput, 5), f"Called schedule_slo(5 loose requests). Returned goodput {rep.goodput}, expected 5."


# --- invalid input ---------------------------------------------------------------


@graded(3, 1, "ttft_deadline None or negative raises ValueError naming ttft_deadline")
@pytest.mark.parametrize("deadline", [None, -1])
def test_invalid_deadline(impl, deadline):
    with pytest.raises(ValueError, match="ttft_deadline"):
        run(impl, [("ok", 0, 1, 1, 5), ("a", 0, 2, 1, deadline)], **SMALL)


@graded(3, 1, "zero output tokens is valid: with an invalid ttft_deadline the ValueError names ttft_deadline, not output_tokens")
@pytest.mark.parametrize("deadline", [None, -1])
def test_invalid_deadline_with_zero_output(impl, deadline):
    rows = [("a", 0, 2, 0, deadline)]
    with pytest.raises(ValueError) as info:
        run(impl, rows, **SMALL)
    assert "ttft_deadline" in str(info.value), f"Called schedule_slo({rows}, ...). Raised ValueError({str(info.value)!r}), expected its message to name ttft_deadline (output_tokens 0 is valid)."


@graded(3, 1, "duplicate ids and invalid request fields raise ValueError naming the field")
@pytest.mark.parametrize("rows,field", [
    ([("a", 0, 1, 1, 5), ("a", 0, 1, 1, 5)], "id"),
    ([("a", 0, 0, 1, 5)], "prompt_tokens"),
    ([("a", 0, 1, -1, 5)], "output_tokens"),
    ([("a", -1, 1, 1, 5)], "arrival"),
])
def test_invalid_requests(impl, rows, field):
    with pytest.raises(ValueError, match=field):
        run(impl, rows, **SMALL)


@graded(3, 1, "config fields below their minimum raise ValueError naming the field")
@pytest.mark.parametrize("field,value", [
    ("num_blocks", 0), ("block_size", 0), ("max_running", 0), ("prefill_cost", -1), ("decode_cost", 0),
])
def test_invalid_config(impl, field, value):
    with pytest.raises(ValueError, match=field):
        run(impl, [("a", 0, 1, 1, 5)], **dict(SMALL, **{field: value}))


@graded(3, 1, "prefill_cost 0 is valid: steps then cost decode_cost only")
def test_prefill_cost_zero(impl):
    _, _, _, rep = run(impl, [("a", 0, 9, 3, 3), ("b", 0, 5, 2, 3)], **dict(SMALL, prefill_cost=0))
    assert_clean(rep, "schedule_slo(prefill_cost 0)")
    assert same(rep.goodput, 2), f"Called schedule_slo(prefill_cost 0, two requests with deadline 3). Returned goodput {rep.goodput}, expected 2."


# --- invariants on the seeded traces (one test per rule) --------------------------


INVARIANTS = [
    ("arrival", 2, "no request is admitted before it arrives"),
    ("memory", 3, "memory never exceeded: the schedule replayed through the engine's block manager always fits"),
    ("max_running", 1, "never more than max_running requests running"),
    ("transitions", 2, "valid transitions: admit only waiting requests, preempt only running ones, no empty step"),
    ("prefill", 1, "an admitted request computes its whole prefill in its admission step"),
    ("cost", 2, "every step's end is start + decode_cost + prefill_cost * prompt tokens computed"),
    ("start", 2, "no idling while requests run: a step starts exactly when the previous one ended"),
    ("coverage", 2, "every request that is not rejected is finished or shed, exactly once"),
    ("rejected", 1, "exactly the requests too large for the cache are rejected, as exceeds_cache"),
    ("blocks_claim", 2, "the blocks_in_use reported for each step are the blocks the replay holds"),
    ("finished_claim", 1, "each step's finished list is what the replay finishes"),
    ("outcomes", 2, "outcomes (first token, finish, preemptions, met_slo) match the replay"),
    ("goodput_claim", 1, "the reported goodput is the number of outcomes that met their SLO"),
]


globals().update(trace_tests(3, INVARIANTS))


# --- generated small cases: every rule at once -------------------------------------

case_strategy = st.tuples(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 12), st.integers(0, 6),
                       st.integers(0, 60)), max_size=8),
    st.integers(1, 8), st.integers(1, 4), st.integers(1, 3), st.integers(0, 2), st.integers(1, 3),
)


@graded(3, 3, "random small traces (tiny caches, zero costs, zero outputs): the replay finds no broken rule and every claim matches")
@settings(max_examples=40)
@given(case=case_strategy)
@example(case=([(0, 4, 3, 40), (0, 3, 4, 40), (1, 2, 2, 5)], 3, 4, 4, 1, 1))
@example(case=([(0, 8, 0, 0), (0, 1, 6, 60), (2, 12, 1, 20)], 2, 4, 1, 0, 1))
@example(case=([(5, 4, 6, 9), (5, 4, 6, 9), (5, 4, 6, 60)], 4, 2, 3, 1, 2))
def test_random_schedules_are_valid(impl, case):
    raw, nb, bs, mr, pc, dc = case
    rows = [(f"r{i}", a, p, o, d) for i, (a, p, o, d) in enumerate(raw)]
    params = dict(num_blocks=nb, block_size=bs, max_running=mr, prefill_cost=pc, decode_cost=dc)
    _, _, _, rep = run(impl, rows, **params)
    assert_clean(rep, f"schedule_slo({rows}, EngineConfig(**{params}))")


# --- goodput against the reference ------------------------------------------------


def goodput_ratio(impl, reference, runs):
    ours = theirs = 0
    for seed in SLO_SEEDS:
        rep = slo_report(runs, impl, LEVEL, seed)
        if not rep.valid:
            return None, f"the schedule on seeded trace {seed} breaks a rule: {rep.first(*PHYSICS)}"
        ours += rep.goodput
    theirs = baseline("goodput", lambda: sum(slo_report(runs, reference(), LEVEL, seed).goodput for seed in SLO_SEEDS))
    return ours / theirs, f"goodput {ours} over the traces, the reference's {theirs}"


def _goodput_test(threshold, points):
    @graded(3, points, f"goodput on seeded overload traces >= {threshold}% of the reference policy's")
    def test(impl, reference, runs):
        ratio, detail = goodput_ratio(impl, reference, runs)
        assert ratio is not None and ratio * 100 >= threshold, (
            f"Called schedule_slo on {len(SLO_SEEDS)} seeded traces. Returned {detail}"
            + ("" if ratio is None else f" ({ratio:.0%})") + f", expected >= {threshold}% of the reference's.")

    test.__name__ = f"test_goodput_at_least_{threshold}_percent"
    return test


for _threshold, _points in ((50, 2), (75, 2), (90, 2), (100, 2)):
    globals()[f"test_goodput_at_least_{_threshold}_percent"] = _goodput_test(_threshold, _points)
