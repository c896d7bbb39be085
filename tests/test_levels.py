"""Questions, levels and the session around them: progressive disclosure, exam questions that cover
some levels, split times, the briefing, and the JSON contract scripts rely on."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.test_cli import kata, workspace_file

T0 = 1_800_000_000.0


@pytest.fixture
def wb(fixture_workbook):
    return fixture_workbook


def at(monkeypatch, seconds: float) -> None:
    monkeypatch.setenv("KATA_NOW", str(T0 + seconds))


def show(slug="adder"):
    return json.loads(kata("show", slug, "--json").output)


def reference(wb, isolated_state):
    shutil.copyfile(wb / "solutions" / "adder.py", workspace_file(isolated_state))


def test_a_single_kata_opens_one_level_at_a_time(wb, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes")
    first = show()
    assert first["kata"] == "adder" and first["levels"] == [1]
    assert "## Level 1" in first["markdown"] and "## Level 2" not in first["markdown"]
    assert "## Rules for every level" in first["markdown"]
    assert "This kata has 2 levels" in first["markdown"] and "level 2 opens when" in first["markdown"]
    # the examples and the hidden suite of the open level only; its hints only
    check = json.loads(kata("check", "--json", code=1).output)["results"][0]
    assert {t["task_id"] for t in check["tests"]} == {1}
    assert "Hint 2 of 2 for level 1" in (kata("hint", "adder"), kata("hint", "adder").output)[1]
    assert "belong to levels not open yet" in kata("hint", "adder").output
    reference(wb, isolated_state)
    at(monkeypatch, 120)
    sub = json.loads(kata("submit", "--json").output)["results"][0]
    assert {t["task_id"] for t in sub["tests"]} == {1} and sub["levels_graded"] == [1]
    assert sub["levels_opened"] == [2] and sub["points_possible"] == 10
    second = show()
    assert second["levels"] == [1, 2] and "## Level 2" in second["markdown"]
    assert "All of them are shown" in second["markdown"]
    at(monkeypatch, 280)  # the adder's clock is 5 minutes
    out = kata("submit").output
    assert "20/20" in out and "Level" not in out.split("Recorded")[1]  # nothing more to open
    status = json.loads(kata("status", "--json").output)["questions"][0]
    assert status["levels"] == [1, 2] and status["levels_open"] == [1, 2]
    assert status["file"] == str(workspace_file(isolated_state))
    assert status["hidden"] == [30, 30]


def test_opening_a_level_never_touches_the_learners_file(wb, isolated_state, monkeypatch):
    kata("start", "adder", "--yes")
    reference(wb, isolated_state)
    before = workspace_file(isolated_state).read_bytes()
    kata("submit")
    assert show()["levels"] == [1, 2]
    assert workspace_file(isolated_state).read_bytes() == before


def test_a_failing_level_keeps_the_next_one_closed(wb, isolated_state):
    kata("start", "adder", "--yes")
    src = (wb / "solutions" / "adder.py").read_text().replace("return a - b", "return b - a")
    workspace_file(isolated_state).write_text(src)
    sub = json.loads(kata("submit", "--json", code=1).output)["results"][0]
    assert sub["levels_opened"] == [] and show()["levels"] == [1]


def test_reveal_all_shows_every_level_at_once(wb, isolated_state):
    kata("start", "adder", "--yes", "--reveal", "all")
    data = show()
    assert data["levels"] == [1, 2] and "## Level 2" in data["markdown"]
    assert json.loads(kata("status", "--json").output)["questions"][0]["levels_open"] == [1, 2]


def test_show_outside_a_session_shows_everything(wb):
    data = show()
    assert data["levels"] == [1, 2] and "## Level 2" in data["markdown"]


def test_an_exam_question_covers_only_its_levels(wb, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "oa", "--yes")
    data = show()
    assert data["levels"] == [1] and "## Level 2" not in data["markdown"]
    assert "This question covers level 1 of the kata's 2" in data["markdown"]
    reference(wb, isolated_state)
    at(monkeypatch, 60)
    sub = json.loads(kata("submit", "--json").output)["results"][0]
    assert {t["task_id"] for t in sub["tests"]} == {1} and len(sub["tests"]) == 2
    assert sub["points_earned"] == sub["points_possible"] == 10 and sub["levels_opened"] == []
    assert [lv["level"] for lv in sub["levels"]] == [1]
    assert show()["levels"] == [1]  # the question is level 1: nothing more opens
    at(monkeypatch, 400)  # past the 6-minute deadline
    rev = json.loads(kata("review", "--json").output)
    assert rev["points_earned"] == rev["points_possible"] == 10
    assert [t["task_id"] for t in rev["questions"][0]["result"]["tests"]] == [1, 1]
    hist = json.loads(kata("history", "--json").output)["sessions"][0]
    assert hist["points_possible"] == 10 and hist["status"] == "timed_out"


def test_review_and_history_show_when_each_level_passed(wb, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--yes")
    at(monkeypatch, 60)
    kata("submit", code=1)  # the stub: nothing passes
    reference(wb, isolated_state)
    at(monkeypatch, 150)
    kata("submit")  # level 1 passes, level 2 opens
    at(monkeypatch, 270)
    kata("submit")  # level 2 passes
    kata("finish")
    rev = kata("review").output
    assert "levels passed at: L1 2m30s, L2 4m30s (of levels 1, 2)" in rev
    assert "submitted at: 1m00s, 2m30s, 4m30s" in rev
    data = json.loads(kata("review", "--json").output)["questions"][0]
    assert data["level_passed_s"] == {"1": 150.0, "2": 270.0}
    hist = json.loads(kata("history", "--json").output)["sessions"][0]
    assert hist["level_passed_s"] == {"adder": {"1": 150.0, "2": 270.0}}
    assert hist["status"] == "finished"
    assert "L1 2m30s L2 4m30s" in kata("history").output  # one kata: its levels alone


def test_start_shows_the_briefing_and_asks_on_a_terminal(wb, isolated_state, monkeypatch):
    from typer.testing import CliRunner

    from kata.cli import app
    from kata.commands import learner_session

    monkeypatch.setattr(learner_session, "_interactive", lambda: True)

    result = CliRunner().invoke(app, ["start", "oa"], input="n\n")
    assert result.exit_code == 0, result.output
    assert "Mini assessment (6 min)" in result.output and "Q1. Adder (adder): level 1, about 6 min" in result.output
    assert "Rules:" in result.output and "Start the clock now?" in result.output
    assert "Not started; nothing was changed." in result.output
    assert "No live session" in kata("status").output
    assert not (isolated_state / "workspace").exists()
    result = CliRunner().invoke(app, ["start", "oa"], input="y\n")
    assert "Session 1 started" in result.output


def test_without_a_terminal_start_does_not_ask(wb):
    out = kata("start", "oa").output
    assert "Rules:" in out and "Start the clock" not in out and "Session 1 started" in out


def test_minutes_accept_decimals(wb, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    kata("start", "adder", "--minutes", "0.5", "--yes")
    assert json.loads(kata("status", "--json").output)["session"]["remaining_s"] == 30
    assert "positive number of minutes" in kata("start", "adder", "--minutes", "0", "--abandon", code=2).output


def test_unknown_target_suggests_the_closest_name(wb):
    out = kata("start", "addr", code=2).output
    assert "Did you mean 'adder'?" in out and len(out.strip().splitlines()) == 1
