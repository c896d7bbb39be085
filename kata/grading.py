"""The one grading harness: run a kata's tests on one implementation file, in a child process.

`kata check`, `kata submit`, `kata validate`, `kata grade-batch` and the bug-zoo tests all come
through `run_tests`, which runs the same pytest code a learner can run by hand:

    pytest graders/<slug> --kata-impl workspace/<module>.py

The child is untrusted. Each run works on a private copy (kata/manifest.py): only what the suite
needs (the visible tests never see the hidden suite or the reference) and the learner's file, in a
fresh temporary folder; the copy is checked against graders/<slug>/MANIFEST.json before every
child starts, restarts included. The child runs in the sandbox where bubblewrap works
(kata/sandbox.py: no network, no view of the workbook, every process it starts dies with it), in
its own process group with memory, CPU and per-test time limits, with an empty environment plus an
allowlist (kata/child.py). The run supervisor (kata/supervisor.py) reads the signed event stream
over a pipe and decides: one verdict per test when the learner's module hangs, crashes or exits at
import; a fresh child for the tests with no result when one dies; a short per-test bound once two
tests have timed out; and when the budget runs out, one rescue run for the tests not yet run. Every
test with no result is an error, never a pass; an unexpected or unsigned event, a canary that
passed, or a changed private copy make the run tampered (0 points).

The result is shaped like Exercism's results.json v3 (kata/results.py). JUnit XML is written by
the parent from the merged result, so it is complete across restarts.

What it leaves out: code in the child runs in the same process as the hidden tests and can, with
effort, read them in memory; see docs/GRADING.md's "what a determined learner can still do".
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import sys
import time
from pathlib import Path

from kata import checks, sandbox
from kata.catalog import Kata
from kata.child import Child, child_guard
from kata.formats import write_junit
from kata.manifest import (  # noqa: F401 - the harness's public names live here too
    MANIFEST, IntegrityError, compute_manifest, copy_changes, private_copy, temp_folder,
    verify_manifest, write_manifest)
from kata.results import (  # noqa: F401 - the harness's public names live here too
    ERROR, FAIL, PASS, LevelScore, Limits, SuiteResult, TestResult)
from kata.supervisor import RunSupervisor, watchdog

log = logging.getLogger("kata.harness")

__all__ = ["ERROR", "FAIL", "PASS", "IntegrityError", "LevelScore", "Limits", "SuiteResult",
           "TestResult", "caught_bugs", "child_guard", "compute_manifest", "grade", "private_copy",
           "run_tests", "score", "verify_manifest", "write_junit", "write_manifest"]


# --- running the tests --------------------------------------------------------


def _canaries(count: int = 3) -> list[tuple[str, float]]:
    """Names no grader uses, at random positions (fractions of the suite)."""
    words = ("boundary", "window", "budget", "prefill", "decode", "evict", "order", "limit",
             "chunk", "slot", "queue", "tie", "empty", "large", "reject")
    return [(f"test_{secrets.choice(words)}_{secrets.choice(words)}_{secrets.token_hex(3)}",
             (i + secrets.randbelow(1000) / 1000) / count) for i in range(count)]


def run_tests(
    paths: list[Path],
    impl: Path | None,
    module_name: str | None,
    root: Path,
    limits: Limits = Limits(),
    sweep: list[Path] | None = None,
    canaries: bool = True,
    levels: list[int] | None = None,
    on_progress=None,
    check_copy=None,
    redact: bool = False,
    reference: str | None = None,
    writable: list[Path] | None = None,
) -> SuiteResult:
    """Run the tests under `paths` on `impl` (None: the reference) and return every test's result.

    `root` is the (private) workbook the child runs in; `paths` and `impl` lie under root's parent,
    the folder the sandbox shows the child. `sweep`: run every test once per implementation in the
    list instead (see the plugin). `canaries`: insert tests that must fail, to prove the verdicts
    were not forged (off in sweep mode). `levels`: run only the tests of these levels.
    `on_progress(done, total, level)` is called once the tests are collected (level None) and
    as each test finishes; done counts the suite's own tests only (never the canaries), so it
    never exceeds total. `check_copy()`: None, or
    why the private copy can no longer be trusted; asked before every child starts and at the end.
    `redact`: the harness's log lines and messages name no test ('hidden test N' instead).
    `reference`: KATA_REFERENCE for the child (kata.checks: "record:FILE" or "apart:FILE");
    `writable`: folders the sandbox lets the child write (a recording run's, never a learner's).
    """
    with child_guard():
        sup = RunSupervisor(limits, on_progress, redact)
        extra = {checks.REFERENCE_ENV: reference} if reference else {}
        _supervise(sup, [str(p) for p in paths], impl, module_name, root, sweep,
                   canaries and not sweep, levels, check_copy, (extra, writable or []))
        if check_copy is not None and not sup.tampered:
            changed = check_copy()
            if changed:
                sup.distrust(f"the hidden suite's private copy was changed while your code ran ({changed})")
        result = sup.result()
    return result


def _command(targets, impl, module_name, root, ini, sweep, levels, per_test, strike, timed_out) -> list[str]:
    # only the plugins grading needs (PYTEST_DISABLE_PLUGIN_AUTOLOAD in _env): a pytest plugin
    # installed beside kata cannot change a verdict, and the child starts 0.06-0.1 s sooner
    cmd = [sys.executable, "-m", "pytest", *targets, "-c", str(ini), "--rootdir", str(root),
           "-p", "kata.pytest_entry", "-p", "pytest_timeout", "-p", "_hypothesis_pytestplugin",
           "-q", "--show-capture=no", "--tb=short", "--no-header",
           "-p", "no:cacheprovider", "-p", "no:randomly",
           "--timeout", str(per_test), "--timeout-method", "signal"]
    if impl is not None:
        cmd += ["--kata-impl", str(impl)]
    if module_name:
        cmd += ["--kata-impl-module", module_name]
    if sandbox.available() and sandbox.nested_status() is None:  # the learner's process in a sandbox of its own
        cmd += ["--kata-boundary-sandbox"]
    forced = os.environ.get(BOUNDARY_ENV, "").lower()
    if forced in ("on", "off"):  # every kata across the process boundary, or none (for measuring)
        cmd += ["--kata-boundary", forced]
    if sweep:
        cmd += ["--kata-sweep", ":".join(str(p) for p in sweep)]
    if levels:
        cmd += ["--kata-levels", ",".join(str(n) for n in levels)]
    return cmd + ["--kata-strike", str(strike), "--kata-timed-out", str(timed_out)]


def _env(tmp: Path, n: int, extra: dict) -> dict:
    """The child's variables: hypothesis's folder away from the learner's, and byte code that no
    child can plant for the next one. In the sandbox every folder holding code is mounted
    read-only, so the child reads the byte code already compiled (the installed packages') and
    writes none; without the sandbox, each child gets a fresh, empty byte-code cache instead
    (safe, but every module is compiled again: about 1.4 s more per grading)."""
    if sandbox.available():
        home = Path(sandbox.WORKDIR)
        return sandbox.child_env({"HOME": str(home), "HYPOTHESIS_STORAGE_DIRECTORY": str(home / "hypothesis"),
                                  "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **extra})
    home = tmp / f"home-{n}"
    home.mkdir()
    return sandbox.child_env({"HOME": str(home), "HYPOTHESIS_STORAGE_DIRECTORY": str(home / "hypothesis"),
                              "PYTHONPYCACHEPREFIX": str(home / "pycache"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                              **extra})


def _supervise(sup, targets, impl, module_name, root, sweep, use_canaries, levels, check_copy, how):
    """Start children until the supervisor says the run is over. `how`: (extra variables for
    the child, folders it may write)."""
    extra, writable = how
    with temp_folder("grade") as tmpname:
        tmp = Path(tmpname)
        ini = root.parent / "pytest.ini"
        if not ini.exists():
            ini.write_text("[pytest]\n")
        visible = [root.parent] + sorted({Path(p).parent for p in sweep or []})
        spent = 0  # bytes the run's children have written to their output files, all restarts together
        while targets is not None:
            changed = check_copy() if check_copy is not None else None
            if changed:
                sup.distrust(f"the hidden suite's private copy was changed by an earlier child ({changed})")
                return
            canaries = _canaries() if use_canaries else []
            sup.begin_child(canaries)
            remaining = max(sup.deadline() - time.monotonic(), 1)
            cmd = _command(targets, impl, module_name, root, ini, sweep,
                           levels if sup.restarts == 0 else None, sup.per_test_limit(),
                           sup.limits.strike_timeout, sup.timed_out)
            output = tmp / f"output-{sup.restarts}.txt"
            # one budget for the whole run: a child that floods its output and dies, again and
            # again, never writes more than file_bytes in all (the last child gets what is left)
            budget = max(sup.limits.file_bytes - spent, MIN_FILE_BYTES)
            child = Child.start(cmd, secrets.token_hex(16).encode(), canaries,
                                _env(tmp, sup.restarts, extra), root, output,
                                visible, sup.limits.memory_bytes, int(remaining) + 10,
                                budget, writable)
            why = None
            try:
                while child.poll() is None:
                    for ev in child.events():
                        sup.feed(ev)
                    if sup.finished_at is not None and sup.tests and not sup.pending():
                        break  # every result is in: pytest's summary and the interpreter's teardown
                        # (0.1-0.2 s) change nothing, and the learner's atexit code need not run
                    why = watchdog(sup, time.monotonic())
                    if why:
                        log.info("stopping the child: %s", why)
                        break
                    time.sleep(0.02)
            finally:
                for ev in child.close():
                    sup.feed(ev)
            if child.forged:
                sup.distrust(child.forged)
            pending = sup.child_ended(why, child.returncode, child.output())
            try:  # its first OUTPUT_CAP bytes are read: the file goes, and its size counts
                spent += output.stat().st_size
                output.unlink()
            except OSError:
                pass
            targets = None if pending is None else [f"{root}/{node}" for node in pending]


def _copy_check(kata: Kata, root: Path, private_impl: Path | None):
    """check_copy for a hidden run: the suite's private copy against its manifest, and the
    submission's private copy against the bytes copied in (without the sandbox another process
    could rewrite either while the run goes on)."""
    graded = private_impl.read_bytes() if private_impl is not None else None
    baselines = root / BASELINES
    recorded = baselines.read_bytes() if baselines.is_file() else None

    def check() -> str | None:
        changed = copy_changes(kata, root)
        if changed is None and recorded is not None:
            try:
                kept = baselines.read_bytes() == recorded
            except OSError:
                kept = False
            changed = None if kept else f"{BASELINES}, the reference's measured baselines"
        if changed is None and private_impl is not None:
            try:
                same = private_impl.read_bytes() == graded
            except OSError:
                same = False
            changed = None if same else f"{kata.module}, the submission's private copy"
        return changed
    return check


# --- scoring ----------------------------------------------------------------


def score(result: SuiteResult, kata: Kata, levels: list[int] | None = None) -> SuiteResult:
    """Fill in per-level and total points: level points x (weight passed / weight of its tests).

    `levels`: the levels graded (an exam question's, or those open so far); default every level."""
    graded = [lv for lv in kata.levels if levels is None or lv.number in levels]
    scores: list[LevelScore] = []
    for lv in graded:
        mine = [t for t in result.tests if t.task_id == lv.number]
        weight = sum(t.points for t in mine)
        won = sum(t.points for t in mine if t.status == PASS)
        earned = round(lv.points * won / weight, 2) if weight and not result.tampered else 0.0
        scores.append(LevelScore(lv.number, lv.name, sum(t.status == PASS for t in mine),
                                 len(mine), earned, lv.points))
    result.levels = scores
    result.points_earned = round(sum(lv.points_earned for lv in scores), 2)
    result.points_possible = sum(lv.points for lv in graded)
    return result


def caught_bugs(kata: Kata, bugs: list[Path], limits: Limits = Limits(),
                test_files: list[Path] | None = None) -> dict[Path, bool | None]:
    """Which of `bugs` the hidden suite catches (fails at least one test), in one child process.

    None for a bug with no test result at all (its file could not be collected). `test_files`:
    the hidden suite's files in the order to run them (default: the grader folder's order); a
    bug's remaining tests are skipped once one fails, so cheap files first saves time.
    """
    from kata.pytest_plugin import SWEEP_SKIP

    resolved = [b.resolve() for b in bugs]
    with temp_folder("zoo") as tmp:
        root = private_copy(kata, Path(tmp), "hidden")
        files = [root / Path(f).resolve().relative_to(kata.root.resolve()) for f in test_files] \
            if test_files else [root / "graders" / kata.slug]
        result = run_tests(files, None, kata.module_name, root, limits, sweep=resolved,
                           check_copy=lambda: copy_changes(kata, root))
    verdict: dict[Path, bool | None] = {}
    for bug in resolved:
        mine = [t for t in result.tests if t.impl == str(bug)]
        verdict[bug] = (any(t.status != PASS and SWEEP_SKIP not in (t.message or "") for t in mine)
                        if mine else None)
    return verdict


MIN_FILE_BYTES = 256 * 1024  # a child's file size limit once the run's budget is spent: enough to start
BOUNDARY_ENV = "KATA_BOUNDARY"  # "on" or "off": every kata across the process boundary, or none
BASELINES = "baselines.json"  # in a private copy: what the reference measured in its own run
# the reference's own runs (an author's checks, a batch's baselines): trusted code, generous bounds
REFERENCE_LIMITS = Limits(test_timeout=60.0, hard_test_grace=3.0, wall_timeout=900.0,
                          strike_timeout=20.0, rescue_timeout=300.0)


def record_baselines(kata: Kata, limits: Limits = REFERENCE_LIMITS) -> dict:
    """Run the hidden suite on the reference alone, in its own child, recording every value a
    grader asks of the reference (kata.checks.baseline): hand them to `grade(..., baselines=)` so
    that no run of other code has the reference in its process. {} for a kata whose graders do
    not use the reference. IntegrityError where the reference fails its own suite."""
    from kata.manifest import needs_reference

    if not needs_reference(kata):
        return {}
    verify_manifest(kata)
    with temp_folder("baseline") as tmp:
        root = private_copy(kata, Path(tmp), "hidden", reference=True)
        folder = Path(tmp) / "record"
        folder.mkdir()
        out = folder / "baselines.jsonl"
        result = run_tests([root / "graders" / kata.slug], None, kata.module_name, root, limits,
                           check_copy=lambda: copy_changes(kata, root), reference=f"record:{out}",
                           writable=[folder])
        failed = [t.name for t in result.tests if t.status != PASS]
        if result.status == ERROR or failed or result.tampered:
            raise IntegrityError(f"{kata.slug}: the reference does not pass its own hidden suite when "
                                 f"it runs alone ({', '.join(failed[:3]) or result.message}): run "
                                 f"`kata validate {kata.slug}`")
        return checks.read_baselines(out)


def grade(kata: Kata, impl: Path | None, suite: str = "hidden", limits: Limits = Limits(),
          junit_xml: Path | None = None, code: str | None = None,
          levels: list[int] | None = None, on_progress=None, redact: bool = False,
          baselines: dict | None = None) -> SuiteResult:
    """Grade `impl` (None: the reference) on the kata's hidden suite or its visible tests; with
    `levels`, on those levels' tests only (and scored over those levels only).

    The run works on a private copy (see the module docstring): `code`, when given, is the text to
    grade (a snapshot taken when the submission started), else `impl`'s content now. The hidden
    suite is checked against its manifest before the run (IntegrityError: no grade) and after it
    (changed during the run: the run is tampered, 0 points). `redact`: the harness's log lines
    and messages name no test (a hidden suite graded during a session). `baselines`: what the
    reference measured in its own run (`record_baselines`): the reference stays out of this run,
    which reads only those values (see kata.checks).
    """
    if suite == "hidden":
        rel = Path("graders") / kata.slug
        if kata.grader.exists():
            verify_manifest(kata)
    elif suite == "visible":
        rel = kata.visible_tests.relative_to(kata.root)
    else:
        raise ValueError(f"suite must be 'hidden' or 'visible', got {suite!r}")
    if not (kata.root / rel).exists():
        return SuiteResult(status=ERROR, message=f"{kata.root / rel}: missing: this workbook has no such tests",
                           tests=[])
    if impl is not None and code is None and impl.is_symlink():
        return SuiteResult(status=ERROR, message=f"{impl}: a symbolic link: grade a regular file "
                           "(copy the code into it)", tests=[])
    if impl is not None and code is None and not impl.is_file():
        return SuiteResult(status=ERROR, message=f"{impl}: no such file", tests=[])
    with temp_folder("run") as tmp:
        apart = baselines is not None and suite == "hidden"
        root = private_copy(kata, Path(tmp), suite,
                            reference=False if apart else None if impl is not None else True)
        if suite == "visible" and levels is not None:  # the file the learner's workspace holds
            from kata.visible import cut

            copied = root / rel
            copied.write_text(cut(copied.read_text(encoding="utf-8"), levels), encoding="utf-8")
        reference = None
        if apart:
            (root / BASELINES).write_text(json.dumps(baselines), encoding="utf-8")
            reference = f"apart:{root / BASELINES}"
        private_impl = None
        if impl is not None:
            private_impl = Path(tmp) / "submission" / kata.module
            private_impl.parent.mkdir()
            if code is not None:
                private_impl.write_text(code, encoding="utf-8")
            else:
                shutil.copyfile(impl, private_impl)
        check = _copy_check(kata, root, private_impl) if suite == "hidden" else None
        result = run_tests([root / rel], private_impl, kata.module_name, root, limits,
                           levels=levels, on_progress=on_progress, check_copy=check, redact=redact,
                           reference=reference)
        # tracebacks name the learner's file, not the private copy, and the suite's files
        # relative to the workbook (the sandboxed child's working folder is elsewhere)
        shown = f"{impl.parent.name}/{impl.name}" if impl is not None else None
        for t in result.tests:
            for attr in ("detail", "message"):
                text = getattr(t, attr)
                if text and impl is not None:
                    text = text.replace(str(private_impl), shown).replace(f"../submission/{kata.module}", shown)
                if text:
                    setattr(t, attr, text.replace(f"{root}/", ""))
    if suite == "hidden":
        try:
            verify_manifest(kata)
        except IntegrityError as exc:
            result.tampered = result.tampered or f"the hidden suite changed while your code ran ({exc})"
            result.status = ERROR
            result.message = (f"tampered: {result.tampered}. A run whose verdicts cannot be trusted "
                              "scores 0 points; submit code that only solves the kata")
    result = score(result, kata, levels)
    if junit_xml is not None:  # scored, and with no path of the private copy in its messages
        write_junit([(kata, result)], junit_xml)
    return result
