"""A question kind is one class in kata/kinds.py's registry: a toy kind, added here and nowhere
else, goes through start, submit, the deadline's settle, review and regrade like a built-in one.

The toy asks for the code and a one-line note beside it (workspace/NOTE-<slug>.txt); the note is
worth one point more than the code's levels, and the review shows it."""

from __future__ import annotations

import json
import os

import pytest

from kata import kinds
from kata.catalog import Workbook
from tests.test_cli import kata

T0 = 1_800_000_000.0


class Noted(kinds.Kind):
    name = "noted"

    def note(self, wb, kata_):
        return wb.workspace / f"NOTE-{kata_.slug}.txt"

    def hand_out(self, wb, pairs, now):
        done = super().hand_out(wb, pairs, now)
        for _, k in pairs:
            self.note(wb, k).write_text("")
        return done

    def watched(self, wb, q, kata_):
        return super().watched(wb, q, kata_) + [("note", self.note(wb, kata_))]

    def extra_files(self, wb, kata_):
        return [("write a note in", self.note(wb, kata_))]

    def extra_now(self, wb, kata_):
        return self.note(wb, kata_).read_text()

    def extra_at_deadline(self, wb, store, session, kata_, kept):
        rec = kept.get((kata_.slug, "note"))
        return rec.code if rec is not None else self.extra_now(wb, kata_)

    def extra_recorded(self, result):
        return (result.get("part") or {}).get("note")

    def extra_unsubmitted(self, store, session, kata_, extra):
        graded = [self.extra_recorded(s.result) for s in store.counted_submissions(session, kata_.slug)]
        return not graded or extra != graded[-1]

    def judge(self, store, session, kata_, q, extra, result):
        noted = bool((extra or "").strip())
        result.part = {"kind": self.name, "note": extra, "points_earned": float(noted)}
        return result.points_earned + float(noted), result.points_possible + 1.0

    def worth(self, fix):
        return fix + 1

    def review(self, wb, store, session, q):
        official = store.official_submission(session, q.kata)
        return {"note": self.extra_recorded(official.result) if official else None}

    def status_note(self, best):
        return "noted" if best and (best.result.get("part") or {}).get("points_earned") else "no note"

    def part_lines(self, part):
        return [f"note: {'written' if part.get('points_earned') else 'empty'} ({part.get('points_earned', 0):g} point)"]

    def review_lines(self, info):
        return [f"your note: {(info.get('note') or '').strip() or '(none)'}"]

    def check_note(self, kata_, extra, code):
        return "a note is written" if (extra or "").strip() else "the note is empty"


@pytest.fixture
def noted(fixture_workbook, isolated_state, monkeypatch):
    kinds.register(Noted())
    (fixture_workbook / "exams" / "noted.toml").write_text(
        'title = "Noted"\nminutes = 10\n\n[[questions]]\nkata = "adder"\nlevels = [1]\nminutes = 10\nkind = "noted"\n')
    monkeypatch.setenv("KATA_WORKBOOK", str(fixture_workbook))
    yield isolated_state
    kinds.unregister("noted")


def at(monkeypatch, seconds: float) -> None:
    monkeypatch.setenv("KATA_NOW", str(T0 + seconds))


def test_a_kind_added_to_the_registry_alone_runs_through_every_path(noted, fixture_workbook, monkeypatch):
    state = noted
    at(monkeypatch, 0)
    kata("start", "noted", "--yes")
    code, note = state / "workspace" / "adder.py", state / "workspace" / "NOTE-adder.txt"
    assert note.is_file()  # handed out by the kind

    code.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    at(monkeypatch, 60)
    submitted = json.loads(kata("submit", "adder", "--json").stdout)["results"][0]
    assert submitted["points_earned"] == 10  # the code's level only: no note yet
    (row,) = json.loads(kata("status", "--json").stdout)["questions"]
    assert row["hidden"] == [10, 11] and row["note"] == {"label": "note", "value": "no note"}  # worth: the level's 10, the note's 1

    note.write_text("adds and subtracts\n")  # saved before the deadline, never submitted
    os.utime(note, (T0 + 120, T0 + 120))
    at(monkeypatch, 11 * 60)
    settled = kata("history", "--json")
    assert "auto-submitted" in settled.stderr  # the same code, a new note: graded again
    review = json.loads(kata("review", "--json").stdout)
    (q,) = review["questions"]
    assert q["part"] == {"note": "adds and subtracts\n"} and q["points_earned"] == 11
    assert review["points_possible"] == 11

    grader = fixture_workbook / "graders" / "adder" / "test_adder.py"
    grader.write_text(grader.read_text() + "\n# a new version of the suite\n")
    from kata.manifest import write_manifest

    write_manifest(Workbook.find(fixture_workbook).kata("adder"))
    regraded = kata("regrade").stdout
    assert "adder: 10 (suite" in regraded and "adder: 11 (suite" in regraded, regraded  # both, judged again
    after = json.loads(kata("review", "--json").stdout)["questions"][0]
    assert after["points_earned"] == 11 and after["part"]["note"] == "adds and subtracts\n"


