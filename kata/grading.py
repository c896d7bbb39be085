"""The one grading harness: run a kata's tests on one implementation file, in a child process.

`kata check`, `kata submit`, `kata validate`, `kata grade-batch` and the bug-zoo tests all come
through `run_tests`, which runs the same pytest code a learner can run by hand:

    pytest graders/<slug> --kata-impl workspace/<module>.py

The child is untrusted. Each run works on a private copy: the kata's graders, reference and prompt
files and the learner's file are copied into a fresh temporary folder, which is the child's working
directory and root (the child is never told where the workbook is), and the hidden suite's files are
checked against graders/<slug>/MANIFEST.json before and after. The child runs in its own process
group with memory, CPU and per-test time limits, and dies with its parent (PR_SET_PDEATHSIG; and
SIGINT/SIGTERM/SIGHUP in the parent kill every grading child first). The parent follows the event
stream the plugin writes (kata/pytest_plugin.py), every line signed with a key only the two share and
numbered, and

* gives one verdict to every test when the learner's module hangs, crashes or exits at import;
* kills the whole group when one test outlives its hard bound; after two timeouts in a row, later
  tests get a short bound, and the whole run has a budget (`Limits.wall_timeout`) after which the
  tests not yet run are reported as such, with the reason;
* marks the test a dead child was running as an error (exit code 0 proves nothing: `os._exit(0)`
  exits 0 with no report) and starts a fresh child on the tests that have no result yet;
* reports every test with no result as an error, never as a pass;
* trusts no event it did not expect: an unsigned or out-of-order line, a second report for a test,
  a report for a test not running, a canary test that passed, or the plugin's "tampered" event
  mark the whole run tampered, and a tampered run scores 0 points.

The result is shaped like Exercism's results.json v3 (status, message, tests[] in file order with
name, status, message, output, task_id = level) plus points earned and possible per level. JUnit
XML is written by the parent from the merged result, so it is complete across restarts.

What it leaves out: this is a practice tool, not a sandbox. Code in the child can, with effort,
read the plugin's memory or find the installed package; see the README.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kata.catalog import CatalogError, Kata

PASS, FAIL, ERROR = "pass", "fail", "error"
OUTPUT_CAP = 64 * 1024  # bytes of the child's own stdout/stderr kept


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one grading run. Defaults suit a kata's hidden suite on a small machine."""

    test_timeout: float = 20.0  # pytest-timeout per test (signal method: a clean failure)
    hard_test_grace: float = 3.0  # then the parent kills the child (a loop inside C code)
    wall_timeout: float = 60.0  # the budget of the whole run, restarts included
    import_timeout: float = 10.0  # importing the learner's module, once, before the first test
    strike_timeout: float = 5.0  # per test, once two tests in a row have timed out
    memory_bytes: int = 3 * 1024**3  # RLIMIT_AS of the child
    max_restarts: int = 200

    def __post_init__(self):
        for name in ("test_timeout", "hard_test_grace", "wall_timeout", "import_timeout",
                     "strike_timeout"):
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
    tampered: str | None = None  # why the run's verdicts cannot be trusted (then 0 points)
    version: int = 3

    @property
    def passed(self) -> int:
        return sum(t.status == PASS for t in self.tests)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "SuiteResult":
        data = dict(data)
        data.setdefault("tampered", None)
        data["tests"] = [TestResult(**t) for t in data.get("tests", [])]
        data["levels"] = [LevelScore(**lv) for lv in data.get("levels", [])]
        return cls(**data)

    def outcome_key(self) -> list[tuple]:
        """What must be identical between two gradings of the same code (no timings)."""
        return [(t.name, t.status, t.task_id, t.points) for t in self.tests]


# --- the child process ------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_LIBC: list = []  # [libc handle or None], loaded once in the parent


def _libc():
    """libc, loaded in the parent: after fork, in a child of a threaded parent (grade-batch and
    validate grade from worker threads), an import or a dlopen could deadlock on a lock another
    thread held at fork time; the child only calls functions it already has."""
    if not _LIBC:
        try:
            import ctypes

            _LIBC.append(ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None)
        except OSError:  # pragma: no cover - no libc to load: the signal handlers remain
            _LIBC.append(None)
    return _LIBC[0]


