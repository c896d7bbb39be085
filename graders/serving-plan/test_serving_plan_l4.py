"""Hidden suite of `serving-plan`, level 4: 99.9% of requests end to end under 2.5 s."""

from __future__ import annotations

from serving_plan_oracle import check_structure, judged_tests, plan_on

from kata.checks import check, graded

globals().update(judged_tests(4, structure={  # test_plan_constraints, _memory, _slo, _cost and these:
    "e2e_only_other_loads": (2, "with only an e2e limit (ttft_s and tpot_s None) plan still returns a valid plan for other loads",
        {f"{users} users": dict(users=users) for users in (300, 2000)}),
}))


@graded(4, 2, "plan honours a different GPU table: H200s only")
def test_plan_h200(impl):
    from kata.engine.hardware import HARDWARE

    h = HARDWARE["H200"]
    h200 = {"H200": {"memory_bytes": int(h.memory_bytes), "hbm_bandwidth": int(h.hbm_bandwidth),
                     "peak_flops": int(h.peak_flops), "price_per_hour": h.price_per_hour,
                     "gpu_link": h.gpu_link}}
    check_structure(impl, 4, "H200s only", hardware=h200)


@graded(4, 1, "plan is deterministic: the same inputs give the same plan")
def test_plan_deterministic(impl):
    first, _, _ = plan_on(impl, 4)
    second, _, _ = plan_on(impl, 4)
    names = ("hardware", "weight_bits", "tensor_parallel_size", "replicas", "max_num_seqs", "max_num_batched_tokens")
    check(tuple(getattr(second, n) for n in names), tuple(getattr(first, n) for n in names), "plan(level 4) twice")


@graded(4, 2, "plan leaves the dicts it is given unchanged: called twice on the same dicts, the same plan and the same dicts")
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
