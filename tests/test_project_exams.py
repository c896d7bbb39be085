"""The project mocks (exams with level_budgets): one kata in four gated levels, a 200-600 score
beside the points, and a review timeline of minutes per level against the reported budgets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kata.catalog import CatalogError, Workbook, load_exam, scaled_score
from kata.prompt import Prompt, prose_words
from tests.test_cli import kata

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ("llm-infra-ica-1", "llm-infra-ica-2", "llm-infra-ica-3")
T0 = 1_800_000_000.0


def test_the_scale_runs_from_200_for_nothing_to_600_for_everything():
    assert scaled_score(0, 100) == 200 and scaled_score(100, 100) == 600
    assert scaled_score(25, 100) == 300 and scaled_score(37.5, 100) == 350
    assert scaled_score(0, 0) == 200


@pytest.mark.parametrize("name", PROJECTS)
def test_a_project_is_one_kata_of_four_gated_levels_each_within_500_words_and_80_columns(name):
    wb = Workbook.find(ROOT)
    exam = wb.exam(name)
    assert exam.project and exam.minutes == 90
    (q,) = exam.questions
    assert q.levels == (1, 2, 3, 4) and q.reveal == "progressive"
    assert exam.level_budgets == ((10, 15), (20, 30), (30, 60), (30, 60))
    text = wb.kata(q.kata).prompt.read_text(encoding="utf-8")
    wide = [i for i, line in enumerate(text.splitlines(), 1) if len(line) > 80]
    assert not wide, f"{q.kata}: PROMPT.md lines over 80 columns: {wide[:5]}"
    prompt = Prompt.parse(text)
    for level in (1, 2, 3, 4):
        body = "".join(s.body for s in prompt.sections if s.level == level)
        assert body, f"{q.kata}: no section for level {level}"
        assert prose_words(body) <= 500, f"{q.kata} level {level}: {prose_words(body)} prose words"


def test_level_budgets_are_checked_with_a_line_that_says_what_to_write(tmp_path):
    (tmp_path / "exams").mkdir()
    known = {"adder": Workbook.find(ROOT / "tests" / "fixtures" / "workbook").kata("adder")}
    base = 'title = "P"\nminutes = 90\n{budgets}\n[[questions]]\nkata = "adder"\nminutes = 90\n{reveal}\n'
    cases = {
        ("level_budgets = [[10, 15], [20, 30]]", ""): "one question with reveal",
        ("level_budgets = [[10, 15]]", 'reveal = "progressive"'): "one [low, high] per level",
        ("level_budgets = [[15, 10], [20, 30]]", 'reveal = "progressive"'): "0 < low <= high",
    }
    for (budgets, reveal), words in cases.items():
        (tmp_path / "exams" / "p.toml").write_text(base.format(budgets=budgets, reveal=reveal))
        with pytest.raises(CatalogError) as caught:
            load_exam(tmp_path, "p", known)
        said = str(caught.value)
        assert words in said and "\n" not in said and "p.toml" in said, said


def test_a_project_session_opens_levels_in_turn_and_reviews_on_the_scale(isolated_state, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "llm-infra-ica-1", "--yes")
    mine = isolated_state / "workspace" / "kv_block_store.py"
    shutil.copyfile(ROOT / "solutions" / "kv-block-store.py", mine)
    status = json.loads(kata("status", "--json").stdout)
    assert status["session"]["scaled_score"] == 200  # nothing submitted yet
    opened = []
    for minute in (5, 20, 45, 80):  # each submit passes the open level, which opens the next
        monkeypatch.setenv("KATA_NOW", str(T0 + minute * 60))
        (row,) = json.loads(kata("submit", "kv-block-store", "--json").stdout)["results"]
        opened.append(row["levels_graded"])
    assert opened == [[1], [1, 2], [1, 2, 3], [1, 2, 3, 4]]  # every submit re-runs the open levels
    assert json.loads(kata("status", "--json").stdout)["session"]["scaled_score"] == 600
    monkeypatch.setenv("KATA_NOW", str(T0 + 91 * 60))
    review = json.loads(kata("review", "--json").stdout)
    assert review["scaled_score"] == 600 and review["points_earned"] == 100
    assert [(r["level"], r["minutes"], r["passed"]) for r in review["timeline"]] == \
        [(1, 5.0, True), (2, 15.0, True), (3, 25.0, True), (4, 35.0, True)]
    text = kata("review").stdout
    assert "600 on the 200-600 scale" in text and "level 2: 15 min, passed; reported 20-30 min" in text
