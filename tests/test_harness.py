"""The run supervisor against a child that attacks the harness rather than the kata.

Each test names the attack; most run without the sandbox (KATA_SANDBOX=off), where the harness
alone must hold, and `tests/test_sandbox.py` covers what the sandbox adds.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kata.catalog import Workbook, load_kata
from kata.grading import ERROR, PASS, Limits, grade
from kata.supervisor import RunSupervisor, watchdog
from tests.test_grading import FAST, HOSTILE, by_name


@pytest.fixture
def adder(fixture_workbook):
    return load_kata(fixture_workbook, "adder")


@pytest.fixture
def unsandboxed(monkeypatch):
    monkeypatch.setenv("KATA_SANDBOX", "off")


# --- the protocol, without a child ------------------------------------------------


def test_the_supervisor_reads_a_run_as_its_events():
    sup = RunSupervisor(FAST)
    sup.begin_child([("test_canary_x", 0.5)])
    for ev in ({"event": "collected", "tests": [{"id": "g/t.py::test_a", "level": 1, "points": 2},
                                                {"id": "g/t.py::test_canary_x", "level": 1}]},
               {"event": "start", "id": "g/t.py::test_a"},
               {"event": "report", "id": "g/t.py::test_a", "when": "setup", "outcome": "passed"},
               {"event": "report", "id": "g/t.py::test_a", "when": "call", "outcome": "passed"},
               {"event": "report", "id": "g/t.py::test_a", "when": "teardown", "outcome": "passed"},
               {"event": "finish"}):
        sup.feed(ev)
    assert sup.tampered is None and sup.finished == {"g/t.py::test_a"}
    assert [(t.name, t.status, t.points) for t in sup.result().tests] == [("g/t.py::test_a", PASS, 2)]
    sup.feed({"event": "start", "id": "g/t.py::test_a"})  # after "finish": nothing is expected
    assert "after the run's last one" in sup.tampered


@pytest.mark.parametrize("event, why", [
    ({"event": "report", "id": "x", "when": "call", "outcome": "passed"}, "unexpected report"),
    ({"event": "shrug"}, "does not know"),
    ({"event": "tampered", "what": ["runner.call"], "when": "after x"}, "machinery was changed"),
])
def test_an_event_out_of_protocol_makes_the_run_tampered(event, why):
    sup = RunSupervisor(FAST)
    sup.feed(event)
    assert why in (sup.tampered or "")
    assert watchdog(sup, time.monotonic()) == "tampered"


def test_the_watchdog_says_why_it_stops_a_child():
    limits = Limits(test_timeout=2, hard_test_grace=1, import_timeout=3, wall_timeout=60)
    sup = RunSupervisor(limits)
    now = time.monotonic()
    assert watchdog(sup, now) is None
    sup.feed({"event": "import", "state": "start"})
    assert "importing your module did not finish within 3s" in watchdog(sup, now + 4)
    sup.feed({"event": "import", "state": "done"})
    sup.feed({"event": "start", "id": "t"})
    assert watchdog(sup, now + 2) is None
    assert watchdog(sup, now + 4).startswith("timed out: still running after 3s")
    for when in ("setup", "call", "teardown"):
        sup.feed({"event": "report", "id": "t", "when": when, "outcome": "passed"})
    assert "used up its 60s grading budget" in watchdog(sup, now + 61)


# --- attacks on the harness ---------------------------------------------------------


def test_a_rewritten_private_copy_is_a_tampered_run(adder, unsandboxed):
    result = grade(adder, HOSTILE / "rewrite_private_copy.py", limits=FAST)
    assert result.tampered and "private copy" in result.tampered, result
    assert result.points_earned == 0 and result.status == ERROR


def test_rewriting_the_test_functions_code_in_memory_earns_zero(adder, unsandboxed):
    result = grade(adder, HOSTILE / "rewrite_test_code.py", limits=FAST)
    assert result.tampered and "code:" in result.tampered, result
    assert result.points_earned == 0 and result.message.startswith("tampered:")


def test_a_fifo_where_an_events_file_could_be_does_not_hang_the_verdict(adder, unsandboxed):
    limits = Limits(test_timeout=2, hard_test_grace=2, wall_timeout=30)
    started = time.monotonic()
    result = grade(adder, HOSTILE / "fifo_events.py", limits=limits)
    assert time.monotonic() - started < 30  # within the budget
    assert result.status == PASS, result  # events come over a pipe: nothing to block on


# --- an honest hang costs only the tests that reach it ------------------------------

SPIN = "while True:\n                    pass\n                "


@pytest.fixture
def lru():
    return Workbook.find(Path(__file__).resolve().parents[1]).kata("lru-kv-cache")


def test_a_hang_on_a_common_path_loses_only_the_tests_that_reach_it(lru, tmp_path):
    """One eviction path spins forever: the budget runs out, and the tests it did not reach are
    still graded (the rescue run), exactly as if that path had raised instead."""
    source = lru.solution.read_text()
    path = "                evicted.append(victim.key)\n"
    assert path in source
    spins = tmp_path / "spins" / lru.module
    raises = tmp_path / "raises" / lru.module
    for target, body in ((spins, SPIN), (raises, "raise RuntimeError('bug')\n                ")):
        target.parent.mkdir()
        target.write_text(source.replace(path, "                " + body + path.lstrip()))
    limits = Limits(test_timeout=1, hard_test_grace=1, strike_timeout=0.5, wall_timeout=8)
    hang = grade(lru, spins, limits=limits, levels=[1])  # level 1 evicts in many of its tests
    crash = grade(lru, raises, limits=limits, levels=[1])
    lost = {n for n, t in by_name(hang).items() if t.status != PASS}
    wrong = {n for n, t in by_name(crash).items() if t.status != PASS}
    assert wrong and lost == wrong, (sorted(lost - wrong), sorted(wrong - lost))
    assert hang.restarts >= 1  # the budget ran out: the rescue run graded the rest


def test_verbose_shows_the_harness_decisions(fixture_workbook, isolated_state):
    """`kata --verbose` logs on stderr whether the sandbox is used and each restart."""
    import os
    import shutil
    import subprocess
    import sys

    env = dict(os.environ)
    run = [sys.executable, "-m", "kata"]
    subprocess.run([*run, "start", "adder", "--yes", "--reveal", "all"], env=env, check=True,
                   capture_output=True)
    shutil.copyfile(HOSTILE / "os_exit.py", isolated_state / "workspace" / "adder.py")
    done = subprocess.run([*run, "--verbose", "submit", "adder"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert "kata: sandbox: " in done.stderr, done.stderr
    assert "kata: restart 1: a fresh child for" in done.stderr, done.stderr
    quiet = subprocess.run([*run, "doctor"], env=env, capture_output=True, text=True, timeout=300)
    assert "sandboxed" in quiet.stdout and "kata: " not in quiet.stderr  # decided, not logged


def test_folders_a_killed_run_left_are_removed_by_the_next(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys
    import tempfile

    from kata.manifest import sweep_stale_folders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = tmp_path / f"kata-run-{int(gone.stdout)}-abc"  # a SIGKILLed run's private copy
    (dead / "wb" / "solutions").mkdir(parents=True)
    alive = tmp_path / f"kata-run-{os.getpid()}-def"
    alive.mkdir()
    other = tmp_path / "kata-notes"
    other.mkdir()
    assert sweep_stale_folders() == [dead]
    assert not dead.exists() and alive.exists() and other.exists()


# --- a hang is over in seconds ------------------------------------------------------------


def test_a_timeout_inside_a_hypothesis_test_is_not_replayed(tmp_path):
    """The alarm raises what hypothesis does not catch: a property test whose every example spins
    fails once at its bound, instead of being replayed (shrunk) until the parent kills it."""
    import subprocess
    import sys

    (tmp_path / "test_spin.py").write_text(
        "from hypothesis import given, strategies as st\n\n"
        "@given(st.integers())\n"
        "def test_spins(x):\n"
        "    while True:\n"
        "        pass\n\n"
        "def test_after():\n"
        "    assert True\n")
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "test_spin.py"), "--timeout", "1", "--timeout-method",
                           "signal", "--kata-strike", "0.5"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t < 30, done.stdout
    assert "1 failed, 1 passed" in done.stdout, done.stdout
    assert "TestTimedOut: timed out after 1s" in done.stdout, done.stdout


def test_two_timeouts_shorten_every_later_bound_and_the_whole_run_has_a_budget(adder, unsandboxed):
    """all_c_loops: every test spins inside C code, where no signal reaches it, so the parent
    kills each one. The first two get the full bound, the rest the short one; and the rescue
    run's budget is capped, so the run ends within wall_timeout + rescue_timeout."""
    limits = Limits(test_timeout=1.5, hard_test_grace=0.5, strike_timeout=0.5, wall_timeout=12,
                    rescue_timeout=5, import_timeout=2)
    result = grade(adder, HOSTILE / "all_c_loops.py", limits=limits)
    assert all(t.status == ERROR for t in result.tests), result.tests
    assert result.duration < limits.wall_timeout + limits.rescue_timeout + 3, result.duration
    from kata.results import timeout_line, timed_out

    n = timed_out(result)  # how many fit in the budget depends on the machine's load
    assert n >= 2
    bounds = [t.message for t in result.tests if t.message.startswith("timed out")]
    assert all("after 1s" in b for b in bounds[2:]), bounds  # 0.5 s + 0.5 s of grace
    line = timeout_line(result)
    assert line is not None and line.startswith(f"{n} tests timed out: an infinite loop?")


