"""The deadline keeper (kata/keeper.py): the files are read at the deadline by a process of their
own, so work saved before it counts with no `kata` command in between; without it, settling says
what it went by. And the clock is the machine's: a plain `kata` ignores $KATA_NOW.

These sessions run on the real clock, a few seconds long (`--minutes 0.05`: 3 s)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_cli import kata

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SHORT = "0.05"  # minutes: a 3-second session


def alive(pid: int) -> bool:
    """A live process (a zombie, dead but not yet reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, timeout: float, what: str) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, f"waited {timeout:g}s for {what}"
        time.sleep(0.05)


def pid_file(state: Path, session_id: int = 1) -> Path:
    return state / ".kata" / f"keeper-{session_id}.pid"


def keeper_pid(state: Path, session_id: int = 1) -> int:
    path = pid_file(state, session_id)
    wait_for(path.exists, 10, f"{path.name}")
    return int(path.read_text())


def records(state: Path) -> list[tuple]:
    con = sqlite3.connect(state / ".kata" / "kata.db")
    try:
        return con.execute("SELECT session_id, slug, file, code, mtime, taken_at FROM deadline_snapshots "
                           "ORDER BY id").fetchall()
    finally:
        con.close()


def session_row(state: Path, session_id: int = 1) -> tuple[float, float]:
    con = sqlite3.connect(state / ".kata" / "kata.db")
    try:
        return con.execute("SELECT started_at, deadline FROM sessions WHERE id = ?", (session_id,)).fetchone()
    finally:
        con.close()


def past_deadline(state: Path, session_id: int = 1, margin: float = 0.3) -> None:
    _, deadline = session_row(state, session_id)
    time.sleep(max(0.0, deadline + margin - time.time()))


def start_short(state: Path) -> Path:
    kata("start", "adder", "--minutes", SHORT, "--reveal", "all", "--yes")
    return state / "workspace" / "adder.py"


def history() -> tuple[dict, str]:
    result = kata("history", "--json")
    return json.loads(result.stdout)["sessions"][0], result.stderr


# --- with the keeper ---------------------------------------------------------------------------


def test_work_saved_before_the_deadline_counts_though_changed_after_with_no_command_between(
        fixture_workbook, isolated_state):
    target = start_short(isolated_state)
    pid = keeper_pid(isolated_state)
    assert alive(pid)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())  # 30/30
    # the keeper reads the file at the deadline, records it and exits by itself
    wait_for(lambda: not pid_file(isolated_state).exists(), 30, "the keeper to finish")
    wait_for(lambda: not alive(pid), 10, "the keeper to exit")
    ((_, slug, kind, code, _mtime, taken_at),) = records(isolated_state)
    _, deadline = session_row(isolated_state)
    assert (slug, kind) == ("adder", "code") and "return a * b" in code
    assert deadline <= taken_at < deadline + 5
    target.write_text("def add(a, b):\n    return 0\n")  # after the deadline: must not count
    row, err = history()
    assert row["status"] == "timed_out" and row["points_earned"] == 30, (row, err)
    assert row["auto_submitted"] == ["adder"]
    assert "adder: auto-submitted the version saved at " in err and "30/30 points" in err
    assert "keeper did not run" not in err and "kata saw" not in err


def test_a_file_back_dated_after_the_deadline_does_not_count_where_the_keeper_ran(
        fixture_workbook, isolated_state):
    target = start_short(isolated_state)  # the stub, left as handed out
    started, _ = session_row(isolated_state)
    wait_for(lambda: bool(records(isolated_state)), 30, "the keeper's record")
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    os.utime(target, (started + 1, started + 1))  # "saved" 1 s into the session
    row, err = history()
    assert row["points_earned"] == 0 and row["auto_submitted"] == [], (row, err)
    assert "adder: not attempted (the code as handed out): 0 points" in err


# --- without it: settling says what it went by ---------------------------------------------------


def kill_keeper(state: Path) -> None:
    pid = keeper_pid(state)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), 10, "the keeper to die")


