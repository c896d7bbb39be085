"""The one grading harness: run a kata's tests on one implementation file, in a child process.

`kata check`, `kata submit`, `kata validate`, `kata grade-batch` and the bug-zoo tests all come
through `run_tests`, which runs the same pytest code a learner can run by hand:

    pytest graders/<slug> --kata-impl workspace/<module>.py

The child is untrusted. It runs in its own process group with memory, CPU and per-test time limits;
the parent follows the event stream the plugin writes (kata/pytest_plugin.py) and

* kills the whole group when one test outlives its hard bound or the run outlives its wall clock;
* marks the test a dead child was running as an error (exit code 0 proves nothing: `os._exit(0)`
  exits 0 with no report) and starts a fresh child on the tests that have no result yet;
* reports every test with no result as an error, never as a pass.

The result is shaped like Exercism's results.json v3 (status, message, tests[] in file order with
name, status, message, output, task_id = level) plus points earned and possible per level.

What it leaves out: hostile code that tampers with the plugin inside its own process (this is a
practice tool, not a sandbox for adversaries).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kata.catalog import Kata

PASS, FAIL, ERROR = "pass", "fail", "error"
OUTPUT_CAP = 64 * 1024  # bytes of the child's own stdout/stderr kept


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one grading run. Defaults suit a kata's hidden suite on a small machine."""

    test_timeout: float = 20.0  # pytest-timeout per test (signal method: a clean failure)
    hard_test_grace: float = 10.0  # then the parent kills the child (a loop inside C code)
    wall_timeout: float = 600.0  # the whole run, restarts included
    memory_bytes: int = 3 * 1024**3  # RLIMIT_AS of the child
    max_restarts: int = 200

    def __post_init__(self):
        for name in ("test_timeout", "hard_test_grace", "wall_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {getattr(self, name)}")


@dataclass(slots=True)
class TestResult:
    name: str  # the pytest node id, relative to the workbook root
    status: str  # pass | fail | error
    message: str | None = None
    detail: str | None = None  # the full failure report (shown by `kata check` and `kata review`)
    output: str | None = None
    task_id: int | None = None  # the level
    points: float = 1.0
    edge: str | None = None
    duration: float = 0.0
    impl: str | None = None  # sweep mode: which implementation this test ran on


@dataclass(slots=True)
class LevelScore:
    level: int
    name: str
    passed: int
    total: int
    points_earned: float
    points_possible: int


@dataclass(slots=True)
class SuiteResult:
    status: str
    message: str | None
    tests: list[TestResult]
    levels: list[LevelScore] = field(default_factory=list)
    points_earned: float = 0.0
    points_possible: int = 0
    duration: float = 0.0
    restarts: int = 0
    version: int = 3

    @property
    def passed(self) -> int:
        return sum(t.status == PASS for t in self.tests)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "SuiteResult":
        data = dict(data)
        data["tests"] = [TestResult(**t) for t in data.get("tests", [])]
        data["levels"] = [LevelScore(**lv) for lv in data.get("levels", [])]
        return cls(**data)

    def outcome_key(self) -> list[tuple]:
        """What must be identical between two gradings of the same code (no timings)."""
        return [(t.name, t.status, t.task_id, t.points) for t in self.tests]


# --- the child process ------------------------------------------------------


def _limit_child(memory_bytes: int, cpu_seconds: int):
    def apply():  # runs in the child between fork and exec
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _child_env(tmp: Path) -> dict:
    env = dict(os.environ)
    for var in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "HYPOTHESIS_PROFILE"):
        env.pop(var, None)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp / "hypothesis")
    env["PYTHONHASHSEED"] = "0"
    return env


def _read_capped(path: Path, cap: int = OUTPUT_CAP) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
    except FileNotFoundError:
        return ""
    text = data[:cap].decode("utf-8", "replace")
    return text + ("\n[output cut]" if len(data) > cap else "")