def _limit_child(memory_bytes: int, cpu_seconds: int, parent_pid: int):
    import resource

    libc = _libc()
    prctl = getattr(libc, "prctl", None) if libc is not None else None

    def apply():  # runs in the child between fork and exec: no imports, no allocations of note
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the parent, even on SIGKILL
            if os.getppid() != parent_pid:  # the parent died before prctl took effect
                os._exit(1)

    return apply


def _pycache_dir() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path("kata-workbook", appauthor=False) / "pycache"


def _child_env(tmp: Path, secret_fd: int) -> dict:
    env = dict(os.environ)
    for var in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "HYPOTHESIS_PROFILE", "KATA_WORKBOOK",
                "KATA_STATE_DIR", "PYTHONPATH"):
        env.pop(var, None)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp / "hypothesis")
    env["PYTHONHASHSEED"] = "0"
    env["KATA_SECRET_FD"] = str(secret_fd)
    # bytecode (pytest's rewritten test modules included) goes to the user's cache folder, never
    # beside an installed package: grading writes nothing under site-packages
    env["PYTHONPYCACHEPREFIX"] = str(_pycache_dir())
    return env


# Every grading child alive in this process, so that a signal to `kata` kills them first.
_CHILDREN: set[subprocess.Popen] = set()
_CHILDREN_LOCK = threading.Lock()
_GUARD = {"depth": 0, "previous": {}}


def _kill_all_children() -> None:
    with _CHILDREN_LOCK:
        children = list(_CHILDREN)
    for child in children:
        _kill_group(child)


def _on_signal(signum, frame):
    _kill_all_children()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    previous = _GUARD["previous"].get(signum)
    signal.signal(signum, previous if callable(previous) or previous in (signal.SIG_IGN,)
                  else signal.SIG_DFL)
    signal.raise_signal(signum)


@contextmanager
def child_guard():
    """While inside, SIGINT, SIGTERM and SIGHUP kill every grading child before `kata` exits.

    Re-entrant; a no-op outside the main thread (signal handlers live there). Commands that grade
    from worker threads (grade-batch, validate) wrap their whole pool in it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _GUARD["depth"] == 0:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            _GUARD["previous"][sig] = signal.signal(sig, _on_signal)
    _GUARD["depth"] += 1
    try:
        yield
    finally:
        _GUARD["depth"] -= 1
        if _GUARD["depth"] == 0:
            for sig, previous in _GUARD["previous"].items():
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            _GUARD["previous"] = {}


def _read_capped(path: Path, cap: int = OUTPUT_CAP) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
    except FileNotFoundError:
        return ""
    text = data[:cap].decode("utf-8", "replace")
    return text + ("\n[output cut]" if len(data) > cap else "")


class _EventReader:
    """Reads the plugin's JSON-lines file incrementally (the child may still be writing) and checks
    each line's signature and sequence number. A line that fails either is reported as forged."""

    def __init__(self, path: Path, key: bytes):
        self.path = path
        self.key = key
        self.offset = 0
        self.buffer = b""
        self.seq = 0
        self.forged: str | None = None

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
            if self.forged:
                break
            event = self._verify(line)
            if event is not None:
                events.append(event)
        return events

    def _verify(self, line: bytes) -> dict | None:
        try:
            outer = json.loads(line)
            body, sig = outer["body"], outer["sig"]
            want = hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(want, str(sig)):
                raise ValueError("bad signature")
            event = json.loads(body)
            if event.get("n") != self.seq + 1:
                raise ValueError(f"event {event.get('n')} where {self.seq + 1} was due")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.forged = f"the grading event stream holds a line the plugin did not write ({exc})"
            return None
        self.seq += 1
        return event


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


# --- the private copy and the manifest --------------------------------------

MANIFEST = "MANIFEST.json"
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


class IntegrityError(CatalogError):
    """The hidden suite on disk is not the one `kata validate` recorded: no grade is given."""


def _manifest_files(kata: Kata) -> list[Path]:
    files = [p for p in sorted(kata.grader.rglob("*"))
             if p.is_file() and p.name != MANIFEST and "__pycache__" not in p.parts
             and p.suffix != ".pyc"]
    if kata.solution.is_file():
        files.append(kata.solution)
    return files


