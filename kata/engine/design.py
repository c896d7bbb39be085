"""The system-design round's four levels, and the one function that judges a plan on them.

Each level is a closed-loop workload (N users, each sending a request, waiting for the answer,
thinking, sending the next), the hardware allowed, a weight-precision floor (the quality
constraint), an SLO held at a percentile, and how far above the reference plan's cost a plan may
go. `judge(plan, level, reference)` runs the plan and the reference plan on the level's trace
(kata/engine/serving.py: memory exactly as the engine allocates it, the replicas simulated
together) and returns every check with its figures. The serving-plan kata's grader and
`kata engine plan` both call it, so the learner sees the verdict the grader reaches.

    j = judge(my_plan, 1, reference_plan)
    [(c.name, c.passed) for c in j.checks]
        -> [('plan', True), ('constraints', True), ('memory fits', True),
            ('memory arithmetic', True), ('SLO', True), ('cost', True)]

A plan that breaks the level's constraints, or does not fit, is not run: its later checks are
absent, and `Judgement.passed` is False.

What it leaves out: the learner's quality judgement beyond the precision floor, and prices that
change with commitment (every GPU-hour costs the table's price).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypedDict

from kata.engine.cluster import ClusterResult
from kata.engine.config import MODEL_PRESETS
from kata.engine.hardware import HARDWARE
from kata.engine.metrics import Slo
from kata.engine.serving import (Deployment, MemoryMath, cost_per_million_output_tokens,
                                 memory_math, simulate)
from kata.engine.workloads import ClosedLoop, make_closed_loop


@dataclass(slots=True, frozen=True)
class DesignLevel:
    level: int
    title: str
    model: str  # a MODEL_PRESETS name
    hardware: tuple[str, ...]  # GPUs the plan may use
    min_weight_bits: int  # the quality floor: weights at no fewer bits
    users: int
    requests_per_user: int
    think_time_s: float
    prompt_median: int
    prompt_max: int
    output_median: int
    output_max: int
    slo: Slo
    cost_factor: float  # a plan may cost at most this times the reference plan
    seed: int = 0

    @property
    def max_seq_len(self) -> int:
        """The longest request the workload can send: prompt_max + output_max tokens."""
        return self.prompt_max + self.output_max

    def closed_loop(self) -> ClosedLoop:
        return make_closed_loop(self.users, self.requests_per_user,
                                think_time_s=self.think_time_s, prompt_median=self.prompt_median,
                                prompt_max=self.prompt_max, output_median=self.output_median,
                                output_max=self.output_max, seed=self.seed)

    def workload(self) -> dict:
        """What a plan function receives as its workload: plain data, no engine types."""
        m = MODEL_PRESETS[self.model]
        return {"model": {"name": self.model, "num_params": m.num_params,
                          "num_layers": m.num_layers, "num_heads": m.num_heads,
                          "num_kv_heads": m.num_kv_heads, "head_dim": m.head_dim,
                          "hidden_size": m.hidden_size},
                "users": self.users, "requests_per_user": self.requests_per_user,
                "think_time_s": self.think_time_s,
                "prompt_tokens": {"median": self.prompt_median, "max": self.prompt_max},
                "output_tokens": {"median": self.output_median, "max": self.output_max},
                "seed": self.seed}

    def constraints(self) -> dict:
        """What a plan function receives as its constraints: plain data, no engine types."""
        gpus = {name: {"memory_bytes": int(h.memory_bytes), "hbm_bandwidth": int(h.hbm_bandwidth),
                       "peak_flops": int(h.peak_flops), "price_per_hour": h.price_per_hour,
                       "gpu_link": h.gpu_link}
                for name, h in HARDWARE.items() if name in self.hardware}
        s = self.slo
        return {"hardware": gpus, "min_weight_bits": self.min_weight_bits,
                "slo": {"percentile": s.percentile, "ttft_s": s.ttft_s, "tpot_s": s.tpot_s,
                        "e2e_s": s.e2e_s},
                "cost_factor": self.cost_factor}


class _Workload(TypedDict):
    users: int
    requests_per_user: int
    think_time_s: float
    prompt_median: int
    prompt_max: int
    output_median: int
    output_max: int


_CHAT = _Workload(users=1000, requests_per_user=2, think_time_s=10.0, prompt_median=512,
                  prompt_max=2048, output_median=256, output_max=512)

LEVELS: dict[int, DesignLevel] = {
    1: DesignLevel(1, "1,000 chat users on H100s", "llama-3-8b", ("H100",), 16, **_CHAT,
                   slo=Slo(99.0, ttft_s=0.5, tpot_s=0.025), cost_factor=1.3),
    2: DesignLevel(2, "32k-token contexts", "llama-3-8b", ("H100",), 16, users=400,
                   requests_per_user=2, think_time_s=30.0, prompt_median=8192, prompt_max=32256,
                   output_median=256, output_max=512,
                   slo=Slo(99.0, ttft_s=4.0, tpot_s=0.05), cost_factor=1.3),
    3: DesignLevel(3, "A 70B model on A10Gs only", "llama-3-70b", ("A10G",), 8, users=40,
                   requests_per_user=2, think_time_s=20.0, prompt_median=256, prompt_max=1024,
                   output_median=128, output_max=512,
                   slo=Slo(99.0, ttft_s=3.0, tpot_s=0.15), cost_factor=1.3),
    4: DesignLevel(4, "99.9% of requests under 2.5 s", "llama-3-8b", ("H100",), 16, **_CHAT,
                   slo=Slo(99.9, e2e_s=2.5), cost_factor=1.3),
}


# The other workloads the kata's prompt names, on which a plan is also judged in full: their
# shapes, by name (`kata engine plan FILE --workload NAME`).
WORKLOADS: dict[str, DesignLevel] = {
    "few-users": replace(LEVELS[1], title="250 chat users on H100s (level 1's shape)", users=250),
    "prefill-heavy": replace(LEVELS[1], title="long prompts, short answers on H100s",
                             think_time_s=5.0, prompt_median=2048, prompt_max=4096,
                             output_median=16, output_max=64, slo=Slo(99.0, ttft_s=2.5, tpot_s=0.06)),
}


# --- judging ---------------------------------------------------------------------------------


@dataclass(slots=True)
class PlanReport:
    """One plan run on a level: its memory, the run, and the figures the checks read."""

    plan: Deployment
    memory: MemoryMath
    result: ClusterResult
    observed: dict[str, float]  # "ttft", "tpot", "e2e" at the SLO's percentile (limited ones)
    slo_held: bool
    attainment: float  # share of requests that met every limit
    goodput: float  # requests per second that met every limit
    cost: float  # dollars per million output tokens


@dataclass(slots=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass(slots=True)
class Judgement:
    level: DesignLevel
    checks: list[Check] = field(default_factory=list)
    report: PlanReport | None = None  # None when the plan could not run
    reference: PlanReport | None = None

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)


def evaluate(plan: Deployment, level: DesignLevel) -> PlanReport:
    """Run a plan on the level's closed-loop trace (ValueError if it does not fit memory)."""
    memory = memory_math(plan, level.max_seq_len)
    result = simulate(plan, level.closed_loop(), level.max_seq_len)
    slo, seqs = level.slo, result.seqs
    observed = {name: slo.observed(seqs, name) for name, limit in
                (("ttft", slo.ttft_s), ("tpot", slo.tpot_s), ("e2e", slo.e2e_s))
                if limit is not None}
    met = sum(map(slo.met_by, seqs))
    return PlanReport(plan, memory, result, observed, slo.held_by(seqs), met / len(seqs),
                      slo.goodput(seqs, result.metrics.makespan_s),
                      cost_per_million_output_tokens(plan, result))


