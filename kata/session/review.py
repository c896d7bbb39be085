"""`kata review`: a session's questions once it is over, each with its counted submission.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import kata.session.base as base
from kata.catalog import CatalogError, Exam, Question, Workbook, scaled_score
from kata.kinds import kind_named, kind_of
from kata.results import SuiteResult
from kata.session.base import _clock, open_store
from kata.session.levels import open_levels, questions_of
from kata.store import Session, StoreError, Submission


@dataclass
class QuestionReview:
    slug: str
    title: str
    submission: Submission | None  # the official one
    submissions: int  # how many hidden submissions in the session (before or after the cutoff)
    first_activity: float | None  # seconds after the session's start
    last_submission: float | None
    points_earned: float
    points_possible: float
    result: SuiteResult | None
    levels: list[int] = field(default_factory=list)  # the question's levels
    levels_open: list[int] = field(default_factory=list)
    splits: dict[int, float] = field(default_factory=dict)  # level -> seconds into the session
    submit_times: list[float] = field(default_factory=list)  # seconds into the session
    kind: str = "kata"  # the question's kind
    part: dict | None = None  # what its kind's review holds of it (Kind.review), shown by the kind
    level_points: dict[int, float] = field(default_factory=dict)  # each of the question's levels: its points
    evidence: str | None = None  # what its auto-submission went by, where the deadline keeper did not decide

    def part_json(self) -> dict | None:
        return kind_named(self.kind).review_json(self.part) if self.part is not None else None

    def part_lines(self) -> list[str]:
        return kind_named(self.kind).review_lines(self.part) if self.part is not None else []


@dataclass
class Review:
    session: Session
    questions: list[QuestionReview] = field(default_factory=list)
    live: Session | None = None  # a live session this review is not of (it opens later)
    project: Exam | None = None  # a project exam: the 200-600 score and the levels' timeline

    @property
    def scaled_score(self) -> int | None:
        return scaled_score(self.points_earned, self.points_possible) if self.project else None

    def timeline(self) -> list[dict]:
        """A project exam's minutes per level, against the minutes it is reported to take: a
        level's time runs from when it opened (the previous level passed) to when it passed, or
        to the end of the session for the level left open."""
        if self.project is None or not self.questions:
            return []
        q = self.questions[0]
        end = round(self.session.cutoff() - self.session.started_at, 1)
        rows, opened = [], 0.0
        for lv, budget in zip(q.levels, self.project.level_budgets, strict=False):
            passed = q.splits.get(lv)
            spent = None  # a level never opened took no time
            if lv in q.levels_open:
                spent = round(((passed if passed is not None else end) - opened) / 60, 1)
            rows.append({"level": lv, "minutes": spent, "passed": passed is not None, "budget": list(budget)})
            if passed is not None:
                opened = passed
        return rows

    @property
    def points_earned(self) -> float:
        return round(sum(q.points_earned for q in self.questions), 2)

    @property
    def points_possible(self) -> float:
        return sum(q.points_possible for q in self.questions)


def project_exam(wb: Workbook, s: Session) -> Exam | None:
    """The project exam (kata.catalog.Exam.project) the session is of, if it is one."""
    if s.kind != "exam" or s.name not in wb.exam_names():
        return None
    try:
        exam = wb.exam(s.name)
    except CatalogError:
        return None
    return exam if exam.project else None


def scaled_now(wb: Workbook, s: Session) -> int | None:
    """A project exam's 200-600 score from the submissions counted so far (None for other sessions)."""
    if project_exam(wb, s) is None:
        return None
    store = open_store(wb)
    earned = possible = 0.0
    for q in questions_of(wb, s):
        official = store.official_submission(s, q.kata)
        earned += official.points_earned if official else 0.0
        possible += _question_points(wb, q)[1]
    return scaled_score(earned, possible)


def _question_points(wb: Workbook, q: Question) -> tuple[str, float]:
    try:
        kata = wb.kata(q.kata)
    except CatalogError:
        return q.kata, 0.0
    fix = float(sum(lv.points for lv in kata.levels if lv.number in q.levels))
    return kata.title, kind_of(q).worth(fix)


def _level_points(wb: Workbook, q: Question) -> dict[int, float]:
    """Each of the question's levels: the points its hidden tests are worth."""
    try:
        kata = wb.kata(q.kata)
    except CatalogError:
        return {}
    return {lv.number: float(lv.points) for lv in kata.levels if lv.number in q.levels}


def review(wb: Workbook, session_id: int | None) -> Review:
    from kata.grading import SuiteResult

    store = open_store(wb)
    t = base.now()
    if session_id is None:
        session = store.last_ended_session(t)
        if session is None:
            live = store.live_session(t)
            if live is not None:
                raise StoreError(
                    f"session {live.id} is still live ({_clock(live.remaining(t))} left): "
                    "review opens after its deadline or `kata finish`"
                )
            raise StoreError("no ended session to review: `kata start` one first")
    else:
        session = store.session(session_id, t)
        if session.is_live(t):
            raise StoreError(
                f"session {session.id} is still live: review opens after its deadline or `kata finish`"
            )
    live = store.live_session(t)
    rev = Review(session, live=live if live is not None and live.id != session.id else None,
                 project=project_exam(wb, session))
    kept = store.deadline_snapshots(session.id)
    for q in questions_of(wb, session):
        title, possible = _question_points(wb, q)
        said = kept.get((q.kata, "evidence"))  # kata.session.settle's EVIDENCE_FILE
        subs = store.submissions(session_id=session.id, slug=q.kata, suite=None)
        hidden = [s for s in subs if s.suite == "hidden"]
        official = store.official_submission(session, q.kata)
        result = SuiteResult.from_json(official.result) if official else None
        passed = {lv: at for lv, at in store.passed_levels(session.id, q.kata).items()
                  if at <= session.cutoff()}
        rev.questions.append(QuestionReview(
            slug=q.kata, title=title, submission=official, submissions=len(hidden),
            # every time here rounded alike (to 0.1 s), so one submission shows one clock time
            first_activity=round(subs[0].submitted_at - session.started_at, 1) if subs else None,
            last_submission=round(official.submitted_at - session.started_at, 1) if official else None,
            points_earned=official.points_earned if official else 0.0,
            points_possible=possible,
            result=result,
            levels=list(q.levels),
            levels_open=open_levels(q, passed),
            splits={lv: round(at - session.started_at, 1) for lv, at in sorted(passed.items())},
            submit_times=[round(s.submitted_at - session.started_at, 1) for s in hidden],
            kind=q.kind, part=kind_of(q).review(wb, store, session, q),
            level_points=_level_points(wb, q),
            evidence=said.code if said is not None else None,
        ))
    return rev
