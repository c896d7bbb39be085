"""A hostile class: a student who links, renames or edits things to bend grade-batch, a regrade or
the runner gets an error row with a one-line reason, never a classmate's grade, and nothing is
written outside the folders the instructor named."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kata.catalog import CatalogError, Workbook
from kata.cli import app
from kata.cohort import Row, gradebook, grade_batch, regrade_batch, write_gradebook
from kata.grading import Limits
from tests.conftest import FIXTURES

runner = CliRunner()
# no shorter bound after two timeouts: on a loaded machine it could cut a slow correct test short
FAST = Limits(test_timeout=2, hard_test_grace=2, wall_timeout=120, strike_timeout=2)
FORMULA = ("=", "+", "-", "@")


def kata(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def a_class(root: Path, *names: str) -> Path:
    """root/<name>/ for each name: alice's and bob's files from the fixture cohort, anyone else a
    folder with notes only (no kata file: a missing row)."""
    for name in names:
        (root / name).mkdir(parents=True)
        if name in ("alice", "bob"):
            shutil.copyfile(FIXTURES / "cohort" / name / "adder.py", root / name / "adder.py")
        else:
            (root / name / "notes.txt").write_text("nothing handed in\n")
    return root


def by_student(book: dict) -> dict[str, dict]:
    return {r["student"]: r for r in book["rows"]}


def refused(row: dict, *words: str) -> bool:
    message = row["message"] or ""
    return (row["status"] == "error" and row["points_earned"] == 0 and "\n" not in message
            and all(w in message for w in words))


# --- 1. graded on a classmate's work ------------------------------------------------------------


def test_a_folder_linked_to_a_classmates_is_an_error_row_not_their_grade(fixture_workbook, tmp_path):
    subs = a_class(tmp_path / "subs", "alice")
    (subs / "copycat").symlink_to(subs / "alice", target_is_directory=True)  # the student folder
    (subs / "sneak").mkdir()
    (subs / "sneak" / "workspace").symlink_to(Path("..") / "alice", target_is_directory=True)
    book = grade_batch(Workbook.find(fixture_workbook), subs, workers=2, limits=FAST)
    rows = by_student(book)
    assert rows["alice"]["status"] == "pass" and rows["alice"]["points_earned"] == 30
    assert set(book["students"]) == {"alice", "copycat", "sneak"}  # flagged, not skipped
    assert refused(rows["copycat"], "copycat", "a symbolic link"), rows["copycat"]
    assert refused(rows["sneak"], "sneak/workspace", "a symbolic link"), rows["sneak"]
    assert rows["copycat"]["sha256"] is None and rows["sneak"]["sha256"] is None


def test_a_file_hard_linked_to_a_classmates_is_an_error_row(fixture_workbook, tmp_path):
    subs = a_class(tmp_path / "subs", "alice")
    (subs / "twin").mkdir()
    os.link(subs / "alice" / "adder.py", subs / "twin" / "adder.py")
    rows = by_student(grade_batch(Workbook.find(fixture_workbook), subs, workers=2, limits=FAST))
    assert refused(rows["twin"], "twin/adder.py", "a hard link"), rows["twin"]
    assert refused(rows["alice"], "alice/adder.py", "a hard link"), rows["alice"]  # which is whose: not ours to say


def _graded(fixture_workbook, tmp_path, *names: str) -> tuple[Path, Path, dict]:
    subs = a_class(tmp_path / "subs", *names)
    out = tmp_path / "g"
    write_gradebook(grade_batch(Workbook.find(fixture_workbook), subs, workers=2, limits=FAST), out)
    return subs, out / "gradebook.json", json.loads((out / "gradebook.json").read_text())


def _edit(path: Path, book: dict, student: str, **changes) -> None:
    for row in book["rows"]:
        if row["student"] == student:
            row.update(changes)
    path.write_text(json.dumps(book))


def test_a_regrade_never_follows_a_recorded_path_out_of_its_students_folder(fixture_workbook, tmp_path):
    subs, path, book = _graded(fixture_workbook, tmp_path, "alice", "bob", "bea")
    shutil.copyfile(subs / "bob" / "adder.py", subs / "bea" / "adder.py")  # bea hands in the stub
    alices = by_student(book)["alice"]["sha256"]
    _edit(path, book, "bob", file="bob/../alice/adder.py", sha256=alices)
    _edit(path, book, "bea", status="fail", file="alice/adder.py", sha256=alices)
    new = by_student(regrade_batch(Workbook.find(fixture_workbook), path, limits=FAST))
    assert new["alice"]["status"] == "pass" and new["alice"]["points_earned"] == 30
    assert refused(new["bob"], "bob/../alice/adder.py", "not regraded"), new["bob"]
    assert refused(new["bea"], "alice/adder.py", "not regraded"), new["bea"]


def test_a_regrade_derives_every_score_from_the_submissions(fixture_workbook, tmp_path):
    subs, path, book = _graded(fixture_workbook, tmp_path, "alice", "frank", "gina", "hank")
    _edit(path, book, "frank", points_earned=25)  # an invented score on a "missing" row
    _edit(path, book, "gina", status="pass", points_earned=30, levels=[10.0, 10.0, 10.0])
    shutil.copyfile(subs / "alice" / "adder.py", subs / "hank" / "adder.py")  # handed in late
    new = by_student(regrade_batch(Workbook.find(fixture_workbook), path, limits=FAST))
    assert new["alice"]["points_earned"] == 30 and new["alice"]["previous"]["points_earned"] == 30
    assert new["frank"]["status"] == "missing" and new["frank"]["points_earned"] == 0
    assert new["frank"]["previous"]["points_earned"] == 25  # the change shows
    assert new["gina"]["points_earned"] == 0, new["gina"]
    assert refused(new["hank"], "hank/adder.py", "not regraded"), new["hank"]


def test_a_regrade_refuses_a_submissions_folder_that_moved(fixture_workbook, tmp_path):
    subs, path, _ = _graded(fixture_workbook, tmp_path, "alice")
    moved = tmp_path / "moved"
    subs.rename(moved)
    subs.symlink_to(moved, target_is_directory=True)
    result = kata("regrade", "--batch", path, "--out", tmp_path / "r", code=2)
    assert "a symbolic link" in result.output and len(result.output.strip().splitlines()) == 1
    subs.unlink()
    result = kata("regrade", "--batch", path, "--out", tmp_path / "r", code=2)
    assert "is gone" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
    with pytest.raises(CatalogError, match="not a folder"):
        path.write_text(path.read_text().replace(str(subs), str(moved / "alice" / "adder.py")))
        regrade_batch(Workbook.find(fixture_workbook), path)


# --- 3. outputs a classmate cannot break --------------------------------------------------------


def test_a_cell_a_spreadsheet_would_run_is_written_inert(fixture_workbook, tmp_path):
    names = ("=1+1", "@SUM(A1)", "+cmd", "-2+3", "alice")
    subs = a_class(tmp_path / "subs", *names)
    kata("grade-batch", subs, "--out", tmp_path / "g", "--workers", "2")
    for name in ("gradebook.csv", "gradebook-wide.csv"):
        with open(tmp_path / "g" / name, newline="") as f:
            cells = [cell for row in csv.reader(f) for cell in row]
        assert not [c for c in cells if c.startswith(FORMULA)], name
        for student in names[:-1]:
            assert "'" + student in cells, (name, student)
    book = json.loads((tmp_path / "g" / "gradebook.json").read_text())
    assert set(book["students"]) == set(names)  # the JSON keeps the names as they are
    # a number stays a number, a negative one too
    rows = [Row("-5", "adder", "fail", -2.5, 30, [-2.5, 0.0, 0.0], [])]
    write_gradebook(gradebook(rows, {"adder": ["a", "b", "c"]}, "1/1", ["-5"]), tmp_path / "n")
    line = (tmp_path / "n" / "gradebook.csv").read_text().splitlines()[1]
    assert line == "-5,adder,fail,-2.5,30,-2.5,0.0,0.0,0"
    assert (tmp_path / "n" / "gradebook-wide.csv").read_text().splitlines()[1] == "-5,-2.5,-2.5,30"


# --- the runner ---------------------------------------------------------------------------------


def test_the_runner_refuses_a_linked_solution_file(fixture_workbook, tmp_path):
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "adder.py").symlink_to(FIXTURES / "cohort" / "alice" / "adder.py")
    kata("runner", "adder", tmp_path / "input", tmp_path / "out")
    got = json.loads((tmp_path / "out" / "results.json").read_text())
    assert got["status"] == "error" and got["tests"] == []
    assert "adder.py: a symbolic link" in got["message"] and "\n" not in got["message"]


def test_the_runner_replaces_a_planted_results_link_and_leaves_its_target_alone(fixture_workbook, tmp_path):
    solution = tmp_path / "solution"  # Exercism's runners write beside the solution
    solution.mkdir()
    shutil.copyfile(FIXTURES / "cohort" / "bob" / "adder.py", solution / "adder.py")
    precious = tmp_path / "precious.txt"
    precious.write_text("the instructor's file\n")
    (solution / "results.json").symlink_to(precious)
    kata("runner", "adder", solution, solution)
    assert precious.read_text() == "the instructor's file\n"
    assert not (solution / "results.json").is_symlink()
    assert json.loads((solution / "results.json").read_text())["status"] == "fail"
    assert sorted(os.listdir(solution)) == ["adder.py", "results.json"]  # no temporary file left


def test_the_runner_refuses_an_output_folder_linked_out_of_the_submission(fixture_workbook, tmp_path):
    solution = tmp_path / "solution"
    solution.mkdir()
    shutil.copyfile(FIXTURES / "cohort" / "bob" / "adder.py", solution / "adder.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (solution / "out").symlink_to(elsewhere, target_is_directory=True)
    result = kata("runner", "adder", solution, solution / "out", code=2)
    assert "OUTPUT_DIR" in result.output and "a symbolic link" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert list(elsewhere.iterdir()) == []
