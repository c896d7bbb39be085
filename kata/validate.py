"""`kata validate`: is a kata fit to hand to candidates?

Checks, each reported by name with a one-line detail:

    schema        kata.toml loads, every level has points and hints, the kata's files exist
    api           the stub and the reference expose the same public names and signatures
                  (compared on the syntax tree, so neither file is executed)
    markers       every hidden test has level, points and edge markers; every level has points
    strict        every `assert A == B` in the hidden suite is `assert same(A, B)` (kata.strict)
    reference     the reference passes every visible and every hidden test
    stub          the stub fails at least one hidden test of every level
    deterministic two runs of the hidden suite on the reference give the same outcome
    bug-zoo       every patch in tests/bugs/<slug>/ applies to the reference (kata/zoo.py) and the
                  wrong solution it makes fails at least one hidden test
    zoo-headers   every patch's header is fit to show a learner after a hunt: Bug, Level, Breaks
    hunts         level-1 hunts can be drawn (kata/hunt.py): a bug is in the level-1 code, the
                  reference cut to level 1 passes level 1, every drawable bug cut so still fails it

and the hidden suite's run time on the reference. Grading runs are child processes, run
`workers` at a time. Validating a kata also (re)writes graders/<slug>/MANIFEST.json, the hashes
every later grade checks the hidden suite against: validating is how an author says "this suite
is the one to grade with".
"""

from __future__ import annotations

from collections.abc import Callable
import ast
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kata.catalog import CatalogError, Kata, Workbook, load_kata
from kata.grading import ERROR, PASS, REFERENCE_LIMITS, Limits, caught_bugs, child_guard, grade, write_manifest
from kata.manifest import needs_reference


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class KataReport:
    slug: str
    checks: list[Check] = field(default_factory=list)
    hidden_tests: int = 0
    hidden_runtime_s: float | None = None
    bugs: int = 0
    zoo_errors: list = field(default_factory=list, repr=False)  # patches that do not apply
    zoo_dir: Path | None = field(default=None, repr=False)
    zoo_names: dict = field(default_factory=dict, repr=False)  # bug file -> its patch's name

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict:
        data = asdict(self)
        for private in ("zoo_errors", "zoo_dir", "zoo_names"):
            data.pop(private, None)
        return {**data, "ok": self.ok}


# --- the public API, read from the syntax tree ------------------------------


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    a = fn.args
    parts = [x.arg for x in a.posonlyargs] + (["/"] if a.posonlyargs else [])
    n_pos = len(a.posonlyargs) + len(a.args)
    first_default = n_pos - len(a.defaults)
    for i, x in enumerate(a.args, start=len(a.posonlyargs)):
        parts.append(x.arg + ("=..." if i >= first_default else ""))
    if a.vararg:
        parts.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        parts.append("*")
    for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        parts.append(x.arg + ("=..." if d is not None else ""))
    if a.kwarg:
        parts.append("**" + a.kwarg.arg)
    return f"{fn.name}({', '.join(parts)})"