def compute_manifest(kata: Kata) -> dict:
    """{"files": {path relative to the workbook root: sha256}} of the hidden suite and reference."""
    return {"files": {p.relative_to(kata.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                      for p in _manifest_files(kata)}}


def write_manifest(kata: Kata) -> bool:
    """Write graders/<slug>/MANIFEST.json (by `kata validate`); True if it changed."""
    path = kata.grader / MANIFEST
    text = json.dumps(compute_manifest(kata), indent=1, sort_keys=True) + "\n"
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def verify_manifest(kata: Kata) -> None:
    """Raise IntegrityError naming the first file that differs from graders/<slug>/MANIFEST.json."""
    path = kata.grader / MANIFEST
    rel = path.relative_to(kata.root).as_posix()
    fix = f"restore it (e.g. `git checkout graders/{kata.slug} solutions`), or run `kata validate {kata.slug}` if you changed it on purpose"
    try:
        recorded = json.loads(path.read_text())["files"]
    except FileNotFoundError:
        raise IntegrityError(f"{rel}: missing: run `kata validate {kata.slug}` to write it") from None
    except (ValueError, KeyError, TypeError):
        raise IntegrityError(f"{rel}: not a manifest kata can read: {fix}") from None
    actual = compute_manifest(kata)["files"]
    for name in sorted(recorded.keys() | actual.keys()):
        if name not in actual:
            raise IntegrityError(f"{name}: missing from the hidden suite since {rel} was written: {fix}")
        if name not in recorded:
            raise IntegrityError(f"{name}: not in {rel}, added after it was written: {fix}")
        if recorded[name] != actual[name]:
            raise IntegrityError(f"{name}: changed since {rel} was written: {fix}")


def private_copy(kata: Kata, dest: Path) -> Path:
    """Copy what grading the kata needs into dest/wb (a workbook of one kata); return its root."""
    root = dest / "wb"
    shutil.copytree(kata.dir, root / "katas" / kata.slug, ignore=_COPY_IGNORE)
    if kata.grader.is_dir():
        shutil.copytree(kata.grader, root / "graders" / kata.slug, ignore=_COPY_IGNORE)
    if kata.solution.is_file():
        (root / "solutions").mkdir(parents=True, exist_ok=True)
        shutil.copy2(kata.solution, root / "solutions" / kata.solution.name)
    return root


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
    junit_xml: Path | None = None,
    sweep: list[Path] | None = None,
    canaries: bool = True,
    levels: list[int] | None = None,
    on_progress=None,
) -> SuiteResult:
    """Run the tests under `paths` on `impl` (None: the reference) and return every test's result.

    `root` is the (private) workbook the child runs in; `paths` lie under it. `sweep`: run every
    test once per implementation in the list instead (see the plugin). `canaries`: insert tests
    that must fail, to prove the verdicts were not forged (off in sweep mode). `levels`: run only
    the tests of these levels. `on_progress(done, total, level)` is called once the tests are
    collected (level None) and as each test finishes; done counts the suite's own tests only
    (never the canaries), so it never exceeds total.
    """
    with child_guard():
        return _run(paths, impl, module_name, root, limits, junit_xml, sweep,
                    canaries and not sweep, levels, on_progress)


