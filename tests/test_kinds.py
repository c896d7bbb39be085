"""A question kind is one class in kata/kinds.py's registry: a toy kind, added here and nowhere
else, goes through start, submit, the deadline's settle, review and regrade like a built-in one.

The toy asks for the code and a one-line note beside it (workspace/NOTE-<slug>.txt); the note is
worth one point more than the code's levels, and the review shows it."""

from __future__ import annotations

import json
import os

import pytest

from kata import catalog, kinds
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
        return (result.get("hunt") or {}).get("note")

    def extra_unsubmitted(self, store, session, kata_, extra):
        graded = [self.extra_recorded(s.result) for s in store.counted_submissions(session, kata_.slug)]
        return not graded or extra != graded[-1]

    def judge(self, store, session, kata_, q, extra, result):
        noted = bool((extra or "").strip())
        result.hunt = {"note": extra, "points_earned": float(noted)}
        return result.points_earned + float(noted), result.points_possible + 1.0

    def worth(self, fix):
        return fix + 1

    def review(self, wb, store, session, q):
        official = store.official_submission(session, q.kata)
        return {"note": self.extra_recorded(official.result) if official else None}

    def status_note(self, best):
        return "noted" if best and (best.result.get("hunt") or {}).get("points_earned") else "no note"


@pytest.fixture
def noted(fixture_workbook, isolated_state, monkeypatch):
    kinds.register(Noted())
    (fixture_workbook / "exams" / "noted.toml").write_text(
        'title = "Noted"\nminutes = 10\n\n[[questions]]\nkata = "adder"\nlevels = [1]\nminutes = 10\nkind = "noted"\n')
    monkeypatch.setenv("KATA_WORKBOOK", str(fixture_workbook))
    yield isolated_state
    kinds.KINDS.pop("noted")
    catalog.KINDS.discard("noted")


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
    assert row["hidden"] == [10, 11] and row["pin"] == "no note"  # worth: the level's 10, the note's 1

    note.write_text("adds and subtracts\n")  # saved before the deadline, never submitted
    os.utime(note, (T0 + 120, T0 + 120))
    at(monkeypatch, 11 * 60)
    settled = kata("history", "--json")
    assert "auto-submitted" in settled.stderr  # the same code, a new note: graded again
    review = json.loads(kata("review", "--json").stdout)
    (q,) = review["questions"]
    assert q["hunt"] == {"note": "adds and subtracts\n"} and q["points_earned"] == 11
    assert review["points_possible"] == 11

    grader = fixture_workbook / "graders" / "adder" / "test_adder.py"
    grader.write_text(grader.read_text() + "\n# a new version of the suite\n")
    from kata.manifest import write_manifest

    write_manifest(Workbook.find(fixture_workbook).kata("adder"))
    regraded = kata("regrade").stdout
    assert "adder: 10 (suite" in regraded and "adder: 11 (suite" in regraded, regraded  # both, judged again
    after = json.loads(kata("review", "--json").stdout)["questions"][0]
    assert after["points_earned"] == 11 and after["hunt"]["note"] == "adds and subtracts\n"