def test_the_summary_says_how_many_tests_timed_out(fixture_workbook, isolated_state):
    """check, submit and review print 'N tests timed out: an infinite loop?'."""
    from typer.testing import CliRunner

    from kata.cli import app

    runner = CliRunner()
    started = runner.invoke(app, ["start", "adder"])
    assert started.exit_code == 0, started.output
    work = isolated_state / "workspace" / "adder.py"
    spin = "    while True:\n        pass\n\n"
    work.write_text("".join(f"def {f}(*args):\n{spin}" for f in ("add", "sub", "mul", "neg", "div")))
    checked = runner.invoke(app, ["check"])
    assert "1 test timed out: an infinite loop?" in checked.output, checked.output
    assert "pytest_plugin.py" not in checked.output  # the report ends in the learner's code
    submitted = runner.invoke(app, ["submit"])
    assert "tests timed out: an infinite loop?" in submitted.output, submitted.output
    finished = runner.invoke(app, ["finish"])
    assert finished.exit_code == 0, finished.output
    reviewed = runner.invoke(app, ["review"])
    assert "tests timed out: an infinite loop?" in reviewed.output, reviewed.output


# --- code swapped in and out around a test's call ------------------------------------------


@pytest.mark.parametrize("name", ["swap_code_thread", "swap_code_on_call"])
def test_code_swapped_in_only_while_a_test_is_called_earns_nothing(adder, unsandboxed, name):
    """A thread (or a trace function) that swaps each test's code for one that passes and puts
    it back before the test is reported: the run is tampered, or scores what the code's own
    answers (all wrong) earn, never more."""
    for _ in range(2):  # a thread's timing differs from run to run
        result = grade(adder, HOSTILE / f"{name}.py", limits=FAST)
        assert result.points_earned == 0, (result.tampered, [t.status for t in result.tests])
        assert result.tampered or not any(t.status == PASS for t in result.tests), result
    if name == "swap_code_on_call":  # no timing to it: seen at the call itself, every time
        assert result.tampered and "in the test's place" in result.tampered, result