def _run(paths, impl, module_name, root, limits, junit_xml, sweep, use_canaries,
         levels=None, on_progress=None) -> SuiteResult:
    started = time.monotonic()
    tests: dict[str, TestResult] = {}  # node id -> result, insertion = collection order
    finished: set[str] = set()
    restarts = 0
    run_message = None
    tampered: str | None = None
    strikes = 0  # tests in a row that timed out
    timed_out_tests = 0

    def over_budget() -> str:
        return (f"the submission used up its {limits.wall_timeout:g}s grading budget "
                f"({timed_out_tests} test(s) timed out)")

    with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmpname:
        tmp = Path(tmpname)
        ini = tmp / "pytest.ini"
        ini.write_text("[pytest]\n")
        targets = [str(p) for p in paths]
        while True:
            events_path = tmp / f"events-{restarts}.jsonl"
            out_path = tmp / f"output-{restarts}.txt"
            key = secrets.token_hex(16).encode()
            canaries = _canaries() if use_canaries else []
            canary_ids: dict[str, str | None] = {name: None for name, _ in canaries}
            per_test = limits.strike_timeout if strikes >= 2 else limits.test_timeout
            cmd = [
                sys.executable, "-m", "pytest", *targets,
                "-c", str(ini), "--rootdir", str(root),
                "-q", "--show-capture=no", "--tb=short", "--no-header",
                "-p", "no:cacheprovider", "-p", "no:randomly",
                "--timeout", str(per_test), "--timeout-method", "signal",
                "--kata-events", str(events_path),
            ]
            if impl is not None:
                cmd += ["--kata-impl", str(impl)]
            if module_name:
                cmd += ["--kata-impl-module", module_name]
            if sweep:
                cmd += ["--kata-sweep", os.pathsep.join(str(p) for p in sweep)]
            if levels and restarts == 0:  # a restart names its tests one by one
                cmd += ["--kata-levels", ",".join(str(n) for n in levels)]
            remaining_wall = limits.wall_timeout - (time.monotonic() - started)
            cpu = int(max(remaining_wall, 1)) + 10
            secret_r, secret_w = os.pipe()
            os.write(secret_w, json.dumps({"key": key.decode(), "canaries": canaries}).encode())
            os.close(secret_w)
            try:
                with out_path.open("wb") as out:
                    child = subprocess.Popen(
                        cmd, cwd=root, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                        env=_child_env(tmp, secret_r), start_new_session=True, pass_fds=(secret_r,),
                        preexec_fn=_limit_child(limits.memory_bytes, cpu, os.getpid()),
                    )
            finally:
                os.close(secret_r)
            with _CHILDREN_LOCK:
                _CHILDREN.add(child)
            finished_before = len(finished)
            state = {"current": None, "since": None, "importing": None, "import_error": None,
                     "finished_at": None, "whens": {}}
            killed_for, budget_hit = None, False
            reader = _EventReader(events_path, key)

            def distrust(why: str) -> None:
                nonlocal tampered
                tampered = tampered or why

            def absorb(events):
                nonlocal strikes, timed_out_tests
                for ev in events:
                    kind = ev.get("event")
                    if state["finished_at"] is not None:
                        distrust(f"an event arrived after the run's last one ({kind})")
                    if kind == "collected":
                        for t in ev.get("tests", []):
                            name = t["id"].split("::")[-1]
                            if name in canary_ids:
                                canary_ids[name] = t["id"]
                                continue
                            if t["id"] not in tests:
                                tests[t["id"]] = TestResult(
                                    name=t["id"], status=ERROR, message="no result was reported",
                                    task_id=t.get("level"),
                                    points=t.get("points") if t.get("points") is not None else 1.0,
                                    edge=t.get("edge"), impl=t.get("impl"),
                                )
                        if on_progress is not None and tests:  # the total, before any result
                            on_progress(len(finished.intersection(tests)), len(tests), None)
                    elif kind == "import":
                        if ev.get("state") == "start":
                            state["importing"] = time.monotonic()
                        else:
                            state["importing"] = None
                            state["import_error"] = ev.get("error")
                    elif kind == "start":
                        if state["current"] is not None:
                            distrust(f"a test started while {state['current']} had not finished")
                        state["current"], state["since"] = ev["id"], time.monotonic()
                        state["whens"] = {}
                    elif kind == "report":
                        test_id, when = ev.get("id"), ev.get("when")
                        if test_id != state["current"] or when in state["whens"]:
                            distrust(f"an unexpected report for {test_id} ({when})")
                            continue
                        state["whens"][when] = ev.get("outcome")
                        name = test_id.split("::")[-1]
                        if name in canary_ids:
                            if when == "call" and ev.get("outcome") != "failed":
                                distrust(f"a test that must fail was reported {ev.get('outcome')}")
                        elif test_id in tests and test_id not in finished:
                            _apply_report(tests[test_id], ev)
                            if when == "call":
                                if ev.get("outcome") == "failed" and (ev.get("message") or "").startswith("timed out"):
                                    strikes += 1
                                    timed_out_tests += 1
                                else:
                                    strikes = 0
                        elif test_id not in tests:
                            distrust(f"a report for a test that was never collected ({test_id})")
                        if when == "teardown":
                            if name in canary_ids and "call" not in state["whens"] and \
                                    state["whens"].get("setup") == "passed":
                                distrust("a test that must fail was never called")
                            finished.add(test_id)
                            state["current"] = None
                            if on_progress is not None and test_id in tests:
                                on_progress(len(finished.intersection(tests)), len(tests),
                                            tests[test_id].task_id)
                    elif kind == "tampered":
                        distrust("the grading machinery was changed while your code ran "
                                 f"({', '.join(ev.get('what', []))[:200]}, {ev.get('when')})")
                    elif kind == "finish":
                        state["finished_at"] = time.monotonic()
                if reader.forged:
                    distrust(reader.forged)

            try:
                while child.poll() is None:
                    absorb(reader.poll())
                    now = time.monotonic()
                    bound = (limits.strike_timeout if strikes >= 2 else limits.test_timeout) \
                        + limits.hard_test_grace
                    if state["importing"] is not None and now - state["importing"] > limits.import_timeout:
                        killed_for = (f"importing your module did not finish within "
                                      f"{limits.import_timeout:g}s (code at module level that never ends?)")
                    elif state["current"] is not None and now - state["since"] > bound:
                        killed_for = f"timed out: still running after {bound:.0f}s, the process was killed"
                    elif now - started > limits.wall_timeout:
                        killed_for, budget_hit = over_budget(), True
                    elif state["finished_at"] is not None and now - state["finished_at"] > 2.0:
                        killed_for = "finished"  # a thread the learner left running holds the exit
                    elif tampered:
                        killed_for = "tampered"  # the verdict is 0 points already: stop now
                    if killed_for:
                        _kill_group(child)
                        break
                    time.sleep(0.02)
                child.wait()
                absorb(reader.poll())
            finally:
                _kill_group(child)  # grandchildren the learner spawned, too
                with _CHILDREN_LOCK:
                    _CHILDREN.discard(child)
            output = _read_capped(out_path)
            if not tests:
                run_message = (
                    "no test was collected; pytest " + _describe_exit(child.returncode)
                    + (": " + output.strip()[-1500:] if output.strip() else "")
                )
                break
            if state["importing"] is not None:  # the module never finished importing
                verdict = killed_for or (f"the test process {_describe_exit(child.returncode)} while "
                                         "importing your module (sys.exit or os._exit at module level?)")
                for name, t in tests.items():
                    if name not in finished:
                        t.status, t.message = ERROR, verdict
                        finished.add(name)
                run_message = verdict
                break
            current = state["current"]
            progressed = len(finished) > finished_before or current is not None
            if current is not None and current not in finished and current in tests:
                t = tests[current]
                t.status = ERROR
                t.message = killed_for or f"the test process {_describe_exit(child.returncode)} during this test"
                t.output = (t.output or "") + output[-2000:] if output else t.output
                finished.add(current)
                if killed_for and killed_for.startswith("timed out"):
                    strikes += 1
                    timed_out_tests += 1
            if tampered:
                break
            if budget_hit:
                run_message = killed_for
                break
            pending = [name for name in tests if name not in finished]
            if not pending or restarts >= limits.max_restarts:
                break
            if not progressed:  # a fresh child would do the same again
                run_message = ("the test process " + _describe_exit(child.returncode)
                               + " before running a test"
                               + (": " + output.strip()[-1500:] if output.strip() else ""))
                break
            if time.monotonic() - started > limits.wall_timeout:
                run_message = over_budget()
                break
            restarts += 1
            targets = pending  # a fresh child for the tests with no result yet
    for name, t in tests.items():
        if name not in finished and t.status != ERROR:
            t.status, t.message = ERROR, "no result was reported"
        elif name not in finished and run_message and t.message == "no result was reported":
            t.message = f"not run: {run_message}"
    results = list(tests.values())
    if tampered:
        status = ERROR
        run_message = (f"tampered: {tampered}. A run whose verdicts cannot be trusted scores 0 "
                       "points; submit code that only solves the kata")
    elif not results:
        status = ERROR
    elif all(t.status == ERROR for t in results):
        status = ERROR
        run_message = run_message or _common_message(results)
    elif all(t.status == PASS for t in results):
        status = PASS
    else:
        status = FAIL
    result = SuiteResult(status=status, message=run_message, tests=results,
                         duration=round(time.monotonic() - started, 3), restarts=restarts,
                         tampered=tampered)
    if junit_xml is not None:
        write_junit(result, junit_xml)
    return result


