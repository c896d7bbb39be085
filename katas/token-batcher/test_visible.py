"""Visible tests for token-batcher: the prompt's examples and a few more.

Run them with `kata check token-batcher`. The hidden suite checks many more cases, and at levels 3
and 4 replays your whole schedule under the rules of PROMPT.md.
"""

import math

import pytest


def batches_of(plan):
    return [(b.request_ids, b.dispatch_time, b.reason, b.padded_tokens, b.useful_tokens)
            for b in plan.batches]


# --- level 1 ------------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_example_level1(impl):
    R = impl.Request
    plan = impl.plan_batches(
        [R("a", 0, 2, 1), R("b", 1, 4, 1), R("c", 2, 1, 0), R("x", 3, 50, 0),
         R("d", 9, 3, 3), R("e", 10, 7, 2), R("f", 16, 1, 1)],
        max_batch_size=3, max_batch_tokens=16, window=5,
    )
    expected = [
        (["a", "b", "c"], 2, "full", 15, 9),
        (["d"], 10, "budget", 6, 6),
        (["e"], 15, "window", 9, 9),
        (["f"], 21, "window", 2, 2),
    ]
    assert batches_of(plan) == expected, f"Called plan_batches(prompt example). Returned {batches_of(plan)}, expected {expected}."
    assert plan.rejected == {"x": "exceeds_batch_tokens"}
    assert plan.padding_waste == 6


@pytest.mark.level(1)
def test_window_includes_its_end(impl):
    R = impl.Request
    plan = impl.plan_batches([R("a", 0, 1, 1), R("b", 5, 1, 1)], 8, 100, 5)
    got = batches_of(plan)
    assert got == [(["a", "b"], 5, "window", 4, 4)], f"Called plan_batches(b arrives exactly at t0 + window). Returned {got}, expected one batch [a, b]."


@pytest.mark.level(1)
def test_empty_and_invalid_input(impl):
    plan = impl.plan_batches([], 4, 10, 3)
    assert (plan.batches, plan.rejected, plan.padding_waste) == ([], {}, 0)
    R = impl.Request
    with pytest.raises(ValueError, match="prompt_tokens"):
        impl.plan_batches([R("a", 0, 0, 1)], 4, 10, 3)
    with pytest.raises(ValueError, match="id"):
        impl.plan_batches([R("a", 0, 1, 1), R("a", 1, 1, 1)], 4, 10, 3)


# --- level 2 ------------------------------------------------------------------


@pytest.mark.level(2)
def test_prompt_example_level2(impl):
    R = impl.Request
    res = impl.simulate_continuous(
        [R("a", 0, 4, 3), R("b", 0, 3, 4), R("z", 0, 12, 1), R("c", 1, 2, 2)],
        num_blocks=3, block_size=4, max_running=4,
    )
    assert res.rejected == {"z": "exceeds_cache"}
    stats = {k: (v.admitted_step, v.first_token_step, v.finish_step, v.num_preemptions)
             for k, v in res.requests.items()}
    expected = {"a": (0, 0, 2, 0), "b": (0, 0, 5, 1), "c": (3, 3, 4, 0)}
    assert stats == expected, f"Called simulate_continuous(prompt example). Returned {stats}, expected {expected}."
    steps = [(s.step, s.admitted, s.preempted, s.finished, s.blocks_in_use) for s in res.steps]
    assert steps == [
        (0, ["a", "b"], [], [], 3),
        (1, [], ["b"], [], 2),
        (2, [], [], ["a"], 2),
        (3, ["b", "c"], [], [], 3),
        (4, [], [], ["c"], 3),
        (5, [], [], ["b"], 2),
    ], f"Returned steps {steps}."
    assert res.peak_blocks == 3


@pytest.mark.level(2)
def test_idle_gap_has_no_step_records(impl):
    R = impl.Request
    res = impl.simulate_continuous([R("a", 0, 2, 1), R("b", 10, 2, 2)], 4, 4, 2)
    got = [s.step for s in res.steps]
    assert got == [0, 10, 11], f"Called simulate_continuous(a at 0, b at 10). Returned steps {got}, expected [0, 10, 11]."


@pytest.mark.level(2)
def test_zero_output_tokens_finishes_in_its_admission_step(impl):
    R = impl.Request
    res = impl.simulate_continuous([R("a", 3, 8, 0)], 2, 4, 1)
    s = res.requests["a"]
    got = (s.admitted_step, s.first_token_step, s.finish_step, s.num_preemptions)
    assert got == (3, 3, 3, 0), f"Called simulate_continuous(a with 8 prompt tokens, 0 output, 2 blocks of 4). Returned {got}, expected (3, 3, 3, 0)."
    assert res.peak_blocks == 2


# --- level 3 ------------------------------------------------------------------


def check_basic_schedule(impl, requests, config, schedule):
    """A few of the rules the hidden suite replays in full."""
    ids = {r.id for r in requests}
    finished = set(schedule.outcomes)
    shed = set(schedule.shed)
    assert not finished & shed, f"Requests both finished and shed: {sorted(finished & shed)}."
    assert finished | shed | set(schedule.rejected) == ids, "Every request must be finished, shed or rejected."
    for k, st in enumerate(schedule.steps):
        cost = config.decode_cost + config.prefill_cost * sum(st.prefill.values())
        assert st.end == st.start + cost, f"Step {k}: end {st.end}, expected start + cost = {st.start + cost}."
        assert st.blocks_in_use <= config.num_blocks, f"Step {k}: {st.blocks_in_use} blocks in use."
        if k:
            assert st.start >= schedule.steps[k - 1].end, f"Step {k} starts before step {k - 1} ends."
    met = sum(1 for o in schedule.outcomes.values() if o.met_slo)
    assert schedule.goodput == met, f"goodput {schedule.goodput}, but {met} outcomes met their SLO."


