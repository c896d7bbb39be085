"""Hidden suite, level 2: continuous batching on a paged KV cache (simulate_continuous)."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from token_batcher_oracle import oracle_continuous
from token_batcher_replay import replay_continuous
from token_batcher_support import build, bulk_requests, complexity_check

from kata.checks import graded
from kata.strict import same


def sim(impl, rows, num_blocks, block_size, max_running):
    return impl.simulate_continuous(build(impl, rows), num_blocks, block_size, max_running)


def stats(res):
    return {k: (v.admitted_step, v.first_token_step, v.finish_step, v.num_preemptions)
            for k, v in res.requests.items()}


def steps(res):
    return [(s.step, list(s.admitted), list(s.preempted), list(s.finished), s.blocks_in_use)
            for s in res.steps]


def call(rows, nb, bs, mr):
    return f"simulate_continuous({rows}, num_blocks={nb}, block_size={bs}, max_running={mr})"


def check(impl, rows, params, exp_stats=None, exp_steps=None, exp_rejected=None, exp_peak=None):
    res = sim(impl, rows, *params)
    where = call(rows, *params)
    if exp_stats is not None:
        got = stats(res)
        assert same(got, exp_stats), (
            f"Called {where}. Returned requests (admitted, first_token, finish, preemptions) "
            f"{got}, expected {exp_stats}.")
    if exp_steps is not None:
        got = steps(res)
        assert same(got, exp_steps), (
            f"Called {where}. Returned steps (step, admitted, preempted, finished, blocks) "
            f"{got}, expected {exp_steps}.")
    if exp_rejected is not None:
        assert same(dict(res.rejected), exp_rejected), (
            f"Called {where}. Returned rejected {res.rejected}, expected {exp_rejected}.")
    if exp_peak is not None:
        assert same(res.peak_blocks, exp_peak), (
            f"Called {where}. Returned peak_blocks {res.peak_blocks}, expected {exp_peak}.")
    return res


# --- the prompt and the simplest cases ---------------------------------------


@graded(2, 3, "the prompt's worked example (self-preemption, re-admission at the front)")
def test_prompt_example(impl):
    rows = [("a", 0, 4, 3), ("b", 0, 3, 4), ("z", 0, 12, 1), ("c", 1, 2, 2)]
    check(impl, rows, (3, 4, 4),
          {"a": (0, 0, 2, 0), "b": (0, 0, 5, 1), "c": (3, 3, 4, 0)},
          [(0, ["a", "b"], [], [], 3), (1, [], ["b"], [], 2), (2, [], [], ["a"], 2),
           (3, ["b", "c"], [], [], 3), (4, [], [], ["c"], 3), (5, [], [], ["b"], 2)],
          {"z": "exceeds_cache"}, 3)


@graded(2, 1, "empty input: no requests, no steps, peak 0")
def test_empty_input(impl):
    check(impl, [], (4, 4, 2), {}, [], {}, 0)


@graded(2, 1, "one request: admitted at its arrival step, one token per step until done")
def test_single_request(impl):
    check(impl, [("a", 2, 5, 3)], (4, 4, 2), {"a": (2, 2, 4, 0)},
          [(2, ["a"], [], [], 2), (3, [], [], [], 2), (4, [], [], ["a"], 2)], {}, 2)


@graded(2, 2, "zero output tokens: prefill only, admitted and finished in the same step")
def test_zero_output_tokens(impl):
    check(impl, [("a", 3, 8, 0), ("b", 3, 1, 0)], (3, 4, 4),
          {"a": (3, 3, 3, 0), "b": (3, 3, 3, 0)}, [(3, ["a", "b"], [], ["a", "b"], 3)], {}, 3)


# --- the cache's limits --------------------------------------------------------


@graded(2, 2, "a prompt that exactly fills the cache (and no output) is admitted: blocks_in_use == num_blocks")
def test_prompt_exactly_fills_cache(impl):
    check(impl, [("a", 0, 8, 0)], (2, 4, 1), {"a": (0, 0, 0, 0)},
          [(0, ["a"], [], ["a"], 2)], {}, 2)


@graded(2, 2, "a prompt filling the cache plus one output token needs one block too many: rejected")
@pytest.mark.timeout(10)
def test_prompt_filling_cache_with_output_rejected(impl):
    check(impl, [("a", 0, 8, 1), ("b", 0, 3, 1)], (2, 4, 1), {"b": (0, 0, 0, 0)},
          None, {"a": "exceeds_cache"}, 1)


@graded(2, 2, "a request larger than the whole cache is rejected and the rest still run (never an endless loop)")
@pytest.mark.timeout(10)
def test_request_larger_than_cache_rejected(impl):
    rows = [("small", 0, 2, 2), ("huge", 0, 500, 500), ("late", 1, 2, 1)]
    check(impl, rows, (4, 4, 2), {"small": (0, 0, 1, 0), "late": (1, 1, 1, 0)}, None,
          {"huge": "exceeds_cache"})


@graded(2, 1, "a request whose prompt + all its output exactly fill the cache is accepted and finishes")
@pytest.mark.timeout(10)
def test_lifetime_exactly_fills_cache(impl):
    check(impl, [("a", 0, 5, 3)], (2, 4, 1), {"a": (0, 0, 2, 0)},
          [(0, ["a"], [], [], 2), (1, [], [], [], 2), (2, [], [], ["a"], 2)], {}, 2)


@graded(2, 2, "a prompt of exactly k x block_size: its first token needs block k + 1 at admission")
def test_prompt_multiple_of_block_size_needs_extra_block(impl):
    # b needs ceil((8 + 1) / 4) = 3 blocks, not 2: it does not fit next to a at step 0
    check(impl, [("a", 0, 4, 1), ("b", 0, 8, 1)], (4, 4, 4),
          {"a": (0, 0, 0, 0), "b": (1, 1, 1, 0)},
          [(0, ["a"], [], ["a"], 2), (1, ["b"], [], ["b"], 3)])


@graded(2, 2, "growth: a request whose tokens fill its blocks exactly takes a new block for its next token")
def test_growth_takes_block_at_exact_multiple(impl):
    check(impl, [("a", 0, 3, 3)], (2, 4, 2), {"a": (0, 0, 2, 0)},
          [(0, ["a"], [], [], 1), (1, [], [], [], 2), (2, [], [], ["a"], 2)])


# --- preemption ------------------------------------------------------------------


@graded(2, 3, "no free block: the most recently admitted request is preempted, not the one needing the block")
def test_preempts_most_recently_admitted(impl):
    res = check(impl, [("a", 0, 1, 5), ("b", 0, 2, 5), ("c", 0, 1, 5)], (4, 2, 4),
                {"a": (0, 0, 4, 0), "b": (0, 0, 7, 1), "c": (0, 0, 11, 1)})
    got = steps(res)[1:3]
    assert same(got, [(1, [], ["c"], [], 4), (2, [], ["b"], [], 2)]), (
        f"Called {call([('a', 0, 1, 5), ('b', 0, 2, 5), ('c', 0, 1, 5)], 4, 2, 4)}. "
        f"Returned steps 1-2 {got}, expected c preempted at step 1 (a needs a block) and b preempting itself at step 2.")


@graded(2, 2, "the request needing the block is the most recently admitted: it preempts itself")
def test_self_preemption(impl):
    check(impl, [("a", 0, 4, 6), ("b", 0, 3, 3)], (3, 4, 4),
          {"a": (0, 0, 5, 0), "b": (0, 0, 7, 1)},
          [(0, ["a", "b"], [], [], 3), (1, [], ["b"], [], 2), (2, [], [], [], 2),
           (3, [], [], [], 2), (4, [], [], [], 3), (5, [], [], ["a"], 3),
           (6, ["b"], [], [], 2), (7, [], [], ["b"], 2)])


@graded(2, 3, "preemption in the step a request would have finished: it does not finish, it is re-admitted later")
def test_preempted_in_its_finishing_step(impl):
    check(impl, [("a", 0, 1, 3), ("b", 0, 1, 2)], (2, 2, 4),
          {"a": (0, 0, 2, 0), "b": (0, 0, 3, 1)},
          [(0, ["a", "b"], [], [], 2), (1, [], ["b"], [], 2), (2, [], [], ["a"], 2),
           (3, ["b"], [], ["b"], 2)])


@graded(2, 2, "a preempted request goes to the front of the queue, ahead of requests that were already waiting")
def test_preempted_goes_to_front(impl):
    check(impl, [("a", 0, 1, 3), ("b", 0, 1, 2), ("c", 1, 1, 1)], (2, 2, 4),
          {"a": (0, 0, 2, 0), "b": (0, 0, 3, 1), "c": (4, 4, 4, 0)},
          [(0, ["a", "b"], [], [], 2), (1, [], ["b"], [], 2), (2, [], [], ["a"], 2),
           (3, ["b"], [], ["b"], 2), (4, ["c"], [], ["c"], 1)])


@graded(2, 2, "two preempted in one step: the last preempted goes first, so they keep their admission order")
def test_two_victims_keep_admission_order(impl):
    res = check(impl, [("a", 0, 1, 5), ("b", 0, 1, 5), ("c", 0, 1, 5)], (3, 2, 4),
                {"a": (0, 0, 4, 0), "b": (0, 0, 8, 1), "c": (0, 0, 12, 1)})
    got = steps(res)[1]
    assert same(got, (1, [], ["c", "b"], [], 2)), (
        f"Called {call([('a', 0, 1, 5), ('b', 0, 1, 5), ('c', 0, 1, 5)], 3, 2, 4)}. "
        f"Returned step 1 {got}, expected (1, [], ['c', 'b'], [], 2).")


@graded(2, 2, "a request preempted twice reports num_preemptions 2: every preemption counts")
def test_preempted_twice_counts_both(impl):
    # 4 blocks of 2. Step 0: a (1 + 1 = 2 tokens, 1 block), b (2 tokens, 1 block), c (2 + 1 = 3
    # tokens, 2 blocks). Step 1: a's 2 tokens fill its block, none free: c (most recent) is
    # preempted; a takes a block and finishes, b takes the other. c needs ceil((2 + 1 + 1) / 2) = 2,
    # 0 free. Step 2: b grows to 4 tokens; c is re-admitted (2 blocks of the 2 a freed). Step 3: b's
    # 4 tokens fill its blocks, none free: c is preempted a second time; b finishes. c needs
    # ceil((2 + 2 + 1) / 2) = 3 blocks, 1 free. Step 4: c is re-admitted and finishes.
    rows = [("a", 0, 1, 2), ("b", 0, 1, 4), ("c", 0, 2, 3)]
    check(impl, rows, (4, 2, 4),
          {"a": (0, 0, 1, 0), "b": (0, 0, 3, 0), "c": (0, 0, 4, 2)},
          [(0, ["a", "b", "c"], [], [], 4), (1, [], ["c"], ["a"], 4), (2, ["c"], [], [], 4),
           (3, [], ["c"], ["b"], 3), (4, ["c"], [], ["c"], 3)])


@graded(2, 2, "re-admission recomputes prompt + generated tokens: ceil((prompt + generated + 1) / block_size) blocks")
def test_readmission_recomputes_generated_tokens(impl):
    res = sim(impl, [("a", 0, 4, 6), ("b", 0, 3, 3)], 3, 4, 4)
    got = [s for s in steps(res) if s[0] == 6]
    assert same(got, [(6, ["b"], [], [], 2)]), (
        f"Called {call([('a', 0, 4, 6), ('b', 0, 3, 3)], 3, 4, 4)}. Returned step 6 {got}, "
        f"expected b re-admitted with 3 + 1 + 1 = 5 tokens in 2 blocks: [(6, ['b'], [], [], 2)].")


# --- admission -------------------------------------------------------------------


@graded(2, 2, "strict FCFS: a head that does not fit blocks smaller requests behind it")
def test_head_of_line_blocking(impl):
    check(impl, [("a", 0, 6, 4), ("big", 1, 9, 1), ("small", 1, 1, 1)], (4, 4, 4),
          {"a": (0, 0, 3, 0), "big": (4, 4, 4, 0), "small": (4, 4, 4, 0)})


@graded(2, 2, "max_running caps admission even when blocks are free")
def test_max_running_caps_admission(impl):
    check(impl, [("a", 0, 1, 2), ("b", 0, 1, 2), ("c", 0, 1, 2)], (10, 4, 2),
          {"a": (0, 0, 1, 0), "b": (0, 0, 1, 0), "c": (2, 2, 3, 0)},
          [(0, ["a", "b"], [], [], 2), (1, [], [], ["a", "b"], 2), (2, ["c"], [], [], 1),
           (3, [], [], ["c"], 1)])


@graded(2, 1, "max_running 1: requests run one after another")
def test_max_running_one(impl):
    check(impl, [("a", 0, 2, 2), ("b", 0, 2, 1)], (10, 4, 1),
          {"a": (0, 0, 1, 0), "b": (2, 2, 2, 0)})


@graded(2, 2, "blocks freed by a finishing request become free at the end of the step, for the next step")
def test_finished_blocks_free_for_next_step(impl):
    check(impl, [("a", 0, 4, 1), ("b", 0, 4, 1)], (2, 4, 4),
          {"a": (0, 0, 0, 0), "b": (1, 1, 1, 0)},
          [(0, ["a"], [], ["a"], 2), (1, ["b"], [], ["b"], 2)])


@graded(2, 1, "a request is never admitted before its arrival step, even with the cache empty")
def test_not_admitted_before_arrival(impl):
    check(impl, [("a", 0, 1, 1), ("b", 3, 1, 1)], (8, 4, 4),
          {"a": (0, 0, 0, 0), "b": (3, 3, 3, 0)}, [(0, ["a"], [], ["a"], 1), (3, ["b"], [], ["b"], 1)])


@graded(2, 2, "equal arrival steps and unsorted input: arrival order, ties by input position")
def test_equal_arrivals_keep_input_order(impl):
    check(impl, [("late", 2, 1, 1), ("y", 0, 1, 2), ("x", 0, 1, 2)], (8, 4, 1),
          {"y": (0, 0, 1, 0), "x": (2, 2, 3, 0), "late": (4, 4, 4, 0)})


@graded(2, 1, "idle gaps between arrivals produce no step records")
def test_idle_gap_has_no_records(impl):
    check(impl, [("a", 0, 2, 1), ("b", 10, 2, 2)], (4, 4, 2), None,
          [(0, ["a"], [], ["a"], 1), (10, ["b"], [], [], 1), (11, [], [], ["b"], 1)])


@graded(2, 2, "a huge idle gap (arrival 10^12) is jumped over, not stepped through")
@pytest.mark.timeout(10)
def test_huge_idle_gap_is_jumped(impl):
    check(impl, [("a", 0, 2, 1), ("b", 10**12, 2, 1)], (4, 4, 2),
          {"a": (0, 0, 0, 0), "b": (10**12, 10**12, 10**12, 0)})


# --- invalid input ---------------------------------------------------------------


@graded(2, 1, "duplicate ids raise ValueError naming id")
def test_duplicate_ids(impl):
    with pytest.raises(ValueError, match="id"):
        sim(impl, [("a", 0, 1, 1), ("a", 1, 1, 1)], 4, 4, 2)


@graded(2, 1, "invalid request fields raise ValueError naming the field")
@pytest.mark.parametrize("row,field", [
    (("a", 0, 0, 1), "prompt_tokens"), (("a", 0, 2, -1), "output_tokens"), (("a", -2, 2, 1), "arrival"),
])
def test_invalid_request_fields(impl, row, field):
    with pytest.raises(ValueError, match=field):
        sim(impl, [("ok", 0, 1, 1), row], 4, 4, 2)


@graded(2, 1, "num_blocks, block_size or max_running < 1 raise ValueError naming the parameter")
@pytest.mark.parametrize("params,field", [
    ((0, 4, 2), "num_blocks"), ((4, 0, 2), "block_size"), ((4, 4, 0), "max_running"),
    ((-1, 4, 2), "num_blocks"),
])
def test_invalid_parameters(impl, params, field):
    with pytest.raises(ValueError, match=field):
        sim(impl, [("a", 0, 1, 1)], *params)


# --- against the oracle, and replayed through the engine's block manager ----------

rows_strategy = st.lists(
    st.tuples(st.integers(0, 8), st.integers(1, 12), st.integers(0, 6)), max_size=10
).map(lambda xs: [(f"r{i}", a, p, o) for i, (a, p, o) in enumerate(xs)])


@graded(2, 5, "random traces match an independent slow oracle (every request's stats, every step record, peak) and replay through the engine's block manager")
@settings(max_examples=80)
@given(rows=rows_strategy, nb=st.integers(1, 8), bs=st.integers(1, 4), mr=st.integers(1, 4))
@example(rows=[("r0", 0, 4, 3), ("r1", 0, 3, 4), ("r2", 1, 2, 2)], nb=3, bs=4, mr=4)
@example(rows=[("r0", 0, 1, 5), ("r1", 0, 1, 5), ("r2", 0, 1, 5)], nb=3, bs=2, mr=4)
@example(rows=[("r0", 0, 1, 3), ("r1", 0, 1, 2), ("r2", 1, 1, 1)], nb=2, bs=2, mr=4)
@example(rows=[("r0", 0, 6, 4), ("r1", 1, 9, 1), ("r2", 1, 1, 1)], nb=4, bs=4, mr=4)
@example(rows=[("r0", 0, 4, 6), ("r1", 0, 3, 3)], nb=3, bs=4, mr=4)
@example(rows=[("r0", 0, 2, 0), ("r1", 0, 8, 1), ("r2", 0, 1, 6)], nb=2, bs=4, mr=2)
def test_matches_oracle(impl, rows, nb, bs, mr):
    requests = build(impl, rows)
    exp_stats, exp_rejected, exp_steps, exp_peak = oracle_continuous(requests, nb, bs, mr)
    res = check(impl, rows, (nb, bs, mr), exp_stats, exp_steps, exp_rejected, exp_peak)
    problem = replay_continuous(requests, nb, bs, mr, res).first("memory", "blocks_claim")
    assert problem is None, f"Called {call(rows, nb, bs, mr)}. Replayed through the engine's block manager: {problem}."


def _pressure_trace(seed):
    rng = random.Random(seed)
    return [(f"r{i}", rng.randint(0, 30), rng.randint(1, 40), rng.randint(0, 25)) for i in range(60)]


@graded(2, 3, "the step records replayed through the engine's block manager: claimed blocks are the blocks held, never over the cache")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replay_through_block_manager(impl, seed):
    rows = _pressure_trace(seed)
    requests = build(impl, rows)
    res = impl.simulate_continuous(requests, 24, 4, 8)
    rep = replay_continuous(requests, 24, 4, 8, res)
    problem = rep.first("memory", "blocks_claim", "transitions", "arrival", "max_running",
                        "finished_claim", "coverage", "start")
    assert problem is None, f"Called simulate_continuous(seeded trace {seed}, 24 blocks of 4, max_running=8). The replay found: {problem}."
    assert same(res.peak_blocks, rep.peak_blocks), (
        f"Called simulate_continuous(seeded trace {seed}). Returned peak_blocks {res.peak_blocks}, the replay's peak is {rep.peak_blocks}.")


# --- complexity ------------------------------------------------------------------


@pytest.mark.complexity
@graded(2, 3, "100,000 requests: within 10x of the reference's time (catches scanning every request each step)")
@pytest.mark.timeout(90)
def test_complexity(impl, reference, runs):
    def caller(mod):
        requests = bulk_requests(runs, mod)
        return lambda n: mod.simulate_continuous(requests[:n], 96, 16, 32)

    complexity_check("simulate_continuous", lambda: caller(reference()), caller(impl), (25_000, 100_000),
                     answer=lambda r: [len(r.steps), r.peak_blocks], what="the number of steps and the peak blocks")