def write_junit(result: SuiteResult, path: Path) -> None:
    """JUnit XML of the merged result (complete across child restarts), for CI importers."""
    import xml.etree.ElementTree as ET

    failures = sum(t.status == FAIL for t in result.tests)
    errors = sum(t.status == ERROR for t in result.tests)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name="kata", tests=str(len(result.tests)),
                          failures=str(failures), errors=str(errors), skipped="0",
                          time=f"{result.duration:.3f}")
    for t in result.tests:
        file, _, rest = t.name.partition("::")
        classname = file.removesuffix(".py").replace("/", ".")
        case = ET.SubElement(suite, "testcase", classname=classname, name=rest or file,
                             time=f"{t.duration:.3f}")
        props = ET.SubElement(case, "properties")
        for key, value in (("level", t.task_id), ("points", t.points), ("edge", t.edge)):
            if value is not None:
                ET.SubElement(props, "property", name=key, value=str(value))
        if t.status in (FAIL, ERROR):
            tag = "failure" if t.status == FAIL else "error"
            node = ET.SubElement(case, tag, message=(t.message or "")[:500])
            node.text = t.detail or t.message or ""
        if t.output:
            ET.SubElement(case, "system-out").text = t.output
    if result.message:
        ET.SubElement(suite, "system-err").text = result.message
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


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
        try:
            child.kill()
        except ProcessLookupError:
            pass


