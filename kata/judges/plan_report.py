"""`kata engine plan FILE --level N`: a learner's serving plan judged beside the reference plan.

It loads the learner's file (the serving-plan kata's module), asks its `plan()` for the level's
workload and constraints, and calls the same `design.judge` the kata's grader calls, with the
reference plan (the workbook's solutions/serving-plan.py, when the workbook has it) pricing the
cost check. The output is one table that fits 80 columns, every check with its figures, and each
plan's KV-use chart:

    metric                      yours            reference
    GPUs (TP x replicas)        2 (1 x 2)        2
    ...

The reference column shows its figures, not its settings: the plan is yours to find. It sits
outside the engine because it loads the learner's file the way the grading plugin does and finds
the reference through the catalog.
"""

from __future__ import annotations

from pathlib import Path

from kata.engine.design import LEVELS, WORKLOADS, DesignLevel, Judgement, PlanReport, judge
from kata.engine.report import kv_chart

MODULE = "serving_plan"


class PlanError(Exception):
    """A user mistake: a missing file, a module that fails to import, a plan() that raises."""


def design_level(level: int | str) -> DesignLevel:
    """A level by number, or another workload the prompt names by its name (PlanError if none)."""
    if isinstance(level, str):
        if level not in WORKLOADS:
            raise PlanError(f"--workload {level}: choose one of {', '.join(WORKLOADS)}")
        return WORKLOADS[level]
    if level not in LEVELS:
        raise PlanError(f"--level {level}: choose one of {', '.join(map(str, LEVELS))}")
    return LEVELS[level]


def load_plan(path: Path, level: int | str, module_name: str = MODULE):
    """The plan a file's plan() returns for the level (or named workload). PlanError names what
    went wrong."""
    from kata.pytest_plugin import ImplLoadError, load_impl

    lv = design_level(level)
    if not path.is_file():
        raise PlanError(f"{path}: no such file (`kata start serving-plan` hands out the stub)")
    try:
        module = load_impl(path, module_name)
    except ImplLoadError as e:
        raise PlanError(str(e)) from None
    if not callable(getattr(module, "plan", None)):
        raise PlanError(f"{path}: no plan(workload, constraints) function")
    try:
        return module.plan(lv.workload(), lv.constraints())
    except Exception as e:  # the learner's plan() failed: say how, no traceback
        if isinstance(e, NotImplementedError):  # the stub as handed out
            raise PlanError(f"{path}: plan() is not written yet (it raises NotImplementedError): "
                            "write it, then run this again") from None
        raise PlanError(f"{path}: plan() raised {type(e).__name__}" + (f": {e}" if str(e) else "")) from None


def reference_path() -> Path | None:
    """The workbook's reference solution (None outside a workbook: the cost check is left out)."""
    from kata.catalog import CatalogError, Workbook

    try:
        return Workbook.find().root / "solutions" / "serving-plan.py"
    except CatalogError:
        return None


def judge_files(path: Path, level: int | str, reference_path: Path | None) -> Judgement:
    """Judge the file's plan on a level (or named workload), priced against the reference
    file's plan if given."""
    plan = load_plan(path, level)
    reference = None
    if reference_path is not None and reference_path.is_file():
        reference = load_plan(reference_path, level, module_name=f"{MODULE}_reference")
    return judge(plan, design_level(level), reference)


# --- rendering ---------------------------------------------------------------------------


def _gpus(report: PlanReport, show_split: bool) -> str:
    p = report.plan
    if not show_split:
        return str(p.num_gpus)
    return f"{p.num_gpus} ({p.tensor_parallel_size} x {p.replicas})"


