"""Every online assessment (an exam named llm-infra-oa*) is shaped like the real round: four
questions in 90 minutes, none over 25 minutes or 1,000 words of prose as shown, and no kata asked
by two of them (a second mock must not repeat a question of the first)."""

from __future__ import annotations

import pytest

from kata.catalog import Workbook
from kata.prompt import Prompt, level_note, prose_words

WB = Workbook.find()
OA_EXAMS = [e.name for e in WB.exams() if e.name.startswith("llm-infra-oa")]


def test_there_is_more_than_one_online_assessment():
    assert "llm-infra-oa" in OA_EXAMS and "llm-infra-oa-2" in OA_EXAMS, OA_EXAMS


@pytest.mark.parametrize("name", OA_EXAMS)
def test_online_assessment_is_shaped_like_the_real_round(name):
    exam = WB.exam(name)
    assert exam.minutes == 90 and sum(q.minutes for q in exam.questions) == 90, name
    assert len(exam.questions) == 4, name
    total = 0
    for q in exam.questions:
        assert q.minutes <= 25, (name, q)
        assert q.levels[0] == 1 and len(q.levels) <= 2, (name, q)  # the question, and at most its follow-up
        kata = WB.kata(q.kata)
        note = level_note(list(q.levels), list(q.levels), len(kata.levels), q.reveal == "progressive")
        words = prose_words(Prompt.parse(kata.prompt.read_text()).render(q.levels, note))
        assert words <= 1000, (name, q.kata, words)
        total += words
    assert total <= 4000, (name, total)


def test_no_kata_is_asked_by_two_online_assessments():
    seen: dict[str, str] = {}
    for name in OA_EXAMS:
        for slug in WB.exam(name).katas:
            assert slug not in seen, f"{slug} is in both {seen[slug]} and {name}"
            seen[slug] = name


def test_every_online_assessment_is_worth_the_same_points():
    """Mocks of one series are compared side by side (`kata progress`): same total, same weights."""
    for name in OA_EXAMS:
        worth = [sum(WB.kata(q.kata).levels[lv - 1].points for lv in q.levels) for q in WB.exam(name).questions]
        assert sum(worth) == 100, (name, worth)