# --- scoring ----------------------------------------------------------------


def score(result: SuiteResult, kata: Kata, levels: list[int] | None = None) -> SuiteResult:
    """Fill in per-level and total points: level points x (weight passed / weight of its tests).

    `levels`: the levels graded (an exam question's, or those open so far); default every level."""
    graded = [lv for lv in kata.levels if levels is None or lv.number in levels]
    levels = []
    for lv in graded:
        mine = [t for t in result.tests if t.task_id == lv.number]
        weight = sum(t.points for t in mine)
        won = sum(t.points for t in mine if t.status == PASS)
        earned = round(lv.points * won / weight, 2) if weight and not result.tampered else 0.0
        levels.append(LevelScore(lv.number, lv.name, sum(t.status == PASS for t in mine),
                                 len(mine), earned, lv.points))
    result.levels = levels
    result.points_earned = round(sum(lv.points_earned for lv in levels), 2)
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
    with tempfile.TemporaryDirectory(prefix="kata-zoo-") as tmp:
        root = private_copy(kata, Path(tmp))
        files = [root / Path(f).resolve().relative_to(kata.root.resolve()) for f in test_files] \
            if test_files else [root / "graders" / kata.slug]
        result = run_tests(files, None, kata.module_name, root, limits, sweep=resolved)
    verdict: dict[Path, bool | None] = {}
    for bug in resolved:
        mine = [t for t in result.tests if t.impl == str(bug)]
        verdict[bug] = (any(t.status != PASS and SWEEP_SKIP not in (t.message or "") for t in mine)
                        if mine else None)
    return verdict


def grade(kata: Kata, impl: Path | None, suite: str = "hidden", limits: Limits = Limits(),
          junit_xml: Path | None = None, code: str | None = None,
          levels: list[int] | None = None, on_progress=None) -> SuiteResult:
    """Grade `impl` (None: the reference) on the kata's hidden suite or its visible tests; with
    `levels`, on those levels' tests only (and scored over those levels only).

    The run works on a private copy (see the module docstring): `code`, when given, is the text to
    grade (a snapshot taken when the submission started), else `impl`'s content now. The hidden
    suite is checked against its manifest before the run (IntegrityError: no grade) and after it
    (changed during the run: the run is tampered, 0 points).
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
    if impl is not None and code is None and not impl.is_file():
        return SuiteResult(status=ERROR, message=f"{impl}: no such file", tests=[])
    with tempfile.TemporaryDirectory(prefix="kata-run-") as tmp:
        root = private_copy(kata, Path(tmp))
        private_impl = None
        if impl is not None:
            private_impl = Path(tmp) / "submission" / kata.module
            private_impl.parent.mkdir()
            if code is not None:
                private_impl.write_text(code, encoding="utf-8")
            else:
                shutil.copyfile(impl, private_impl)
        result = run_tests([root / rel], private_impl, kata.module_name, root, limits, junit_xml,
                           levels=levels, on_progress=on_progress)
        if impl is not None:  # tracebacks name the learner's file, not the private copy
            shown = f"{impl.parent.name}/{impl.name}"
            for t in result.tests:
                for attr in ("detail", "message"):
                    text = getattr(t, attr)
                    if text:
                        setattr(t, attr, text.replace(str(private_impl), shown)
                                .replace(f"../submission/{kata.module}", shown))
    if suite == "hidden":
        try:
            verify_manifest(kata)
        except IntegrityError as exc:
            result.tampered = result.tampered or f"the hidden suite changed while your code ran ({exc})"
            result.status = ERROR
            result.message = (f"tampered: {result.tampered}. A run whose verdicts cannot be trusted "
                              "scores 0 points; submit code that only solves the kata")
    return score(result, kata, levels)
