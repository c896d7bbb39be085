"""Across sessions: `kata history`, `kata status`, `kata progress` and the mock assessments
side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import kata.session.base as base
from kata.catalog import Exam, Kata, Workbook
from kata.kinds import KINDS, kind_of
from kata.results import PASS
from kata.session.base import open_store
from kata.session.grade import _Versions
from kata.session.levels import best_scores, open_levels, question_for, questions_of
from kata.session.review import _question_points
from kata.store import Session


@dataclass
class HistoryRow:
    session: Session
    points_earned: float
    points_possible: float
    splits: dict[str, dict[int, float]]  # slug -> level -> seconds into the session it passed
    auto_submitted: list[str] = field(default_factory=list)  # slugs whose counted score is an auto-submission
    # slug -> the suite version its counted score came from, where that is not today's suite
    other_suite: dict[str, str | None] = field(default_factory=dict)






def history(wb: Workbook) -> list[HistoryRow]:
    """Every session with its official score and the split times of the levels passed."""
    store = open_store(wb)
    today = _Versions(wb)
    rows = []
    for s in store.sessions(base.now()):
        earned = possible = 0.0
        splits: dict[str, dict[int, float]] = {}
        auto: list[str] = []
        other: dict[str, str | None] = {}
        for q in questions_of(wb, s):
            official = store.official_submission(s, q.kata)
            possible += _question_points(wb, q)[1]
            if official:
                earned += official.points_earned
                if official.auto:
                    auto.append(q.kata)
                if today[q.kata] is not None and official.suite_version != today[q.kata]:
                    other[q.kata] = official.suite_version
            passed = store.passed_levels(s.id, q.kata)
            if passed:
                splits[q.kata] = {lv: round(at - s.started_at, 1) for lv, at in sorted(passed.items())
                                  if at <= s.cutoff()}
        rows.append(HistoryRow(s, round(earned, 2), possible, splits, auto, other))
    return rows


@dataclass
class QuestionStatus:
    slug: str
    title: str
    file: Path
    exists: bool
    visible: tuple[int, int] | None  # (passed, total) of the last check; None: none since a level opened
    hidden: tuple[float, float] | None  # (points earned, possible over the question's levels)
    levels: list[int] = field(default_factory=list)
    levels_open: list[int] = field(default_factory=list)
    minutes: float = 0
    note: object = None  # what the question's kind says of it (Kind.status_note), or None
    note_label: str = "note"  # what the kind calls that note ("pin")
    kind: str = "kata"


def status(wb: Workbook) -> tuple[Session | None, float, list[QuestionStatus]]:
    store = open_store(wb)
    t = base.now()
    session = store.live_session(t)
    if session is None:
        return None, 0.0, []
    rows = []
    for q in questions_of(wb, session):
        kata = wb.kata(q.kata)
        checks = store.submissions(session_id=session.id, slug=q.kata, suite="visible")
        passed = store.passed_levels(session.id, q.kata)
        visible = None
        if checks:
            tests = checks[-1].result.get("tests", [])
            checked = {x.get("task_id") for x in tests}
            if all(lv in checked for lv in open_levels(q, passed)):  # else a level opened since
                visible = (sum(x["status"] == PASS for x in tests), len(tests))
        possible = _question_points(wb, q)[1]
        best = store.official_submission(session, q.kata)  # the score that counts: the best so far
        hidden = (best.points_earned, possible) if best else None
        path = wb.workspace_file(kata)
        rows.append(QuestionStatus(q.kata, kata.title, path, path.is_file(), visible, hidden,
                                   list(q.levels), open_levels(q, passed), q.minutes,
                                   kind_of(q).status_note(best), kind_of(q).label, q.kind))
    return session, session.remaining(t), rows




@dataclass
class KataProgress:
    kata: Kata
    per_session: list[tuple[int, float]]  # (session id, its official points for this kata), in order
    best: float  # best points earned in any hidden submission (practice included)
    fastest: dict[int, float]  # level -> fewest seconds into a session it took to pass
    other_suite: list[int] = field(default_factory=list)  # sessions whose score came from another suite
    # sessions whose question's kind scores it otherwise than the kata (Kind.counts_toward_best):
    # {session, kind, note (Kind.status_note), points_earned, points_possible}
    beside: list[dict] = field(default_factory=list)
    best_graded: float = 0.0  # the most points any hidden submission was graded on (its levels')


def progress(wb: Workbook) -> list[KataProgress]:
    """Per kata: the official score of every session that held it, the best score ever, and the
    fastest time each level was passed."""
    store = open_store(wb)
    best = best_scores(wb)
    sessions_ = store.sessions(base.now())
    today = _Versions(wb)
    rows = []
    for kata in wb.katas():
        per_session: list[tuple[int, float]] = []
        fastest: dict[int, float] = {}
        other: list[int] = []
        beside: list[dict] = []
        for s in sessions_:
            if kata.slug not in s.katas:
                continue
            official = store.official_submission(s, kata.slug)
            q = question_for(wb, s, kata.slug)
            kind = kind_of(q) if q is not None else KINDS["kata"]
            if q is not None and not kind.counts_toward_best:
                beside.append({"session": s.id, "kind": kind.name, "note": kind.status_note(official),
                               "points_earned": official.points_earned if official else 0.0,
                               "points_possible": official.points_possible if official
                               else _question_points(wb, q)[1]})
                continue
            per_session.append((s.id, official.points_earned if official else 0.0))
            if official and today[kata.slug] is not None and official.suite_version != today[kata.slug]:
                other.append(s.id)
            for lv, at in store.passed_levels(s.id, kata.slug).items():
                took = at - s.started_at
                if at <= s.cutoff() and (lv not in fastest or took < fastest[lv]):
                    fastest[lv] = round(took, 1)
        earned, graded = best.get(kata.slug, (0.0, 0))
        rows.append(KataProgress(kata, per_session, earned, dict(sorted(fastest.items())), other, beside,
                                 float(graded)))
    return rows




def series_name(exam_name: str) -> str:
    """The series an exam belongs to: its name without a trailing `-<number>`.

    Example: 'llm-infra-oa-3' -> 'llm-infra-oa'; 'llm-infra-oa' -> 'llm-infra-oa'; 'warm-up' -> 'warm-up'.
    """
    head, _, tail = exam_name.rpartition("-")
    return head if head and tail.isdigit() else exam_name


def exam_series(exams: list[Exam]) -> list[list[Exam]]:
    """Exams grouped by series, in the order each series first appears; inside a series the base
    exam first, then by number (so '-10' comes after '-3'). A lone exam is a series of one."""
    groups: dict[str, list[Exam]] = {}
    for e in exams:
        groups.setdefault(series_name(e.name), []).append(e)

    def number(e: Exam) -> int:
        return 0 if series_name(e.name) == e.name else int(e.name.rpartition("-")[2])

    return [sorted(members, key=number) for members in groups.values()]


@dataclass
class ExamBest:
    exam: Exam
    points_possible: float
    best: float | None  # the best official score of a session of this exam; None if never taken
    sessions: int


def assessment_progress(wb: Workbook) -> list[list[ExamBest]]:
    """For every series of more than one exam (the mock assessments): each exam's best session
    score, so that attempts at different mocks can be compared side by side."""
    by_exam: dict[str, list[float]] = {}
    for row in history(wb):
        if row.session.kind == "exam":
            by_exam.setdefault(row.session.name, []).append(row.points_earned)
    out: list[list[ExamBest]] = []
    for members in exam_series(wb.exams()):
        if len(members) < 2:
            continue
        series: list[ExamBest] = []
        for e in members:
            scores = by_exam.get(e.name, [])
            possible = sum(_question_points(wb, q)[1] for q in e.questions)
            series.append(ExamBest(e, possible, max(scores) if scores else None, len(scores)))
        out.append(series)
    return out