def test_the_added_kind_goes_through_every_text_and_json_command_and_the_room(noted, fixture_workbook,
                                                                            monkeypatch):
    """The kind's part is rendered by the kind, in text, JSON and the room; no command reads its
    keys. Each command's text and JSON, in turn."""
    state = noted
    at(monkeypatch, 0)
    assert "Session 1 started" in kata("start", "noted", "--yes").output
    code, note = state / "workspace" / "adder.py", state / "workspace" / "NOTE-adder.txt"
    code.write_text((fixture_workbook / "solutions" / "adder.py").read_text())
    note.write_text("adds\n")
    at(monkeypatch, 30)
    assert "a note is written" in kata("check").output
    assert json.loads(kata("check", "--json").stdout)["results"][0]["check_note"] == "a note is written"
    at(monkeypatch, 60)
    said = kata("submit").output
    assert "note: written (1 point)" in said and "Traceback" not in said
    (row,) = json.loads(kata("submit", "--json").stdout)["results"]
    assert row["part"] == {"kind": "noted", "note": "adds\n", "points_earned": 1.0,
                           "lines": ["note: written (1 point)"]}
    assert "note: noted" in kata("status").output and "pin" not in kata("status").output
    assert json.loads(kata("status", "--json").stdout)["questions"][0]["note"] == {"label": "note", "value": "noted"}
    page = _room(fixture_workbook)
    assert page["submit"]["part"]["lines"] == ["note: written (1 point)"]
    assert page["check"]["check_note"] == "a note is written"
    assert page["state"]["questions"][0]["note"] == "note: noted"
    kata("finish", "--yes")
    review = kata("review").output
    assert "your note: adds" in review and "11/11" in review
    (q,) = json.loads(kata("review", "--json").stdout)["questions"]
    assert q["part"] == {"note": "adds\n"} and q["points_earned"] == 11
    assert "│ noted │" in kata("history").output and "11/11" in kata("history").output
    assert json.loads(kata("history", "--json").stdout)["sessions"][0]["session"] == 1
    progress = kata("progress").output
    assert "11/" in progress, progress  # its score is the kata's own: the best is 11, not 0
    (adder,) = [r for r in json.loads(kata("progress", "--json").stdout)["katas"] if r["kata"] == "adder"]
    assert adder["best"] == 11 and adder["beside"] == []
    assert json.loads(kata("list", "--json").stdout)["katas"][0]["best"] == 11
    review_page = _room(fixture_workbook)["review"]
    assert review_page["questions"][0]["part_lines"] == ["your note: adds"]
    grader = fixture_workbook / "graders" / "adder" / "test_adder.py"
    grader.write_text(grader.read_text() + "\n# a new version of the suite\n")
    from kata.manifest import write_manifest

    write_manifest(Workbook.find(fixture_workbook).kata("adder"))
    assert "adder: 11 (suite" in kata("regrade").stdout


def _room(wb_root) -> dict:
    """The room's state, check, submit and review, as the page asks them."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        from kata.web.app import create_app
    from kata import session

    token, base = "t0ken", "http://127.0.0.1:8123"
    auth = {"X-Kata-Token": token, "Origin": base}
    wb = Workbook.find(wb_root)
    out = {}
    with TestClient(create_app(wb, token, 8123), base_url=base) as c:
        out["state"] = c.get("/api/state", headers=auth).json()
        if out["state"].get("session"):
            out["check"] = c.post("/api/check/adder", headers=auth, json={}).json()
            out["submit"] = c.post("/api/submit/adder", headers=auth, json={}).json()
        else:
            out["review"] = c.get("/api/review", headers=auth).json()
    session.close_stores()
    return out


def test_no_module_but_the_hunt_kinds_reads_a_hunt_key():
    """A kind's part is read by its kind alone: the hunt's keys appear only in its own modules
    (and in the store's one-time move of results written before parts existed)."""
    import re
    from pathlib import Path

    root = Path(kinds.__file__).resolve().parent
    name = r"""["'](hunt|hunts|pin|decoy|verdict|pin_points)["']"""
    keys = re.compile(rf"""\[\s*{name}\s*\]|\.get\(\s*{name}|{name}\s*:(?!\s*"[A-Z])|\.(hunt|pin|pin_check|is_hunt)\b""")
    own = {"hunt.py", "hunt_questions.py"}
    found = []
    for path in sorted(root.rglob("*.py")) + sorted(root.rglob("*.js")):
        if path.name in own or "engine" in path.parts or "node_modules" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0] if path.suffix == ".py" else line.split("//")[0]
            if keys.search(code) and "LEGACY_PART" not in code:
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert found == [], found


def test_results_stored_before_parts_read_the_same_after_the_move(tmp_path):
    import sqlite3

    from kata.store import SCHEMA_VERSION, Store, seal

    path = tmp_path / "kata.db"
    store = Store(path)
    session, _ = store.start_session("kata", "hunt x", ["adder"], 15, now=1000.0)
    store.close()
    pin = {"points_earned": 10.0, "points_possible": 10.0, "verdict": "pinned", "test_code": "t"}
    with sqlite3.connect(path) as db:  # as schema 4 wrote it: the part under the kind's own name
        db.execute("INSERT INTO submissions (session_id, slug, submitted_at, code, result, points_earned, "
                   "points_possible, status, suite, auto) VALUES (?, 'adder', 1001, 'c', ?, 20, 20, 'pass', "
                   "'hidden', 0)", (session.id, seal(json.dumps({"status": "pass", "hunt": pin}))))
        db.execute("PRAGMA user_version = 4")
    moved = Store(path)
    (sub,) = moved.submissions(slug="adder")
    assert sub.result["part"] == {"kind": "hunt", **pin} and "hunt" not in sub.result
    assert kinds.part_kind(sub.result["part"]).name == "hunt"
    assert not kinds.counts_toward_best(sub.result)
    assert moved.schema_version == SCHEMA_VERSION and moved.edited_rows() == []  # migrated rows are signed
    moved.close()
