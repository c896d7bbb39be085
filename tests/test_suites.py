"""Suite versions and regrading: a grade records the hidden suite that made it; history, progress
and gradebooks say when scores come from different suites; `kata regrade` grades recorded
submissions again on today's suite and keeps the old result beside the new."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from kata.catalog import Workbook
from kata.cli import app
from kata.grading import write_manifest
from kata.session import open_store
from kata.suites import suite_version
from tests.conftest import FIXTURES

runner = CliRunner()

NEW_TEST = '''

@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("adds negatives")
def test_add_negatives(impl):
    got = impl.add(-2, -3)
    assert same(got, -5), f"Called add(-2, -3). Returned {got!r}, expected -5."
'''


def kata(*args, code=0):
    result = runner.invoke(app, list(args))
    assert code is None or result.exit_code == code, result.output
    return result


def change_the_hidden_suite(root) -> None:
    """An author adds a hidden test (the reference passes it; add-as-concatenation fails it)."""
    with (root / "graders" / "adder" / "test_adder.py").open("a") as fh:
        fh.write(NEW_TEST)
    write_manifest(Workbook.find().kata("adder"))


def test_a_session_graded_before_and_after_a_suite_change_shows_both(fixture_workbook, isolated_state):
    wb = Workbook.find()
    before = suite_version(wb.kata("adder"))
    kata("start", "adder", "--yes", "--reveal", "all")
    # a solution that passes today's suite but adds negatives wrongly
    shutil.copy(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    text = (isolated_state / "workspace" / "adder.py").read_text()
    (isolated_state / "workspace" / "adder.py").write_text(
        text.replace("return a + b", "return a + b if a >= 0 else abs(a) + b"))
    kata("submit")
    kata("finish", *(["--yes"] if "--yes" in kata("finish", "--help").output else []))
    (row,) = json.loads(kata("history", "--json").output)["sessions"]
    assert row["points_earned"] == 30 and row["other_suite"] == {}

    change_the_hidden_suite(fixture_workbook)
    after = suite_version(Workbook.find().kata("adder"))
    assert after != before
    (row,) = json.loads(kata("history", "--json").output)["sessions"]
    assert row["other_suite"] == {"adder": before}  # scored on a suite that is not today's
    assert "older version of a hidden suite" in kata("history").output
    (prog,) = json.loads(kata("progress", "--json").output)["katas"]
    assert prog["other_suite_sessions"] == [1]

    out = kata("regrade", "1").output
    assert "1 submission(s) regraded" in out and f"suite {before}" in out and f"suite {after}" in out
    (row,) = json.loads(kata("history", "--json").output)["sessions"]
    assert row["other_suite"] == {} and row["points_earned"] < 30  # the new test fails this code
    store = open_store(Workbook.find())
    originals = store.submissions(session_id=1, current=False)
    current = store.submissions(session_id=1)
    assert [s.suite_version for s in originals] == [before]
    assert [s.suite_version for s in current] == [after] and current[0].regrade_of == originals[0].id
    assert current[0].code == originals[0].code and current[0].submitted_at == originals[0].submitted_at
    assert "already" in kata("regrade", "1").output  # nothing left to regrade


def test_a_live_session_is_not_regraded(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    assert "still live" in kata("regrade", "1", code=2).output


def test_a_batch_is_regraded_from_its_gradebook(fixture_workbook, isolated_state, tmp_path):
    cohort = tmp_path / "subs"
    for name in ("alice", "bob", "erin"):
        shutil.copytree(FIXTURES / "cohort" / name, cohort / name)
    kata("grade-batch", str(cohort), "--out", str(tmp_path / "g"))
    book = json.loads((tmp_path / "g" / "gradebook.json").read_text())
    assert book["submissions"] == str(cohort) and not book["mixed_suite_versions"]
    rows = {r["student"]: r for r in book["rows"]}
    assert rows["alice"]["file"] == "alice/adder.py" and rows["erin"]["file"] == "erin/workspace/adder.py"
    old_version = rows["alice"]["suite_version"]

    change_the_hidden_suite(fixture_workbook)
    (cohort / "bob" / "adder.py").write_text("# bob changed his file after the deadline\n")
    out = kata("regrade", "--batch", str(tmp_path / "g" / "gradebook.json"), "--out", str(tmp_path / "r")).output
    assert "Regraded 3 students" in out
    new = json.loads((tmp_path / "r" / "gradebook.json").read_text())
    rows = {r["student"]: r for r in new["rows"]}
    assert rows["alice"]["points_earned"] == 30 and rows["alice"]["previous"] == {
        "points_earned": 30, "suite_version": old_version}
    assert rows["alice"]["suite_version"] != old_version
    assert rows["bob"]["status"] == "error" and "changed since it was graded" in rows["bob"]["message"]
    # a merge of gradebooks graded on two suites says so
    from kata.cohort import gradebook, Row
    mixed = gradebook([Row(**book["rows"][0]), Row(**new["rows"][0])], book["katas"], "1/1", ["alice"])
    assert mixed["mixed_suite_versions"] is True