def test_keeper_killed_and_the_file_changed_after_the_deadline_with_no_earlier_version(
        fixture_workbook, isolated_state):
    target = start_short(isolated_state)
    kill_keeper(isolated_state)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    past_deadline(isolated_state)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text() + "# more\n")
    row, err = history()
    assert row["points_earned"] == 0, (row, err)
    assert "adder: changed after the deadline and kata saw no earlier version: not graded" in err
    assert records(isolated_state) == []
    assert not pid_file(isolated_state).exists()  # the dead keeper's pid file went with the settle


def test_keeper_killed_and_the_file_changed_after_the_deadline_grades_the_last_version_kata_saw(
        fixture_workbook, isolated_state):
    target = start_short(isolated_state)
    kill_keeper(isolated_state)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    kata("check", "adder")  # kata sees (snapshots) this version before the deadline
    past_deadline(isolated_state)
    target.write_text("def add(a, b):\n    return 0\n")
    row, err = history()
    assert row["points_earned"] == 30 and row["auto_submitted"] == ["adder"], (row, err)
    assert "adder: auto-submitted the version saved at " in err
    assert "adder: changed after the deadline; the last version kata saw is from " in err
    assert "graded that" in err


def test_keeper_killed_and_the_file_saved_before_the_deadline_is_graded_by_its_modification_time(
        fixture_workbook, isolated_state):
    target = start_short(isolated_state)
    kill_keeper(isolated_state)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    past_deadline(isolated_state)
    row, err = history()
    assert row["points_earned"] == 30, (row, err)
    assert "adder: graded by its modification time, " in err
    assert "(the deadline keeper did not run)" in err


def test_a_keeper_paused_before_the_deadline_is_named_and_a_back_dated_edit_counts_only_as_late(
        fixture_workbook, isolated_state):
    """The keeper touches its pid file every POLL_S while it waits: paused (SIGSTOP), it goes
    stale, so a file edited after the deadline and back-dated is graded only with a "late, by
    modification time" line, at settling and in the review."""
    kata("start", "adder", "--minutes", "0.12", "--reveal", "all", "--yes")  # 7.2 s
    target = isolated_state / "workspace" / "adder.py"
    started, _ = session_row(isolated_state)
    pid = keeper_pid(isolated_state)
    os.kill(pid, signal.SIGSTOP)
    try:
        past_deadline(isolated_state)
        target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
        os.utime(target, (started + 1, started + 1))  # "saved" 1 s into the session
        row, err = history()
        assert row["points_earned"] == 30, (row, err)
        assert "adder: late, by modification time: the deadline keeper stopped answering" in err, err
        assert "(paused or killed); graded the file as dated " in err and "a date kata cannot vouch for" in err, err
        review = kata("review").stdout
        assert "late, by modification time" in " ".join(review.split()), review
        said = json.loads(kata("review", "--json").stdout)["questions"][0]["evidence"]
        assert said.startswith("late, by modification time: the deadline keeper stopped answering"), said
    finally:
        if alive(pid):  # settling ends it (SIGKILL reaches a stopped process too)
            os.kill(pid, signal.SIGKILL)
    assert not alive(pid)


def test_a_keeper_that_woke_too_late_says_so_in_its_own_record(tmp_path):
    from types import SimpleNamespace

    from kata import keeper
    from kata.store import DeadlineSnapshot

    session = SimpleNamespace(id=4, started_at=100.0, deadline=400.0)
    late = {("", keeper.LATE_FILE): DeadlineSnapshot(4, "", keeper.LATE_FILE, None, None, 475.0)}
    assert keeper.stopped_early(tmp_path, session, late) == \
        "the deadline keeper woke 75 s after the deadline (paused or asleep)"
    assert keeper.stopped_early(tmp_path, session, {}) is None  # no pid file, no record: nothing to say
    beat = keeper.pid_file(tmp_path, 4)
    beat.write_text("1\n")
    os.utime(beat, (390.0, 390.0))  # touched 10 s before the deadline: stale (POLL_S is 2 s)
    assert "stopped answering 10 s before the deadline" in keeper.stopped_early(tmp_path, session, {})
    os.utime(beat, (398.5, 398.5))
    assert keeper.stopped_early(tmp_path, session, {}) is None


