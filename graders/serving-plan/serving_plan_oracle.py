"""Shared helpers of the serving-plan hidden suite: model and GPU dicts, an independent oracle
for the memory arithmetic (plain integer arithmetic written from the prompt, not the reference),
the reference plans the cost check compares with, and the engine's verdicts on a learner's plan.

The engine is used through its public API only: kata.engine.design (LEVELS, judge, evaluate) and
kata.engine.serving (Deployment, memory_math), the same functions `kata engine plan` calls.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kata.checks import check, check_raises, graded
from kata.engine.design import LEVELS, evaluate, judge
from kata.engine.metrics import Slo
from kata.engine.serving import Deployment, memory_math

LLAMA_8B = LEVELS[1].workload()["model"]
LLAMA_70B = LEVELS[3].workload()["model"]
H100 = LEVELS[1].constraints()["hardware"]["H100"]
A10G = LEVELS[3].constraints()["hardware"]["A10G"]

# The reference plans, one per level, as the engine's Deployment (what the cost check prices).
_REF = dict(max_num_seqs=256, max_num_batched_tokens=2048, enable_chunked_prefill=True,
            block_size=16, preemption_mode="recompute", router="least-outstanding-tokens")
REFERENCE = {
    1: Deployment("llama-3-8b", "H100", 16, 2, 1, **dict(_REF, max_num_seqs=640)),
    2: Deployment("llama-3-8b", "H100", 16, 4, 1, **_REF),
    3: Deployment("llama-3-70b", "A10G", 8, 4, 1, **_REF),
    4: Deployment("llama-3-8b", "H100", 16, 8, 1, **_REF),
    "few users": Deployment("llama-3-8b", "H100", 16, 1, 1, **_REF),
    "prefill-heavy": Deployment("llama-3-8b", "H100", 16, 1, 7, **_REF),
}
# Other workloads a plan is judged on in full (the prompt states them): level 1 with 250 users,
# where one GPU is enough, and a prefill-heavy level 1, where compute, not KV, sets the count.
JUDGED = {
    **LEVELS,
    "few users": replace(LEVELS[1], users=250),
    "prefill-heavy": replace(LEVELS[1], think_time_s=5.0, prompt_median=2048, prompt_max=4096,
                             output_median=16, output_max=64, slo=Slo(99.0, ttft_s=2.5, tpot_s=0.06)),
}


def oracle(model: dict, gpu: dict, bits: int, tp: int, block: int, max_seq_len: int):
    """(weight_bytes, kv_bytes_per_token, kv_pool_blocks, max_concurrent_seqs), or None when
    not one sequence fits. Spelled out from the prompt's formulas, step by step."""
    weights = model["num_params"] * bits // 8
    if model["num_params"] * bits % 8:
        weights += 1
    per_token = 2 * model["num_layers"] * model["num_kv_heads"] * model["head_dim"] * 2
    usable = gpu["memory_bytes"] * tp * 9 // 10
    pool = (usable - weights) // (block * per_token)
    if pool < 0:
        pool = 0
    per_seq = max_seq_len // block + (1 if max_seq_len % block else 0)
    seqs = pool // per_seq
    return None if seqs < 1 else (weights, per_token, pool, seqs)


def fields_of(math) -> tuple:
    return tuple(getattr(math, f, None) for f in
                 ("weight_bytes", "kv_bytes_per_token", "kv_pool_blocks", "max_concurrent_seqs"))


def memory_call(model: dict, gpu: dict, bits, tp, block, max_seq_len) -> str:
    """A memory_math call as a failure message shows it."""
    return f"memory_math({show_model(model)}, {show_gpu(gpu)}, {bits!r}, {tp!r}, {block!r}, {max_seq_len!r})"


def memory_raises(impl, word: str, *args) -> None:
    """impl.memory_math(*args) raises ValueError naming `word` (see kata.checks.check_raises)."""
    __tracebackhide__ = True
    check_raises(lambda: impl.memory_math(*args), word, memory_call(*args))