def judge(plan: object, level: int | DesignLevel, reference: object | None = None,
          reference_report: PlanReport | None = None) -> Judgement:
    """Every check of a plan on a level, in order; the first that fails stops the ones that
    need it (a plan that does not fit is not run). `reference` (a plan) or `reference_report`
    (its report, already run) prices the cost check; without either that check is left out."""
    lv = LEVELS[level] if isinstance(level, int) else level
    j = Judgement(lv)
    if reference_report is None and reference is not None:
        reference_report = evaluate(Deployment.from_plan(reference), lv)
    j.reference = reference_report
    try:
        dep = Deployment.from_plan(plan)
    except ValueError as e:
        j.checks.append(Check("plan", False, str(e)))
        return j
    j.checks.append(Check("plan", True, "every field valid"))
    j.checks.append(_constraints(dep, lv))
    if not j.checks[-1].passed:
        return j
    try:
        memory = memory_math(dep, lv.max_seq_len)
    except ValueError as e:
        j.checks.append(Check("memory fits", False, str(e)))
        return j
    j.checks.append(Check("memory fits", True, f"{memory.max_concurrent_seqs} sequences of "
                                               f"{lv.max_seq_len} tokens per replica"))
    j.checks.append(_arithmetic(getattr(plan, "memory", None), memory))
    if reference_report is not None and reference_report.plan == dep:
        report = reference_report  # the same plan: evaluate is deterministic
    else:
        report = evaluate(dep, lv)
    j.report = report
    limits = {"ttft": lv.slo.ttft_s, "tpot": lv.slo.tpot_s, "e2e": lv.slo.e2e_s}
    figures = ", ".join(f"{k} {v:.4g} s" + (f" (<= {limits[k]:g})" if limits.get(k) is not None else "")
                        for k, v in report.observed.items())
    j.checks.append(Check("SLO", report.slo_held, f"p{lv.slo.percentile:g}: {figures}"))
    if reference_report is not None:
        limit = lv.cost_factor * reference_report.cost
        j.checks.append(Check("cost", report.cost <= limit,
                              f"${report.cost:.4f} per M output tokens, at most ${limit:.4f} "
                              f"({lv.cost_factor:g}x reference)"))
    return j


def _constraints(dep: Deployment, lv: DesignLevel) -> Check:
    if dep.model != lv.model:
        return Check("constraints", False, f"model {dep.model!r}: the workload serves {lv.model!r}")
    if dep.hardware not in lv.hardware:
        return Check("constraints", False, f"hardware {dep.hardware!r}: only "
                                           f"{', '.join(lv.hardware)} allowed")
    if dep.weight_bits < lv.min_weight_bits:
        return Check("constraints", False, f"weight_bits {dep.weight_bits}: the quality floor is "
                                           f"{lv.min_weight_bits} bits")
    if not dep.enable_chunked_prefill and dep.max_num_batched_tokens < lv.max_seq_len:
        return Check("constraints", False, f"max_num_batched_tokens {dep.max_num_batched_tokens}:"
                                           f" without chunked prefill a {lv.max_seq_len}-token "
                                           "request must fit one step")
    return Check("constraints", True, "model, hardware and precision allowed")


def _arithmetic(stated: object, exact: MemoryMath) -> Check:
    wrong = []
    for name in MemoryMath.__dataclass_fields__:
        got = getattr(stated, name, None)
        want = getattr(exact, name)
        if type(got) is not int or got != want:
            wrong.append(f"{name} {got!r} (the engine: {want})")
    if wrong:
        return Check("memory arithmetic", False, "; ".join(wrong))
    return Check("memory arithmetic", True, "as the engine allocates it")
