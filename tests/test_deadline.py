"""The deadline: a submission counts from when it starts, work saved before the deadline is
auto-submitted by the first command after it, a question scores its best counted submission."""

from __future__ import annotations

import json
import os
import shutil

from tests.test_cli import kata

T0 = 1_800_000_000.0


def at(monkeypatch, seconds: float) -> None:
    monkeypatch.setenv("KATA_NOW", str(T0 + seconds))


def ws(state, module):
    return state / "workspace" / module


def saved_at(path, seconds):
    os.utime(path, (T0 + seconds, T0 + seconds))


def test_saved_reference_is_auto_submitted_after_the_deadline_with_full_points(isolated_state, monkeypatch):
    """The issue's case: start lru-kv-cache for 0.5 minutes, copy the reference in, run nothing
    else; after the deadline `kata history --json` shows the session timed out with full points."""
    from kata.catalog import Workbook

    at(monkeypatch, 0)
    kata("start", "lru-kv-cache", "--minutes", "0.5", "--yes")
    target = ws(isolated_state, "lru_kv_cache.py")
    shutil.copyfile(Workbook.find().kata("lru-kv-cache").solution, target)
    saved_at(target, 20)
    at(monkeypatch, 45)
    result = kata("history", "--json")
    (row,) = json.loads(result.stdout)["sessions"]
    assert row["status"] == "timed_out"
    assert row["points_earned"] == 100 == row["points_possible"]  # every level, opened in turn
    assert row["auto_submitted"] == ["lru-kv-cache"]
    assert row["level_passed_s"] == {"lru-kv-cache": {"1": 20.0, "2": 20.0, "3": 20.0}}
    assert "lru-kv-cache: auto-submitted the version saved at 20s: 100/100 points" in result.stderr
    again = kata("history", "--json")  # settled once: no second auto-submission
    assert "auto-submitted" not in again.stderr
    rev = json.loads(kata("review", "--json").stdout)
    assert rev["questions"][0]["auto_submitted"] is True and rev["points_earned"] == 100


def test_a_progressive_auto_submission_stops_at_the_first_level_it_fails(
        fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes")
    target = ws(isolated_state, "adder.py")
    src = (fixture_workbook / "solutions" / "adder.py").read_text()
    target.write_text(src.replace("return a - b", "return b - a"))  # level 1 fails one test
    saved_at(target, 60)
    at(monkeypatch, 400)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 2.5 and row["points_possible"] == 30  # level 2 never opened


def test_a_file_saved_after_the_deadline_is_not_what_counts(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    target = ws(isolated_state, "adder.py")
    at(monkeypatch, 100)
    kata("check", code=1)  # snapshot of the stub at 100 s
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", target)
    saved_at(target, 400)  # after the 5-minute deadline
    at(monkeypatch, 500)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["status"] == "timed_out" and row["points_earned"] == 0  # the stub was graded


def test_the_best_counted_submission_is_the_score(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    target = ws(isolated_state, "adder.py")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", target)
    at(monkeypatch, 60)
    kata("submit")  # 30/30
    target.write_text("def add(a, b):\n    return a + b\n")
    at(monkeypatch, 120)
    kata("submit", code=1)  # worse
    saved_at(target, 120)
    at(monkeypatch, 400)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 30 and row["auto_submitted"] == []


def test_a_submit_started_before_the_deadline_counts_though_it_ends_after(
        fixture_workbook, isolated_state, monkeypatch):
    from kata import grading

    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", ws(isolated_state, "adder.py"))
    real_grade = grading.grade

    def slow_grade(*args, **kwargs):  # the clock passes the deadline while grading
        result = real_grade(*args, **kwargs)
        at(monkeypatch, 310)
        return result

    monkeypatch.setattr(grading, "grade", slow_grade)
    at(monkeypatch, 295)  # 5 s before the 300 s deadline
    out = kata("submit").output
    assert "Recorded for session 1" in out
    monkeypatch.setattr(grading, "grade", real_grade)
    at(monkeypatch, 400)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 30 and row["status"] == "timed_out"


def test_a_submit_started_after_the_deadline_does_not_count(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    at(monkeypatch, 301)
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", ws(isolated_state, "adder.py"))
    saved_at(ws(isolated_state, "adder.py"), 301)
    kata("submit", "adder")  # practice: no live session holds it
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 0 and row["status"] == "timed_out"


def test_finish_is_finished_not_timed_out(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes")
    at(monkeypatch, 10)
    kata("finish")
    at(monkeypatch, 1000)
    assert json.loads(kata("history", "--json").stdout)["sessions"][0]["status"] == "finished"


def test_a_failed_auto_submission_is_retried_by_a_later_command(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    target = ws(isolated_state, "adder.py")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", target)
    saved_at(target, 60)
    manifest = fixture_workbook / "graders" / "adder" / "MANIFEST.json"
    good = manifest.read_text()
    manifest.write_text("{}")  # the hidden suite cannot be trusted: no grade now
    at(monkeypatch, 400)
    failed = kata("history", "--json", code=2)
    assert "MANIFEST.json" in failed.output
    manifest.write_text(good)
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 30 and row["auto_submitted"] == ["adder"]


def test_status_shows_the_score_that_counts(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", ws(isolated_state, "adder.py"))
    at(monkeypatch, 30)
    kata("submit")
    ws(isolated_state, "adder.py").write_text("def add(a, b):\n    return a + b\n")
    at(monkeypatch, 60)
    kata("submit", code=1)
    assert json.loads(kata("status", "--json").stdout)["questions"][0]["hidden"] == [30, 30]


def test_an_untouched_stub_is_not_graded_at_the_deadline(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    at(monkeypatch, 100)
    kata("check", code=1)  # a snapshot of the stub: still no answer
    at(monkeypatch, 400)
    result = kata("history", "--json")
    row = json.loads(result.stdout)["sessions"][0]
    assert row["status"] == "timed_out" and row["points_earned"] == 0
    assert row["auto_submitted"] == []
    assert "adder: not attempted (the code as handed out): 0 points" in result.stderr
    assert kata("snapshots", "adder", "--json").stdout.count('"submit') == 0


def test_finish_grades_saved_work_that_was_never_submitted(fixture_workbook, isolated_state, monkeypatch):
    """Finishing early loses nothing: the last saved version is graded, as the deadline would."""
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    target = ws(isolated_state, "adder.py")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", target)
    saved_at(target, 30)
    at(monkeypatch, 60)
    done = kata("finish", "--yes")
    assert "adder: auto-submitted the version saved at 30s: 30/30 points" in done.stdout
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["status"] == "finished" and row["points_earned"] == 30
    assert "auto-submitted when you finished" in kata("review").stdout


def test_finish_does_not_grade_a_version_already_submitted(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", ws(isolated_state, "adder.py"))
    at(monkeypatch, 30)
    kata("submit")
    at(monkeypatch, 60)
    done = kata("finish", "--yes")
    assert "auto-submitted" not in done.output
    row = json.loads(kata("history", "--json").stdout)["sessions"][0]
    assert row["points_earned"] == 30 and row["auto_submitted"] == []


def test_finish_after_submitting_the_stub_says_nothing_of_it(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes", "--reveal", "all")
    at(monkeypatch, 30)
    kata("submit", code=1)  # the stub, graded: 0 points, and it stands
    at(monkeypatch, 60)
    done = kata("finish", "--yes").output
    assert "not attempted" not in done and "auto-submitted" not in done
