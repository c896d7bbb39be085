"""What the learner's commands do, without any printing: start, check, submit, hint, finish, review.

cli.py parses arguments and renders; everything it renders comes back from here as plain data, so
each step is unit-tested without the CLI. Times come from `now()`, which honours $KATA_NOW (seconds
since the epoch) so that scripts and tests can run a session on their own clock.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from kata.catalog import CatalogError, Exam, Kata, Workbook
from kata.store import Session, Store, StoreError, Submission, still_live_message


def now() -> float:
    fake = os.environ.get("KATA_NOW")
    if fake:
        try:
            return float(fake)
        except ValueError:
            raise CatalogError(f"$KATA_NOW={fake!r}: must be seconds since the epoch") from None
    return time.time()


def open_store(wb: Workbook) -> Store:
    return Store(wb.kata_dir / "kata.db")


# --- start ------------------------------------------------------------------


@dataclass
class Started:
    session: Session
    abandoned: Session | None
    katas: list[Kata]
    prepared: list  # list[workspace.Prepared]


def resolve_target(wb: Workbook, target: str | None) -> tuple[str, str, list[Kata], int]:
    """EXAM or SLUG (default: the default exam) -> (kind, name, katas, minutes)."""
    from kata.catalog import DEFAULT_EXAM

    name = target or DEFAULT_EXAM
    if name in wb.exam_names():
        exam: Exam = wb.exam(name)
        return "exam", exam.name, [wb.kata(s) for s in exam.katas], exam.minutes
    if name in wb.slugs():
        kata = wb.kata(name)
        return "kata", kata.slug, [kata], kata.minutes
    exams = ", ".join(wb.exam_names()) or "none"
    raise CatalogError(
        f"'{name}' is neither an exam nor a kata; exams: {exams}; katas: {', '.join(wb.slugs())}"
    )


def start(wb: Workbook, target: str | None, abandon: bool = False,
          minutes: int | None = None) -> Started:
    from kata import workspace

    kind, name, katas, default_minutes = resolve_target(wb, target)
    if minutes is not None and minutes <= 0:
        raise CatalogError(f"--minutes must be a positive whole number, got {minutes}")
    t = now()
    store = open_store(wb)
    # refuse before touching the workspace: a refused start changes nothing
    live = store.live_session(t)
    if live is not None and not abandon:
        raise StoreError(still_live_message(live, t))
    prepared = workspace.prepare(wb, katas, t)
    session, abandoned = store.start_session(kind, name, [k.slug for k in katas],
                                             minutes or default_minutes, t, abandon=abandon)
    return Started(session, abandoned, katas, prepared)


# --- check and submit -------------------------------------------------------


def live_session(wb: Workbook) -> Session | None:
    return open_store(wb).live_session(now())


def pick_katas(wb: Workbook, slug: str | None, all_: bool) -> list[Kata]:
    """The katas a check/submit is about: SLUG, --all (the live session's), or the only one."""
    if slug and all_:
        raise CatalogError("give a kata SLUG or --all, not both")
    if slug:
        return [wb.kata(slug)]
    session = live_session(wb)
    if session is None:
        raise CatalogError("no live session: name a kata (`kata submit SLUG`) or `kata start` one")
    if all_ or len(session.katas) == 1:
        return [wb.kata(s) for s in session.katas]
    raise CatalogError(
        f"session {session.id} has {len(session.katas)} katas ({', '.join(session.katas)}): "
        "name one, or use --all"
    )


@dataclass
class Graded:
    kata: Kata
    path: Path
    result: object  # grading.SuiteResult
    session: Session | None  # the live session it counts for, if any
    submission: Submission | None = None


def _grade_file(wb: Workbook, kata: Kata, suite: str) -> Graded:
    from kata import grading, workspace

    path, code = workspace.read_learner_file(wb, kata)
    junit = wb.kata_dir / "junit" / f"{kata.slug}-{suite}.xml"  # the latest run, for CI systems
    junit.parent.mkdir(parents=True, exist_ok=True)
    result = grading.grade(kata, path, suite=suite, junit_xml=junit)
    t = now()
    store = open_store(wb)
    session = store.live_session(t)
    if session is not None and kata.slug not in session.katas:
        session = None
    sub = store.add_submission(session.id if session else None, kata.slug, code,
                               result.to_json(), t, suite=suite)
    return Graded(kata, path, result, session, sub)


def check(wb: Workbook, katas: list[Kata]) -> list[Graded]:
    return [_grade_file(wb, k, "visible") for k in katas]


def submit(wb: Workbook, katas: list[Kata]) -> list[Graded]:
    if wb.is_student_bundle or any(not k.grader.is_dir() for k in katas):
        raise CatalogError(
            "this workbook has no hidden suites (a student bundle): grading happens on your "
            "instructor's side; `kata check` runs the visible tests here, and your workspace/ "
            "files are what you hand in"
        )
    return [_grade_file(wb, k, "hidden") for k in katas]


# --- hints ------------------------------------------------------------------


@dataclass
class Hint:
    kata: Kata
    index: int  # 0-based in kata.hints
    level: int
    text: str
    total: int


def next_hint(wb: Workbook, kata: Kata) -> Hint | None:
    """Reveal and record the next hint (in the live session if it holds the kata). None: all shown."""
    store = open_store(wb)
    t = now()
    session = store.live_session(t)
    sid = session.id if session and kata.slug in session.katas else None
    shown = set(store.revealed_hints(kata.slug, sid))
    for i, (level, text) in enumerate(kata.hints):
        if i not in shown:
            store.reveal_hint(sid, kata.slug, i, t)
            return Hint(kata, i, level, text, len(kata.hints))
    return None


def revealed(wb: Workbook, kata: Kata) -> list[Hint]:
    store = open_store(wb)
    session = store.live_session(now())
    sid = session.id if session and kata.slug in session.katas else None
    return [Hint(kata, i, kata.hints[i][0], kata.hints[i][1], len(kata.hints))
            for i in store.revealed_hints(kata.slug, sid)]


# --- finish, review, history, status ----------------------------------------


def finish(wb: Workbook) -> Session:
    store = open_store(wb)
    session = store.live_session(now())
    if session is None:
        raise StoreError("no live session to finish: `kata history` lists past sessions")
    return store.finish_session(session.id, now())


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
    result: object | None  # grading.SuiteResult


@dataclass
class Review:
    session: Session
    questions: list[QuestionReview] = field(default_factory=list)

    @property
    def points_earned(self) -> float:
        return round(sum(q.points_earned for q in self.questions), 2)

    @property
    def points_possible(self) -> float:
        return sum(q.points_possible for q in self.questions)


def review(wb: Workbook, session_id: int | None) -> Review:
    from kata.grading import SuiteResult

    store = open_store(wb)
    t = now()
    if session_id is None:
        session = store.last_ended_session(t)
        if session is None:
            live = store.live_session(t)
            if live is not None:
                raise StoreError(
                    f"session {live.id} is still live ({int(live.remaining(t) // 60)} min left): "
                    "review opens after its deadline or `kata finish`"
                )
            raise StoreError("no ended session to review: `kata start` one first")
    else:
        session = store.session(session_id, t)
        if session.is_live(t):
            raise StoreError(
                f"session {session.id} is still live: review opens after its deadline or `kata finish`"
            )
    rev = Review(session)
    for slug in session.katas:
        try:
            kata = wb.kata(slug)
            title, possible = kata.title, kata.points
        except CatalogError:
            kata, title, possible = None, slug, 0
        subs = store.submissions(session_id=session.id, slug=slug, suite=None)
        hidden = [s for s in subs if s.suite == "hidden"]
        official = store.official_submission(session, slug)
        result = SuiteResult.from_json(official.result) if official else None
        rev.questions.append(QuestionReview(
            slug=slug, title=title, submission=official, submissions=len(hidden),
            first_activity=(subs[0].submitted_at - session.started_at) if subs else None,
            last_submission=(official.submitted_at - session.started_at) if official else None,
            points_earned=official.points_earned if official else 0.0,
            points_possible=official.points_possible if official else possible,
            result=result,
        ))
    return rev


def history(wb: Workbook) -> list[tuple[Session, float, float]]:
    """Every session with its official score (points earned, possible)."""
    store = open_store(wb)
    rows = []
    for s in store.sessions(now()):
        earned = possible = 0.0
        for slug in s.katas:
            official = store.official_submission(s, slug)
            if official:
                earned += official.points_earned
                possible += official.points_possible
            else:
                try:
                    possible += wb.kata(slug).points
                except CatalogError:
                    pass
        rows.append((s, round(earned, 2), possible))
    return rows


@dataclass
class QuestionStatus:
    slug: str
    title: str
    file: Path
    exists: bool
    visible: tuple[int, int] | None  # (passed, total) of the last check
    hidden: tuple[float, float] | None  # (points earned, possible) of the last submission


def status(wb: Workbook) -> tuple[Session | None, float, list[QuestionStatus]]:
    store = open_store(wb)
    t = now()
    session = store.live_session(t)
    if session is None:
        return None, 0.0, []
    rows = []
    for slug in session.katas:
        kata = wb.kata(slug)
        checks = store.submissions(session_id=session.id, slug=slug, suite="visible")
        subs = store.submissions(session_id=session.id, slug=slug, suite="hidden")
        visible = None
        if checks:
            tests = checks[-1].result.get("tests", [])
            visible = (sum(x["status"] == "pass" for x in tests), len(tests))
        hidden = (subs[-1].points_earned, subs[-1].points_possible) if subs else None
        path = wb.workspace_file(kata)
        rows.append(QuestionStatus(slug, kata.title, path, path.is_file(), visible, hidden))
    return session, session.remaining(t), rows