def check_memory_math(impl, model: dict, gpu: dict, bits: int, tp: int, block: int, max_seq_len: int) -> None:
    """impl.memory_math on these arguments equals the oracle's four fields, or raises an error that
    names memory when not one sequence fits."""
    __tracebackhide__ = True
    want = oracle(model, gpu, bits, tp, block, max_seq_len)
    if want is None:
        memory_raises(impl, "memory", model, gpu, bits, tp, block, max_seq_len)
    else:
        got = fields_of(impl.memory_math(model, gpu, bits, tp, block, max_seq_len))
        check(got, want, memory_call(model, gpu, bits, tp, block, max_seq_len))


def show_model(model: dict) -> str:
    return model.get("name") or f"model(num_params={model['num_params']})"


def show_gpu(gpu: dict) -> str:
    return f"gpu(memory_bytes={gpu['memory_bytes']})"


class Verdicts:
    """The engine's Judgement of impl.plan on each level. Every test calls impl.plan itself (so a
    mutation run, which reruns only the tests that call the mutated function, reruns each of
    them); a simulation is reused only for the very same plan and stated memory."""

    def __init__(self, impl) -> None:
        self.impl, self._judged, self._reference = impl, {}, {}

    def reference(self, level: int):
        if level not in self._reference:
            self._reference[level] = evaluate(REFERENCE[level], JUDGED[level])
        return self._reference[level]

    def __getitem__(self, level: int):
        lv = JUDGED[level]
        plan = self.impl.plan(lv.workload(), lv.constraints())
        try:
            key = (level, Deployment.from_plan(plan), fields_of(getattr(plan, "memory", None)))
            hash(key)
        except Exception:  # noqa: BLE001 - not a valid plan: judged afresh, it stops before running
            key = None
        if key is None or key not in self._judged:
            judged = judge(plan, lv, reference_report=self.reference(level))
            if key is None:
                return judged
            self._judged[key] = judged
        return self._judged[key]


def expect_check(verdicts: Verdicts, level: int, *names: str) -> None:
    """Each named check of the level's judgement passed (and ran)."""
    __tracebackhide__ = True
    j = verdicts[level]
    where = f"level {level}" if isinstance(level, int) else f"the {level} workload"
    call = f"plan({where}), judged by the engine"
    for name in names:
        c = j.check(name)
        if c is None:
            failed = next((x for x in j.checks if not x.passed), None)
            why = f"{failed.name} failed: {failed.detail}" if failed else "no such check"
            pytest.fail(f"Called {call}. The {name} check did not run ({why}).", pytrace=False)
        assert c.passed, f"Called {call}. The {name} check failed: {c.detail}."


# the engine's checks behind each of a level's four judged tests
JUDGED_TESTS = {"constraints": ("plan", "constraints"), "memory": ("memory fits", "memory arithmetic"),
                "slo": ("SLO",), "cost": ("cost",)}


# each level's judged tests: (points, edge)
JUDGED_MARKS = {
    1: dict(
        constraints=(2, "level 1 plan: valid fields, the level's model, H100, 16-bit weights"),
        memory=(2, "level 1 plan fits memory, and its stated arithmetic equals the engine's exactly"),
        slo=(4, "level 1 plan holds p99 TTFT <= 0.5 s and TPOT <= 25 ms for 1,000 users in the engine"),
        cost=(3, "level 1 plan costs at most 1.3x the reference plan per million output tokens"),
    ),
    2: dict(
        constraints=(2, "level 2 plan: valid fields and constraints (chunked prefill, or a budget holding a whole 32,768-token request)"),
        memory=(2, "level 2 plan fits 32,768-token sequences, and its stated arithmetic equals the engine's exactly"),
        slo=(4, "level 2 plan holds p99 TTFT <= 4 s and TPOT <= 50 ms with 8k-32k prompts in the engine"),
        cost=(3, "level 2 plan costs at most 1.3x the reference plan per million output tokens"),
    ),
    3: dict(
        constraints=(2, "level 3 plan: valid fields, A10G only, weights at 8 or 16 bits (the quality floor)"),
        memory=(2, "level 3 plan fits the 70B model, and its stated arithmetic equals the engine's exactly"),
        slo=(4, "level 3 plan holds p99 TTFT <= 3 s and TPOT <= 150 ms on A10Gs over PCIe in the engine"),
        cost=(3, "level 3 plan costs at most 1.3x the reference plan per million output tokens"),
    ),
    4: dict(
        constraints=(2, "level 4 plan: valid fields, the level's model, H100, 16-bit weights"),
        memory=(2, "level 4 plan fits memory, and its stated arithmetic equals the engine's exactly"),
        slo=(6, "level 4 plan holds p99.9 end-to-end latency <= 2.5 s in the engine (the tail, not the mean or p99)"),
        cost=(5, "level 4 plan costs at most 1.3x the reference plan per million output tokens"),
    ),
}