# --- floods ------------------------------------------------------------------------------


def test_a_flood_of_the_event_pipe_with_no_newline_is_stopped_in_seconds(adder):
    """64 MiB with no newline into the event pipe: the parent reads in bounded chunks, so its
    watchdog keeps running, and a line no plugin writes makes the run tampered."""
    t = time.monotonic()
    result = grade(adder, HOSTILE / "event_flood.py", limits=FAST)
    assert time.monotonic() - t < 30
    assert result.tampered and "flood" in result.tampered, result.tampered
    assert result.points_earned == 0


def test_no_file_the_child_writes_grows_past_its_limit(adder):
    """The real stdout the child holds is a file kata reads back: writes past Limits.file_bytes
    fail (EFBIG) instead of filling the disk. The hostile add() returns the right sum only then."""
    from dataclasses import replace

    result = grade(adder, HOSTILE / "stdout_flood.py", limits=replace(FAST, file_bytes=8 * 1024**2))
    assert by_name(result)["test_add"].status == PASS, by_name(result)["test_add"]
    unlimited = grade(adder, HOSTILE / "stdout_flood.py", limits=replace(FAST, file_bytes=1024**3))
    assert by_name(unlimited)["test_add"].status != PASS  # the test can fail


def test_one_output_budget_for_every_child_of_a_run(adder, monkeypatch):
    """A file that floods its output and dies in every test costs a fresh child per test: all of
    them together write at most Limits.file_bytes (plus the small floor a spent budget leaves each
    later child), and each child's file is gone once read."""
    from dataclasses import replace

    from kata import grading
    from kata.child import Child

    started, written = [], []
    real_start, real_unlink = Child.start, Path.unlink

    def start(cls, *args, **kwargs):
        started.append(args[9] if len(args) > 9 else kwargs["file_bytes"])
        return real_start(*args, **kwargs)

    def unlink(self, *args, **kwargs):
        if self.name.startswith("output-"):
            written.append(self.stat().st_size)
        return real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Child, "start", classmethod(start))
    monkeypatch.setattr(Path, "unlink", unlink)
    budget = 8 * 1024**2
    result = grade(adder, HOSTILE / "flood_and_exit.py", limits=replace(FAST, file_bytes=budget))
    assert result.points_earned == 0 and len(started) >= 3, (len(started), result.message)
    assert started[0] == budget and all(b < budget for b in started[1:]), started
    assert len(written) == len(started) and written[0] >= budget - 1024**2, written  # it did flood
    assert sum(written) <= budget + grading.MIN_FILE_BYTES * len(started), (sum(written), written)


def test_a_submission_copy_changed_during_its_run_makes_the_run_tampered(adder, unsandboxed):
    """Without the sandbox, another process could rewrite the private copy of a submission while
    it is graded: the copy is hashed before and after, so the run is not scored on it."""
    result = grade(adder, HOSTILE / "rewrite_own_copy.py", limits=FAST)
    assert result.tampered and "the submission's private copy" in result.tampered, result.tampered
    assert result.points_earned == 0
