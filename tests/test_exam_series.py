"""Exam series: `llm-infra-oa`, `llm-infra-oa-2` and `llm-infra-oa-3` are listed together by
`kata list`, and `kata progress` shows each one's best score side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kata.cli import app
from kata.session import exam_series, series_name

runner = CliRunner()


def kata(*args):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


class _Named:
    def __init__(self, name):
        self.name = name


def test_series_name_strips_only_a_trailing_number():
    got = [series_name(n) for n in ("llm-infra-oa-3", "llm-infra-oa", "warm-up", "oa-10", "7", "a-b2")]
    assert got == ["llm-infra-oa", "llm-infra-oa", "warm-up", "oa", "7", "a-b2"]


def test_exam_series_keeps_a_series_together_base_first_then_by_number():
    exams = [_Named(n) for n in ("llm-infra-full", "llm-infra-oa", "llm-infra-oa-10", "llm-infra-oa-2",
                                 "llm-infra-oa-3", "onsite")]
    got = [[e.name for e in members] for members in exam_series(exams)]
    assert got == [["llm-infra-full"], ["llm-infra-oa", "llm-infra-oa-2", "llm-infra-oa-3", "llm-infra-oa-10"],
                   ["onsite"]]


def _three_mocks(wb: Path) -> None:
    """The fixture's oa exam, plus oa-2 and oa-3 (the same question; names are what matter here)."""
    for n in (2, 3):
        shutil.copy(wb / "exams" / "oa.toml", wb / "exams" / f"oa-{n}.toml")


def test_list_shows_the_series_together(fixture_workbook, isolated_state):
    _three_mocks(fixture_workbook)
    (fixture_workbook / "exams" / "nb.toml").write_text('title = "Between"\nminutes = 10\nkatas = ["adder"]\n')
    data = json.loads(kata("list", "--json"))
    assert {e["name"]: e["series"] for e in data["exams"]} == {
        "mini": "mini", "nb": "nb", "oa": "oa", "oa-2": "oa", "oa-3": "oa"}
    names = [line.split()[0] for line in kata("list").splitlines()
             if line.split() and line.split()[0] in ("mini", "nb", "oa", "oa-2", "oa-3")]
    assert names == ["mini", "nb", "oa", "oa-2", "oa-3"]


def test_progress_shows_the_mocks_side_by_side(fixture_workbook, isolated_state):
    _three_mocks(fixture_workbook)
    kata("start", "oa-2")
    shutil.copy(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    kata("submit", "adder")
    kata("finish")
    lines = kata("progress").splitlines()
    table = [[cell for cell in line.split() if cell not in "│┃"]
             for line in lines[next(i for i, line in enumerate(lines) if "Mock assessments" in line) + 1:]]
    assert table[0] == ["oa", "oa-2", "oa-3"]
    assert next(row for row in table if row[:1] == ["best"]) == ["best", "-/10", "10/10", "(100%)", "-/10"]
    assert next(row for row in table if row[:1] == ["sessions"]) == ["sessions", "0", "1", "0"]
    data = json.loads(kata("progress", "--json"))["assessments"]
    assert data == [[{"exam": "oa", "points_possible": 10.0, "best": None, "sessions": 0},
                     {"exam": "oa-2", "points_possible": 10.0, "best": 10.0, "sessions": 1},
                     {"exam": "oa-3", "points_possible": 10.0, "best": None, "sessions": 0}]]


def test_the_third_assessment_is_calibrated_like_the_real_round():
    """Four questions, one per theme, in 90 minutes, none over 25; each shows at most 1,000 words
    of prose; and none of its katas is in another assessment of the series."""
    from kata.catalog import Workbook
    from kata.prompt import Prompt, level_note, prose_words

    wb = Workbook.find()
    exam = wb.exam("llm-infra-oa-3")
    assert exam.minutes == 90 and sum(q.minutes for q in exam.questions) == 90
    assert exam.katas == ("kv-block-allocator", "edf-admission", "token-reorder-buffer", "token-cost-ledger")
    for q in exam.questions:
        kata = wb.kata(q.kata)
        assert q.minutes <= 25 and q.levels == (1,), q
        note = level_note(list(q.levels), list(q.levels), len(kata.levels), q.reveal == "progressive")
        words = prose_words(Prompt.parse(kata.prompt.read_text()).render(q.levels, note))
        assert words <= 1000, (q.kata, words)
    others = [e for members in exam_series(wb.exams()) if exam.name in [m.name for m in members]
              for e in members if e.name != exam.name]
    assert others, "llm-infra-oa-3 is in the llm-infra-oa series"
    for other in others:
        assert not set(other.katas) & set(exam.katas), other.name