@pytest.mark.level(3)
def test_prompt_example_level3(impl):
    R = impl.Request
    config = impl.EngineConfig(num_blocks=4, block_size=4, max_running=3, prefill_cost=1, decode_cost=2)
    requests = [R("a", 0, 5, 2, 10), R("b", 1, 6, 1, 20), R("c", 1, 2, 3, 5),
                R("d", 3, 9, 1, 10), R("e", 4, 20, 0, 50)]
    schedule = impl.schedule_slo(requests, config)
    assert schedule.rejected == {"e": "exceeds_cache"}
    check_basic_schedule(impl, requests, config, schedule)
    assert schedule.goodput == 2, f"Called schedule_slo(prompt example). Returned goodput {schedule.goodput}, expected 2 (the best possible here)."


@pytest.mark.level(3)
def test_single_request_is_served_in_time(impl):
    R = impl.Request
    config = impl.EngineConfig(num_blocks=8, block_size=4, max_running=2, prefill_cost=1, decode_cost=3)
    requests = [R("a", 5, 10, 4, 13)]
    schedule = impl.schedule_slo(requests, config)
    check_basic_schedule(impl, requests, config, schedule)
    o = schedule.outcomes.get("a")
    got = None if o is None else (o.first_token_time, o.finish_time, o.num_preemptions, o.met_slo)
    # admitted at 5: 5 + 3 + 10 = 18 = 5 + 13, then 3 decode steps of 3
    assert got == (18, 27, 0, True), f"Called schedule_slo(one request). Returned outcome {got}, expected (18, 27, 0, True)."


@pytest.mark.level(3)
def test_missing_deadline_is_rejected(impl):
    R = impl.Request
    config = impl.EngineConfig(num_blocks=8, block_size=4, max_running=2, prefill_cost=1, decode_cost=3)
    with pytest.raises(ValueError, match="ttft_deadline"):
        impl.schedule_slo([R("a", 0, 3, 1)], config)
    with pytest.raises(ValueError, match="decode_cost"):
        impl.schedule_slo([R("a", 0, 3, 1, 10)], impl.EngineConfig(8, 4, 2, 1, 0))


# --- level 4 ------------------------------------------------------------------


@pytest.mark.level(4)
def test_prompt_example_tpot(impl):
    R = impl.Request
    requests = [R("a", 0, 3, 4, 10), R("b", 1, 14, 2, 30), R("c", 2, 2, 2, 12)]
    schedule = impl.Schedule(
        steps=[],
        outcomes={"a": impl.Outcome(5, 27, 0, True), "b": impl.Outcome(27, 29, 0, True),
                  "c": impl.Outcome(14, 22, 0, True)},
        shed=[], rejected={}, goodput=3,
    )
    got = impl.tpot_percentiles(requests, schedule)
    assert got.count == 3 and math.isclose(got.p50, 22 / 3) and got.p90 == 8.0 and got.p99 == 8.0, (
        f"Called tpot_percentiles(prompt example). Returned {got}, expected TPOTStats(3, 7.333.., 8.0, 8.0).")


def check_token_budget(requests, config, schedule):
    """The budget rule: (decoding requests) + sum(prefill.values()) <= token_budget in every step."""
    by_id = {r.id: r for r in requests}
    todo, generated = {}, {r.id: 0 for r in requests}  # running id -> prefill tokens still to compute
    for k, st in enumerate(schedule.steps):
        for rid in st.preempted:
            todo.pop(rid, None)
        for rid in st.admitted:
            todo[rid] = by_id[rid].prompt_tokens + generated[rid]
        decoding = [rid for rid, left in todo.items() if left == 0]
        used = len(decoding) + sum(st.prefill.values())
        assert used <= config.token_budget, (
            f"Step {k} computes {len(decoding)} decode token(s) and {sum(st.prefill.values())} prefill "
            f"token(s): {used}, over token_budget {config.token_budget}.")
        for rid in decoding:
            generated[rid] += 1
        for rid, chunk in st.prefill.items():
            todo[rid] -= chunk
            if todo[rid] == 0 and generated[rid] < by_id[rid].output_tokens:
                generated[rid] += 1  # a completed prefill produces a token
        for rid in st.finished:
            todo.pop(rid, None)


@pytest.mark.level(4)
def test_prompt_example_level4(impl):
    R = impl.Request
    config = impl.EngineConfig(num_blocks=8, block_size=4, max_running=3, prefill_cost=1,
                               decode_cost=2, token_budget=8)
    requests = [R("a", 0, 3, 4, 10), R("b", 1, 14, 2, 30), R("c", 2, 2, 2, 12)]
    schedule = impl.schedule_chunked(requests, config)
    check_basic_schedule(impl, requests, config, schedule)
    check_token_budget(requests, config, schedule)
    assert schedule.goodput == 3, f"Called schedule_chunked(prompt example). Returned goodput {schedule.goodput}, expected 3."


@pytest.mark.level(4)
def test_token_budget_is_required(impl):
    R = impl.Request
    with pytest.raises(ValueError, match="token_budget"):
        impl.schedule_chunked([R("a", 0, 3, 1, 10)], impl.EngineConfig(8, 4, 2, 1, 2))
    with pytest.raises(ValueError, match="token_budget"):
        impl.schedule_chunked([R("a", 0, 3, 1, 10)], impl.EngineConfig(8, 4, 4, 1, 2, token_budget=3))