def judged_tests(level: int, structure: dict | None = None) -> dict:
    """A level's tests for the test module's globals(): its four of the plan judged by the engine,
    test_plan_constraints, _memory, _slo and _cost, marked as JUDGED_MARKS says; and one
    test_plan_<name> for each entry of `structure`, {name: (points, edge, variants)}, that the plan
    keeps rules 1 and 2 on each variant of the level (see structure_test)."""
    def make(what, points, edge):
        @graded(level, points, edge)
        def test(impl, verdicts):
            expect_check(verdicts, level, *JUDGED_TESTS[what])
        return test
    tests = {f"test_plan_{what}": make(what, *JUDGED_MARKS[level][what]) for what in JUDGED_TESTS}
    for name, (points, edge, variants) in (structure or {}).items():
        tests[f"test_plan_{name}"] = structure_test(level, points, edge, variants)
    for name, test in tests.items():
        test.__name__ = test.__qualname__ = name
    return tests


def plan_on(impl, level: int, **changes):
    """impl.plan on a variant of a level: workload and constraint keys replaced."""
    lv = LEVELS[level]
    workload, constraints = lv.workload(), lv.constraints()
    for key, value in changes.items():
        (workload if key in workload else constraints)[key] = value
    return impl.plan(workload, constraints), workload, constraints


def check_structure(impl, level: int, what: str, **changes) -> None:
    """impl.plan on a variant of a level (see plan_on; `what` says which for the message) keeps rules
    1 and 2: valid fields, the constraints, memory that fits and the engine's exact arithmetic."""
    __tracebackhide__ = True
    plan, workload, constraints = plan_on(impl, level, **changes)
    check(structural_problems(plan, workload, constraints), [], f"plan(level {level} with {what})")


def structure_test(level: int, points: float, edge: str, variants: dict[str, dict]):
    """A graded test that impl.plan keeps rules 1 and 2 (check_structure) on each variant of a level:
    {what the message calls it: the workload and constraint keys it replaces}."""
    @graded(level, points, edge)
    def test(impl):
        for what, changes in variants.items():
            check_structure(impl, level, what, **changes)
    return test


def structural_problems(plan, workload: dict, constraints: dict) -> list[str]:
    """Rules 1 and 2 of the prompt on any workload: valid fields, the constraints, memory fits
    and the stated arithmetic equals the engine's. [] when the plan keeps them all."""
    try:
        dep = Deployment.from_plan(plan)
    except ValueError as e:
        return [f"invalid plan: {e}"]
    problems = []
    if dep.model != workload["model"]["name"]:
        problems.append(f"model {dep.model!r}")
    if dep.hardware not in constraints["hardware"]:
        problems.append(f"hardware {dep.hardware!r} not allowed")
    if dep.weight_bits < constraints["min_weight_bits"]:
        problems.append(f"weight_bits {dep.weight_bits} under the floor")
    max_seq_len = workload["prompt_tokens"]["max"] + workload["output_tokens"]["max"]
    try:
        exact = memory_math(dep, max_seq_len)
    except ValueError as e:
        return problems + [str(e)]
    stated = fields_of(getattr(plan, "memory", None))
    want = fields_of(exact)
    if not all(type(s) is int and s == w for s, w in zip(stated, want, strict=True)):
        problems.append(f"memory {stated} (the engine: {want})")
    return problems