def rows(j: Judgement) -> list[tuple[str, str, str]]:
    """(label, yours, reference) rows; '-' where a plan did not run."""
    slo = j.level.slo
    pct = f"p{slo.percentile:g}"

    def fig(report: PlanReport | None, fn) -> str:
        return "-" if report is None else fn(report)

    out = [("GPUs (TP x replicas)", fig(j.report, lambda r: _gpus(r, True)),
            fig(j.reference, lambda r: _gpus(r, False))),
           ("weight precision, GPU", fig(j.report, lambda r: f"{r.plan.weight_bits}-bit, {r.plan.hardware}"),
            fig(j.reference, lambda r: f"?, {r.plan.hardware}")),
           ("sequences per replica *", fig(j.report, lambda r: f"{r.memory.max_concurrent_seqs:,}"),
            fig(j.reference, lambda r: "?"))]
    limits = (("TTFT", "ttft", slo.ttft_s, 1.0, "s"), ("TPOT", "tpot", slo.tpot_s, 1e3, "ms"),
              ("E2E", "e2e", slo.e2e_s, 1.0, "s"))
    for label, key, limit, scale, unit in limits:
        if limit is None:
            continue
        out.append((f"{pct} {label} {unit} (<= {limit * scale:g})",
                    fig(j.report, lambda r, k=key, s=scale: f"{r.observed[k] * s:.3f}"),
                    fig(j.reference, lambda r, k=key, s=scale: f"{r.observed[k] * s:.3f}")))
    out += [("requests meeting the SLO", fig(j.report, lambda r: f"{r.attainment:.2%}"),
             fig(j.reference, lambda r: f"{r.attainment:.2%}")),
            ("goodput requests/s", fig(j.report, lambda r: f"{r.goodput:.2f}"),
             fig(j.reference, lambda r: f"{r.goodput:.2f}")),
            ("$ per million output tokens", fig(j.report, lambda r: f"{r.cost:.4f}"),
             fig(j.reference, lambda r: f"{r.cost:.4f}")),
            ("preemptions", fig(j.report, lambda r: f"{r.result.metrics.num_preemptions:,}"),
             fig(j.reference, lambda r: f"{r.result.metrics.num_preemptions:,}"))]
    return out


def render(j: Judgement, console) -> bool:
    """The table, the checks, the KV charts (a rich console; plain text when it is plain).
    Returns whether the plan passed every check that ran."""
    from rich.table import Table

    lv = j.level
    named = next((name for name, w in WORKLOADS.items() if w == lv), None)
    where = f"Workload {named}" if named else f"Level {lv.level}"
    console.print(f"{where}: {lv.title}. {lv.users:,} users x {lv.requests_per_user} "
                  f"requests, {lv.model} (simulated, closed loop)")
    table = Table(width=80)
    table.add_column("metric", ratio=3)
    table.add_column("yours", justify="right", ratio=2)
    table.add_column("reference", justify="right", ratio=2)
    for label, mine, ref in rows(j):
        table.add_row(label, mine, ref)
    console.print(table)
    console.print("* sequences of the longest request (prompt max + output max) one replica holds;"
                  " ? the reference plan's settings are yours to find")
    for c in j.checks:
        console.print(f"  {'ok  ' if c.passed else 'FAIL'} {c.name}: {c.detail}", soft_wrap=False)
    if j.reference is None:
        console.print("  (no reference plan in this workbook: the cost check is left out)")
    runs = [(name, r) for name, r in (("yours", j.report), ("reference", j.reference)) if r is not None]
    # one time axis for both charts, the longer run's: a slice is the same seconds in each
    end = max((r.result.metrics.kv_usage_over_time[-1][0] for _, r in runs
               if r.result.metrics.kv_usage_over_time), default=0.0)
    for name, report in runs:
        m, busiest = report.result.metrics, report.result.busiest_replica
        console.print(f"KV blocks in use, {name} (replica {busiest}, the busiest; 0 to {end:.0f} s):")
        console.print(f"  |{kv_chart(m.kv_usage_over_time, until=end)}|")
    on = f"the {named} workload" if named else f"level {lv.level}'s workload"
    verdict = (f"passes every check on {on}" if j.passed and j.reference is not None
               else "passes the checks that ran" if j.passed else "fails")
    console.print(f"Your plan {verdict}." + (" The hidden suite (`kata submit`) also runs it under other "
                                              "loads and workloads." if j.passed else ""))
    return j.passed