def public_api(path: Path) -> dict[str, str]:
    """name -> signature for public functions, classes and their public methods (and __init__)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise CatalogError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None
    api: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            api[node.name] = _signature(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            api[node.name] = f"class {node.name}({bases})"
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not item.name.startswith("_") or item.name in ("__init__", "__call__", "__len__",
                                                                   "__contains__", "__iter__")
                ):
                    api[f"{node.name}.{item.name}"] = _signature(item)
    return api


def api_drift(stub: Path, reference: Path) -> list[str]:
    """Differences between the stub's public API and the reference's, one line each."""
    a, b = public_api(stub), public_api(reference)
    problems = []
    for name in sorted(a.keys() | b.keys()):
        if name not in b:
            problems.append(f"{name}: in the stub, missing from the reference")
        elif name not in a:
            problems.append(f"{name}: in the reference, missing from the stub")
        elif a[name] != b[name]:
            problems.append(f"{name}: stub has {a[name]}, reference has {b[name]}")
    return problems


def plain_equality_asserts(grader: Path) -> list[str]:
    """`file:line` of each `assert A == B` in the hidden suite (they should use kata.strict.same)."""
    found = []
    for f in sorted(grader.rglob("*.py")):
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except SyntaxError:
            continue  # the grading run reports it
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and \
                    any(isinstance(op, ast.Eq) for op in node.test.ops):
                found.append(f"{f.name}:{node.lineno}")
    return found


# --- validation -------------------------------------------------------------


SWEEP_CHUNK = 8  # bugs per child process: one pytest start-up each, and chunks balance the pool
# An author's runs (eight bugs a child, on a busy machine) get a larger budget than a learner's.
# Per test, too: on two busy cores a heavy hidden test can take several times its quiet-machine time;
# and in a sweep the timeouts of earlier bugs must not cut a later bug's slow test short (a test
# cut short would count that bug as caught for the wrong reason).
AUTHOR_LIMITS = REFERENCE_LIMITS


# queued with the bug zoo ("bugs" jobs run once the reference's costs are known), at level 1
HUNTS_JOB = "bugs-hunts:1"


def _prepare(wb: Workbook, slug: str, limits: Limits) -> tuple[KataReport, Kata | None, dict]:
    """The static checks, and the grading jobs (name -> thunk) the rest of the checks need."""
    report = KataReport(slug)
    try:
        kata: Kata = load_kata(wb.root, slug)
        missing = [p for p in (kata.solution, kata.grader) if not p.exists()]
        if missing:
            raise CatalogError(f"{missing[0]}: missing: every kata needs a reference and a hidden suite")
    except CatalogError as exc:
        report.checks.append(Check("schema", False, str(exc)))
        return report, None, {}
    report.checks.append(Check("schema", True, f"{len(kata.levels)} levels, {len(kata.hints)} hints"))
    write_manifest(kata)

    plain = plain_equality_asserts(kata.grader)
    report.checks.append(Check(
        "strict", not plain,
        (f"compare with `same(got, expected)` from kata.strict, not `==`: {', '.join(plain[:3])}"
         + (f" (+{len(plain) - 3} more)" if len(plain) > 3 else "")) if plain
        else "every equality assert is type-strict"))

    try:
        drift = api_drift(kata.stub, kata.solution)
        report.checks.append(Check("api", not drift, "; ".join(drift[:5]) or "stub and reference agree"))
    except CatalogError as exc:
        report.checks.append(Check("api", False, str(exc)))

    # the zoo's patches, applied to the current reference in a folder of their own
    import tempfile

    from kata import zoo

    zoo_dir = Path(tempfile.mkdtemp(prefix=f"kata-zoo-{os.getpid()}-{slug}-"))  # swept if this process dies
    made, report.zoo_errors = zoo.materialise(kata, zoo_dir)
    report.zoo_dir = zoo_dir
    report.zoo_names = {bug.resolve(): patch.name for bug, patch in made.items()}
    bugs = sorted(made)
    report.bugs = len(zoo.entries(kata.bugs))
    headers = []
    for patch in zoo.entries(kata.bugs):
        try:
            headers += zoo.header_problems(zoo.ZooPatch.parse(patch), len(kata.levels))
        except zoo.PatchError:
            pass  # reported by the bug-zoo check
    report.checks.append(Check("zoo-headers", not headers,
                               "; ".join(headers[:3]) + (f" (+{len(headers) - 3} more)" if len(headers) > 3 else "")
                               if headers else f"all {report.bugs} headers have Bug, Level and Breaks"))
    from kata import hunt

    jobs: dict[str, Callable[..., object]] = {
        "ref1": lambda: grade(kata, kata.solution, "hidden", limits),
        "ref2": lambda: _reference_apart(kata, limits),
        "visible": lambda: grade(kata, kata.solution, "visible", limits),
        "stub": lambda: grade(kata, kata.stub, "hidden", limits),
    }
    # the bug zoo in a few child processes (sweep mode), not one per bug. Bugs are grouped by the
    # level their header names, and a group's chunks take that level's test files first, then the
    # rest cheapest first (see validate): a level-3 bug is caught by level 3's tests without
    # first running levels 1 and 2's scale tests.
    # the level-1 hunts sweep like a level-1 group of bugs, once the reference's costs are known
    jobs[HUNTS_JOB] = lambda files: hunt.drawable(kata, limits, files)
    by_level: dict[str, list[Path]] = {}
    for bug in bugs:
        level = zoo.ZooPatch.parse(made[bug]).header.get("Level", "")
        by_level.setdefault(level, []).append(bug)
    for level, group in sorted(by_level.items()):
        for i in range(0, len(group), SWEEP_CHUNK):
            chunk = group[i:i + SWEEP_CHUNK]
            jobs[f"bugs:{level}:{i}"] = lambda files, chunk=chunk: caught_bugs(kata, chunk, limits, files)
    return report, kata, jobs


def _reference_apart(kata: Kata, limits: Limits):
    """The reference graded as grade-batch grades a class: where a grader uses the reference, it
    first runs alone to record what the graders ask of it, then the graded run reads only that."""
    from kata.grading import IntegrityError, SuiteResult, record_baselines

    try:
        baselines = record_baselines(kata, limits) if needs_reference(kata) else None
    except IntegrityError as exc:
        return SuiteResult(status=ERROR, message=str(exc), tests=[])
    return grade(kata, kata.solution, "hidden", limits, baselines=baselines)


def cheapest_files_first(kata: Kata, ref) -> list[Path] | None:
    """The hidden suite's test files, by the reference's time in each, shortest first (files the
    run did not report come last, by name). None when the run reported nothing to order by."""
    seconds: dict[Path, float] = {}
    for t in ref.tests:
        path = (kata.root / t.name.split("::")[0]).resolve()
        seconds[path] = seconds.get(path, 0.0) + (t.duration or 0.0)
    files = sorted(p.resolve() for p in kata.grader.glob("test_*.py"))
    if not seconds or not all(p in files for p in seconds):
        return None
    return sorted(files, key=lambda p: (p not in seconds, seconds.get(p, 0.0), p.name))


def level_files_first(files: list[Path] | None, kata: Kata, ref, level: str) -> list[Path] | None:
    """`files` with the ones whose tests are mostly of `level` moved to the front (order kept)."""
    if not files or not level.isdigit():
        return files
    counts: dict[Path, dict[int, int]] = {}
    for t in ref.tests:
        path = (kata.root / t.name.split("::")[0]).resolve()
        per = counts.setdefault(path, {})
        per[t.task_id] = per.get(t.task_id, 0) + 1
    mine = {path for path, per in counts.items() if max(per, key=per.__getitem__) == int(level)}
    return sorted(files, key=lambda f: f not in mine)  # stable: cheapest first within each part


def _conclude(report: KataReport, kata: Kata, results: dict) -> KataReport:
    ref = results["ref1"]
    report.hidden_tests = len(ref.tests)
    report.hidden_runtime_s = ref.duration
    report.checks.append(_markers_check(kata, ref))
    failing = [t for t in ref.tests + results["visible"].tests if t.status != PASS]
    if ref.message or not ref.tests:
        detail = f"hidden suite did not run: {ref.message}"
    elif failing:
        detail = f"{len(failing)} tests fail, e.g. {failing[0].name}: {failing[0].message}"
    else:
        detail = f"{len(ref.tests)} hidden and {len(results['visible'].tests)} visible tests pass"
    report.checks.append(Check("reference", not failing and bool(ref.tests) and not ref.message, detail))

    stub = results["stub"]
    unfailed = [lv.level for lv in stub.levels if lv.total and lv.passed == lv.total]
    empty = [lv.level for lv in stub.levels if not lv.total]
    report.checks.append(Check(
        "stub", not unfailed and not empty,
        f"the stub passes every test of level {unfailed}" if unfailed else
        (f"levels {empty} have no hidden tests" if empty else "the stub fails every level"),
    ))

    if HUNTS_JOB in results:
        report.checks.append(Check("hunts", *results[HUNTS_JOB]))
    apart = results["ref2"]
    if needs_reference(kata):
        bad = [t.name for t in apart.tests if t.status != PASS]
        report.checks.append(Check(
            "ref-apart", bool(apart.tests) and not bad and not apart.message,
            apart.message or (f"{len(bad)} tests fail with the reference apart, e.g. {bad[0]}" if bad else
                              "the suite passes with the reference run apart (as grade-batch grades)")))
    same = ref.outcome_key() == apart.outcome_key()
    report.checks.append(Check("deterministic", same,
                               "two runs agree" if same else "two runs on the reference differ"))

    verdict = {}
    for name, value in results.items():
        if name.startswith("bugs") and name != HUNTS_JOB:
            verdict.update(value)
    names = report.zoo_names
    survivors = [names.get(b, b.name) for b, caught in verdict.items() if caught is False]
    broken = [names.get(b, b.name) for b, caught in verdict.items() if caught is None]
    if not report.bugs:
        report.checks.append(Check("bug-zoo", False,
                                   f"{kata.bugs}: no bug patches: add wrong solutions (see AUTHORING.md)"))
    else:
        problems = list(report.zoo_errors)
        if survivors:
            problems.append(f"not caught: {', '.join(survivors)}")
        if broken:
            problems.append(f"did not run: {', '.join(broken)}")
        report.checks.append(Check("bug-zoo", not problems,
                                   "; ".join(problems) or f"all {report.bugs} bugs caught"))
    import shutil

    if report.zoo_dir is not None:
        shutil.rmtree(report.zoo_dir, ignore_errors=True)
    return report


def validate(wb: Workbook, slugs: list[str], workers: int = 2,
             limits: Limits = AUTHOR_LIMITS) -> list[KataReport]:
    """Validate katas; every kata's grading runs share one pool of `workers` child processes."""
    prepared = [_prepare(wb, slug, limits) for slug in slugs]
    results: list[dict] = [{} for _ in prepared]
    # Reference runs first; a kata's bug zoo is queued once its first reference run is in, with
    # the suite's files in the reference's order of cost, cheapest first: a bug's tests stop at
    # its first failure, so most bugs never reach the slow files.
    first = sorted(((i, name, fn) for i, (_, _, jobs) in enumerate(prepared)
                    for name, fn in jobs.items() if not name.startswith("bugs")),
                   key=lambda job: not job[1].startswith("ref"))
    with child_guard(), ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending = {pool.submit(fn): (i, name) for i, name, fn in first}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i, name = pending.pop(fut)
                results[i][name] = fut.result()
                if name == "ref1":
                    _, kata, jobs = prepared[i]
                    assert kata is not None  # only a prepared kata has a ref1 job
                    ref = results[i]["ref1"]
                    files = cheapest_files_first(kata, ref)
                    for bug_job, fn in jobs.items():
                        if bug_job.startswith("bugs"):
                            level = bug_job.split(":")[1]
                            ordered = level_files_first(files, kata, ref, level)
                            pending[pool.submit(fn, ordered)] = (i, bug_job)
    return [_conclude(report, kata, results[i]) if kata is not None else report
            for i, (report, kata, _) in enumerate(prepared)]


def validate_kata(wb: Workbook, slug: str, workers: int = 2, limits: Limits = AUTHOR_LIMITS) -> KataReport:
    return validate(wb, [slug], workers, limits)[0]


def _markers_check(kata: Kata, ref) -> Check:
    problems = []
    levels = {lv.number for lv in kata.levels}
    for t in ref.tests:
        name = t.name.split("::")[-1]
        if t.task_id not in levels:
            problems.append(f"{name}: level marker missing or not one of {sorted(levels)}")
        if not t.points or t.points <= 0:
            problems.append(f"{name}: points marker missing or not positive")
        if not t.edge:
            problems.append(f"{name}: edge marker missing")
    pointless = [n for n in levels if not any(t.task_id == n and (t.points or 0) > 0 for t in ref.tests)]
    if pointless:
        problems.append(f"levels {pointless} have no test worth points")
    return Check("markers", not problems,
                 "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
                 if problems else f"{len(ref.tests)} tests marked")