class _EventReader:
    """Reads the plugin's JSON-lines file incrementally (the child may still be writing)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.buffer = b""

    def poll(self) -> list[dict]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue  # a torn or forged line is ignored, never trusted
        return events


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "was killed"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGKILL": " (often: out of memory)", "SIGXCPU": " (CPU time limit)",
                "SIGSEGV": " (a crash)"}.get(name, "")
        return f"died from {name}{hint}"
    return f"exited with code {code}"


def run_tests(
    paths: list[Path],
    impl: Path | None,
    module_name: str | None,
    root: Path,
    limits: Limits = Limits(),
    fail_fast: bool = False,
    junit_xml: Path | None = None,
    sweep: list[Path] | None = None,
) -> SuiteResult:
    """Run the tests under `paths` on `impl` (None: the reference) and return every test's result.

    `sweep`: run every test once per implementation in the list instead (see the plugin).
    """
    started = time.monotonic()
    tests: dict[str, TestResult] = {}  # node id -> result, insertion = collection order
    finished: set[str] = set()
    restarts = 0
    run_message = None
    with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmpname:
        tmp = Path(tmpname)
        ini = tmp / "pytest.ini"
        ini.write_text("[pytest]\n")
        targets = [str(p) for p in paths]
        while True:
            events_path = tmp / f"events-{restarts}.jsonl"
            out_path = tmp / f"output-{restarts}.txt"
            cmd = [
                sys.executable, "-m", "pytest", *targets,
                "-c", str(ini), "--rootdir", str(root),
                "-q", "--show-capture=no", "--tb=short", "--no-header",
                "-p", "no:cacheprovider", "-p", "no:randomly",
                "--timeout", str(limits.test_timeout), "--timeout-method", "signal",
                "--kata-events", str(events_path),
            ]
            if impl is not None:
                cmd += ["--kata-impl", str(impl)]
            if module_name:
                cmd += ["--kata-impl-module", module_name]
            if fail_fast:
                cmd.append("-x")
            if sweep:
                cmd += ["--kata-sweep", os.pathsep.join(str(p) for p in sweep)]
            if junit_xml is not None and restarts == 0:
                cmd += ["--junitxml", str(junit_xml), "-o", "junit_family=xunit2"]
            remaining_wall = limits.wall_timeout - (time.monotonic() - started)
            cpu = int(max(remaining_wall, 1)) + 10
            with out_path.open("wb") as out:
                child = subprocess.Popen(
                    cmd, cwd=root, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=_child_env(tmp), start_new_session=True,
                    preexec_fn=_limit_child(limits.memory_bytes, cpu),
                )
                current, current_since, killed_for = None, None, None
                reader = _EventReader(events_path)

                def absorb(events):
                    nonlocal current, current_since
                    for ev in events:
                        kind = ev.get("event")
                        if kind == "collected":
                            for t in ev.get("tests", []):
                                if t["id"] not in tests:
                                    tests[t["id"]] = TestResult(
                                        name=t["id"], status=ERROR, message="no result was reported",
                                        task_id=t.get("level"),
                                        points=t.get("points") if t.get("points") is not None else 1.0,
                                        edge=t.get("edge"), impl=t.get("impl"),
                                    )
                        elif kind == "start":
                            current, current_since = ev["id"], time.monotonic()
                        elif kind == "report" and ev.get("id") in tests:
                            _apply_report(tests[ev["id"]], ev)
                            if ev["when"] == "teardown":
                                finished.add(ev["id"])
                                if current == ev["id"]:
                                    current = None

                while child.poll() is None:
                    absorb(reader.poll())
                    now = time.monotonic()
                    if current is not None and now - current_since > limits.test_timeout + limits.hard_test_grace:
                        killed_for = f"timed out: still running after {limits.test_timeout + limits.hard_test_grace:.0f}s, the process was killed"
                    elif now - started > limits.wall_timeout:
                        killed_for = f"the whole run passed its {limits.wall_timeout:.0f}s wall-clock limit and was stopped"
                    if killed_for:
                        _kill_group(child)
                        break
                    time.sleep(0.02)
                child.wait()
                absorb(reader.poll())
            output = _read_capped(out_path)
            if not tests:
                run_message = (
                    "no test was collected; pytest " + _describe_exit(child.returncode)
                    + (": " + output.strip()[-1500:] if output.strip() else "")
                )
                break
            if current is not None and current not in finished:
                t = tests[current]
                t.status = ERROR
                t.message = killed_for or f"the test process {_describe_exit(child.returncode)} during this test"
                t.output = (t.output or "") + output[-2000:] if output else t.output
                finished.add(current)
            if killed_for and "wall-clock" in killed_for:
                run_message = killed_for
                break
            pending = [name for name in tests if name not in finished]
            if not pending or fail_fast or restarts >= limits.max_restarts:
                break
            if time.monotonic() - started > limits.wall_timeout:
                run_message = f"the whole run passed its {limits.wall_timeout:.0f}s wall-clock limit"
                break
            restarts += 1
            targets = pending  # a fresh child for the tests with no result yet
    for name, t in tests.items():
        if name not in finished and t.status != ERROR:
            t.status, t.message = ERROR, "no result was reported"
        elif name not in finished and run_message and t.message == "no result was reported":
            t.message = f"not run: {run_message}"
    results = list(tests.values())
    if not results:
        status = ERROR
    elif all(t.status == ERROR for t in results):
        status = ERROR
        run_message = run_message or _common_message(results)
    elif all(t.status == PASS for t in results):
        status = PASS
    else:
        status = FAIL
    return SuiteResult(status=status, message=run_message, tests=results,
                       duration=round(time.monotonic() - started, 3), restarts=restarts)


def _apply_report(t: TestResult, ev: dict) -> None:
    when, outcome = ev["when"], ev["outcome"]
    t.duration += ev.get("duration", 0.0)
    if ev.get("output"):
        t.output = ((t.output or "") + ev["output"])[:4000]
    if when == "setup":
        if outcome == "failed":
            t.status, t.message, t.detail = ERROR, ev.get("message"), ev.get("detail")
        elif outcome == "skipped":
            t.status, t.message = FAIL, f"skipped: {ev.get('message')}"
    elif when == "call":
        if outcome == "passed":
            t.status, t.message = PASS, None
        elif outcome == "failed":
            t.status, t.message, t.detail = FAIL, ev.get("message"), ev.get("detail")
        else:
            t.status, t.message = FAIL, f"skipped: {ev.get('message')}"
    elif when == "teardown" and outcome == "failed" and t.status == PASS:
        t.status, t.message, t.detail = ERROR, ev.get("message"), ev.get("detail")


def _common_message(results: list[TestResult]) -> str | None:
    messages = {t.message for t in results}
    return messages.pop() if len(messages) == 1 else None


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()


# --- scoring ----------------------------------------------------------------


def score(result: SuiteResult, kata: Kata) -> SuiteResult:
    """Fill in per-level and total points: level points x (weight passed / weight of its tests)."""
    levels = []
    for lv in kata.levels:
        mine = [t for t in result.tests if t.task_id == lv.number]
        weight = sum(t.points for t in mine)
        won = sum(t.points for t in mine if t.status == PASS)
        earned = round(lv.points * won / weight, 2) if weight else 0.0
        levels.append(LevelScore(lv.number, lv.name, sum(t.status == PASS for t in mine),
                                 len(mine), earned, lv.points))
    result.levels = levels
    result.points_earned = round(sum(lv.points_earned for lv in levels), 2)
    result.points_possible = kata.points
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
    result = run_tests(test_files or [kata.grader], None, kata.module_name, kata.root, limits,
                       sweep=resolved)
    verdict: dict[Path, bool | None] = {}
    for bug in resolved:
        mine = [t for t in result.tests if t.impl == str(bug)]
        verdict[bug] = (any(t.status != PASS and SWEEP_SKIP not in (t.message or "") for t in mine)
                        if mine else None)
    return verdict


def grade(kata: Kata, impl: Path | None, suite: str = "hidden", limits: Limits = Limits(),
          fail_fast: bool = False, junit_xml: Path | None = None) -> SuiteResult:
    """Grade `impl` (None: the reference) on the kata's hidden suite or its visible tests."""
    if suite == "hidden":
        paths = [kata.grader]
    elif suite == "visible":
        paths = [kata.visible_tests]
    else:
        raise ValueError(f"suite must be 'hidden' or 'visible', got {suite!r}")
    for p in paths:
        if not p.exists():
            return SuiteResult(status=ERROR, message=f"{p}: missing: this workbook has no such tests",
                               tests=[])
    if impl is not None and not impl.is_file():
        return SuiteResult(status=ERROR, message=f"{impl}: no such file", tests=[])
    result = run_tests(paths, impl, kata.module_name, kata.root, limits, fail_fast, junit_xml)
    return score(result, kata)
