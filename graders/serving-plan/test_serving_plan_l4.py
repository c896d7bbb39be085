"""Hidden suite of `serving-plan`, level 4: 99.9% of requests end to end under 2.5 s."""

from __future__ import annotations

import pytest
from serving_plan_oracle import expect_check, plan_on, structural_problems

from kata.checks import check

pytestmark = pytest.mark.level(4)


@pytest.mark.points(2)
@pytest.mark.edge("level 4 plan: valid fields, the level's model, H100, 16-bit weights")
def test_plan_constraints(impl, verdicts):
    expect_check(verdicts, 4, "plan")
    expect_check(verdicts, 4, "constraints")


@pytest.mark.points(2)
@pytest.mark.edge("level 4 plan fits memory, and its stated arithmetic equals the engine's exactly")
def test_plan_memory(impl, verdicts):
    expect_check(verdicts, 4, "memory fits")
    expect_check(verdicts, 4, "memory arithmetic")


@pytest.mark.points(6)
@pytest.mark.edge("level 4 plan holds p99.9 end-to-end latency <= 2.5 s in the engine (the tail, not the mean or p99)")
def test_plan_slo(impl, verdicts):
    expect_check(verdicts, 4, "SLO")


@pytest.mark.points(5)
@pytest.mark.edge("level 4 plan costs at most 1.3x the reference plan per million output tokens")
def test_plan_cost(impl, verdicts):
    expect_check(verdicts, 4, "cost")


@pytest.mark.points(2)
@pytest.mark.edge("with only an e2e limit (ttft_s and tpot_s None) plan still returns a valid plan for other loads")
def test_plan_e2e_only_other_loads(impl):
    for users in (300, 2000):
        plan, workload, constraints = plan_on(impl, 4, users=users)
        check(structural_problems(plan, workload, constraints), [], f"plan(level 4 with {users} users)")


@pytest.mark.points(2)
@pytest.mark.edge("plan honours a different GPU table: H200s only")
def test_plan_h200(impl):
    from kata.engine.hardware import HARDWARE

    h = HARDWARE["H200"]
    h200 = {"H200": {"memory_bytes": int(h.memory_bytes), "hbm_bandwidth": int(h.hbm_bandwidth),
                     "peak_flops": int(h.peak_flops), "price_per_hour": h.price_per_hour,
                     "gpu_link": h.gpu_link}}
    plan, workload, constraints = plan_on(impl, 4, hardware=h200)
    check(structural_problems(plan, workload, constraints), [], "plan(level 4 with H200s only)")


@pytest.mark.points(1)
@pytest.mark.edge("plan is deterministic: the same inputs give the same plan")
def test_plan_deterministic(impl):
    first, _, _ = plan_on(impl, 4)
    second, _, _ = plan_on(impl, 4)
    names = ("hardware", "weight_bits", "tensor_parallel_size", "replicas", "max_num_seqs", "max_num_batched_tokens")
    check(tuple(getattr(second, n) for n in names), tuple(getattr(first, n) for n in names), "plan(level 4) twice")


@pytest.mark.points(2)
@pytest.mark.edge("plan leaves the dicts it is given unchanged: called twice on the same dicts, the same plan and the same dicts")
def test_plan_leaves_inputs_unchanged(impl):
    import copy

    from kata.engine.design import LEVELS

    workload, constraints = LEVELS[4].workload(), LEVELS[4].constraints()
    before = copy.deepcopy((workload, constraints))
    names = ("hardware", "weight_bits", "tensor_parallel_size", "replicas", "max_num_seqs", "max_num_batched_tokens")
    first = impl.plan(workload, constraints)
    first = tuple(getattr(first, n, None) for n in names)
    second = impl.plan(workload, constraints)
    second = tuple(getattr(second, n, None) for n in names)
    check((second, workload, constraints), (first, *before),
          "plan(level 4) twice on the same workload and constraints dicts, then (the second plan, the workload, the constraints)")
