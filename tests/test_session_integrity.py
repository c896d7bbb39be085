"""What a session keeps: nothing hidden under the state folder while it is live, every level event
through `kata doctor`, and an auto-submission that survives the command running it being killed."""

from __future__ import annotations

import base64
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from tests.conftest import REPO
from tests.test_cli import kata
from tests.test_deadline import T0, at, saved_at, ws


def _encodings(name: str) -> list[bytes]:
    raw = name.encode()
    return [raw, name.encode("utf-16-le"), name.encode("utf-16-be"), raw.hex().encode(),
            base64.b64encode(raw), json.dumps(name).encode()]


def test_no_file_under_the_state_folder_names_a_hidden_test_during_a_session(
        fixture_workbook, isolated_state):
    kata("start", "adder", "--reveal", "all", "--yes")
    target = ws(isolated_state, "adder.py")
    src = (fixture_workbook / "solutions" / "adder.py").read_text()
    target.write_text(src.replace("return a * b", "return a + b"))  # fails test_mul
    out = kata("submit", "adder", code=1).output
    assert "test_mul" not in out
    hidden = ["test_mul", "test_div_by_zero", "mul(2, 3)"]
    # the open levels' visible examples (all of them here) sit beside the learner's file, and
    # kata's copy of them: this tiny kata's visible tests share the hidden ones' names
    visible = {isolated_state / "workspace" / "test_adder.py", isolated_state / ".kata" / "given" / "test_adder.py"}
    assert all(p.read_text() == (fixture_workbook / "katas" / "adder" / "test_visible.py").read_text()
               for p in visible)
    files = [p for p in isolated_state.rglob("*") if p.is_file() and p not in visible]
    assert any(p.suffix == ".xml" for p in files) and any(p.name == "kata.db" for p in files)
    con = sqlite3.connect(isolated_state / ".kata" / "kata.db")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for path in files:
        data = path.read_bytes() if path.exists() else b""
        for name in hidden:
            for form in _encodings(name):
                assert form not in data, (path, name, form)
    kata("finish")
    review = kata("review", "--json").stdout
    assert "test_mul" in review  # revealed once the session is over


def test_doctor_keeps_every_table_and_every_level_event(fixture_workbook, isolated_state):
    at_env = {"KATA_NOW": str(T0)}
    os.environ.update(at_env)
    try:
        kata("start", "adder", "--yes")
        target = ws(isolated_state, "adder.py")
        target.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
        kata("submit", "adder")  # level 1 passes (a level event), level 2 opens
        kata("hint", "adder")
    finally:
        for key in at_env:
            os.environ.pop(key, None)
    db = isolated_state / ".kata" / "kata.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    before = {t: con.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in tables}
    assert all(before[t] for t in ("sessions", "submissions", "hints", "level_events")), before
    con.execute("PRAGMA user_version = 0")  # damaged: opening it fails
    con.commit()
    con.close()
    fixed = kata("doctor").output
    for table in tables:
        assert f"{table}: {len(before[table])} row(s) recovered" in fixed, fixed
    con = sqlite3.connect(db)
    after = {t: con.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in tables}
    con.close()
    assert after == before


def test_killing_the_auto_submission_mid_grading_then_status_grades_the_work(
        fixture_workbook, isolated_state, monkeypatch):
    """SIGKILL of the command that auto-submits after the deadline: the next command redoes it."""
    at(monkeypatch, 0)
    kata("start", "adder", "--yes")
    target = ws(isolated_state, "adder.py")
    reference = (fixture_workbook / "solutions" / "adder.py").read_text()
    target.write_text("import time\ntime.sleep(4)  # slow to import, correct\n" + reference)
    saved_at(target, 30)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        env = dict(os.environ, KATA_NOW=str(T0 + 400))
        cmd = subprocess.Popen([sys.executable, "-m", "tests.kata_test_clock", "status"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
        time.sleep(3)  # inside the grading of the saved version
        assert cmd.poll() is None, cmd.communicate()
        cmd.send_signal(sig)
        cmd.wait(timeout=30)
    at(monkeypatch, 400)
    result = kata("status")
    assert "adder: auto-submitted" in result.stderr, (result.stdout, result.stderr)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["auto_submitted"] == ["adder"] and row["points_earned"] == 30


def test_kata_submit_opens_the_store_once_and_closes_it(fixture_workbook, isolated_state, monkeypatch):
    from kata import session, store

    kata("start", "adder", "--yes")
    opened = []
    real_init = store.Store.__init__

    def counting(self, *args, **kwargs):
        opened.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(store.Store, "__init__", counting)
    kata("submit", "adder", code=1)
    assert len(opened) == 1, opened
    assert opened[0].db is None and session._STORES == {}