# --- nothing outlives a session ----------------------------------------------------------------


def test_finish_ends_the_keeper_and_removes_its_pid_file(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    pid = keeper_pid(isolated_state)
    assert alive(pid)
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"kata.keeper" in cmdline and str(isolated_state / "workspace" / "adder.py").encode() in cmdline
    kata("finish")
    assert not alive(pid) and not pid_file(isolated_state).exists()


def test_abandon_ends_the_old_keeper_and_starts_a_new_one(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    old = keeper_pid(isolated_state, 1)
    kata("start", "adder", "--abandon", "--yes")
    assert not alive(old) and not pid_file(isolated_state, 1).exists()
    new = keeper_pid(isolated_state, 2)
    assert new != old and alive(new)
    kata("finish")
    assert not alive(new) and not pid_file(isolated_state, 2).exists()
    assert list((isolated_state / ".kata").glob("keeper-*")) == []


def test_a_keeper_whose_session_ended_behind_its_back_exits_by_itself(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    pid = keeper_pid(isolated_state)
    con = sqlite3.connect(isolated_state / ".kata" / "kata.db")
    con.execute("UPDATE sessions SET status = 'abandoned', ended_by = 'abandon' WHERE id = 1")
    con.commit()
    con.close()
    wait_for(lambda: not alive(pid), 10, "the keeper to notice")  # it looks every 2 s
    assert not pid_file(isolated_state).exists() and records(isolated_state) == []


def test_a_hunts_keeper_reads_the_pin_file_too(isolated_state):
    kata("hunt", "token-batcher", "--minutes", SHORT, "--seed", "1", "--yes")
    wait_for(lambda: len(records(isolated_state)) == 2, 30, "the keeper's records")
    assert {(slug, kind) for _, slug, kind, *_ in records(isolated_state)} == \
        {("token-batcher", "code"), ("token-batcher", "test")}


# --- the clock is the machine's ------------------------------------------------------------------


def test_a_plain_kata_process_ignores_kata_now(fixture_workbook, isolated_state):
    """A learner's $KATA_NOW moves nothing; only the tests' launcher honours it. `kata start` run
    with its output on pipes returns at once: the keeper holds none of them."""
    env = dict(os.environ, KATA_NOW=str(time.time() - 3600))  # an hour ago: more time, if honoured
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "kata", "start", "adder", "--yes"], env=env, check=True,
                   capture_output=True, timeout=60, cwd=REPO)
    assert time.monotonic() - began < 30
    _, deadline = session_row(isolated_state)
    assert abs(deadline - (time.time() + 300)) < 30  # started now, not an hour ago
    assert alive(keeper_pid(isolated_state))

    def status(module: str, at: float) -> dict:
        out = subprocess.run([sys.executable, "-m", module, "status", "--json"], capture_output=True,
                             env=dict(os.environ, KATA_NOW=str(at)), timeout=60, cwd=REPO, check=True)
        return json.loads(out.stdout)

    late = time.time() + 3600  # an hour on: the session would be over
    assert status("kata", late)["session"]["id"] == 1  # still live: KATA_NOW ignored
    assert status("tests.kata_test_clock", late)["session"] is None  # the tests' clock moves it


def test_kata_watch_says_what_the_deadline_went_by(fixture_workbook, isolated_state, capsys):
    from kata.catalog import Workbook
    from kata.watch import Watch

    target = start_short(isolated_state)
    kill_keeper(isolated_state)
    target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    wb = Workbook.find()
    watch = Watch(wb, [wb.kata("adder")], plain=True)
    past_deadline(isolated_state)
    capsys.readouterr()
    watch.on_tick()
    out = capsys.readouterr().out
    assert "the clock ran out; adder: auto-submitted the version saved at " in out
    assert "adder: graded by its modification time, " in out
    assert "graded by its modification time" in watch.message  # the screen's last message
