"""`kata check` and `kata submit`: one file graded, recorded, and the levels it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import kata.session.base as base
from kata.catalog import CatalogError, Kata, Question, Workbook
from kata.kinds import KINDS, Kind, kind_of
from kata.results import SuiteResult
from kata.session.base import open_store
from kata.session.levels import level_passed, open_levels, questions_of, view
from kata.store import Session, Store, Submission


@dataclass
class Graded:
    kata: Kata
    path: Path
    result: SuiteResult
    session: Session | None  # the live session it counts for, if any
    submission: Submission | None = None
    levels: list[int] | None = None  # the levels graded (None: every level)
    opened: list[int] = field(default_factory=list)  # levels this submission opened
    passed_now: list[int] = field(default_factory=list)  # levels it passed for the first time
    check_note: str | None = None  # what the question's kind adds to `kata check` (Kind.check_note)
    kind: Kind = field(default_factory=lambda: KINDS["kata"])  # the question's kind (the default outside one)

    def question_share(self, wb: Workbook) -> str:
        """': 40 of the question's 100 points so far' when fewer levels were graded than the
        question has (the others not open yet), so a level's total and the question's (in
        `kata status` and `kata watch`'s table) never seem to differ. A question whose levels
        open one at a time says it on every submission, the one that grades them all too
        (': 100 of the question's 100 points'); any other question: ''."""
        if self.session is None:
            return ""
        q = next((q for q in questions_of(wb, self.session) if q.kata == self.kata.slug), None)
        if q is None:
            return ""
        worth = sum(lv.points for lv in self.kata.levels if lv.number in q.levels)
        one_at_a_time = q.reveal == "progressive" and len(q.levels) > 1
        if worth <= self.result.points_possible and not one_at_a_time:
            return ""
        so_far = " so far" if self.result.points_earned < worth else ""
        return f": {self.result.points_earned:g} of the question's {worth:g} points{so_far}"


def missing_file_message(wb: Workbook, kata: Kata) -> str | None:
    """What to do when the learner's file is gone but kata knows this kata (a snapshot of it, or
    a live session holding it); None when `kata start` is the right advice."""
    path = wb.workspace_file(kata)
    if path.is_file():
        return None
    store = open_store(wb)
    count = len(store.snapshots(None, kata.slug))
    if count:
        return (f"{path}: your file for '{kata.slug}' is missing: `kata restore {kata.slug} "
                f"{count}` puts back the last version kata saw (`kata snapshots {kata.slug}` "
                "lists them all)")
    live = store.live_session(base.now())
    if live is not None and kata.slug in live.katas:
        return (f"{path}: your file for '{kata.slug}' is missing and kata has no saved version "
                f"of it: copy the stub back with `cp {kata.stub} {path}`")
    if live is not None:  # `kata start` would be refused while the session runs
        return (f"{path}: no workspace file for '{kata.slug}', and it is not in session {live.id} "
                f"({live.name}): practise it after the session (`kata finish`, then `kata start "
                f"{kata.slug}`)")
    return None


def _grade_file(wb: Workbook, kata: Kata, suite: str, progress=None) -> Graded:
    from kata import grading, workspace

    missing = missing_file_message(wb, kata)
    if missing:
        raise workspace.WorkspaceError(missing)
    path, code = workspace.read_learner_file(wb, kata)  # the snapshot graded and recorded
    on_progress = progress(kata) if progress else None  # only once there is something to grade
    t = base.now()  # a submission counts from when it starts
    store = open_store(wb)
    session = store.live_session(t)
    v = view(wb, kata, session, store)
    if v.question is None:
        session = None
    levels = v.levels if v.question is not None or v.gated else None
    junit = wb.kata_dir / "junit" / f"{kata.slug}-{suite}.xml"  # the latest run, for CI systems
    junit.parent.mkdir(parents=True, exist_ok=True)
    sealed = suite == "hidden" and session is not None  # hidden tests stay hidden until the end
    result = grading.grade(kata, path, suite=suite, junit_xml=None if sealed else junit, code=code,
                           levels=levels, on_progress=on_progress, redact=sealed)
    if sealed:  # what `kata submit` shows: each test's level and pass/fail, no name or message
        from kata.formats import write_junit
        from kata.present import may_show

        write_junit([(kata, may_show(result, live=True, practice=False))], junit)
    q = v.question  # session is kept only with a question (above), so both are set or neither
    extra = kind_of(q).extra_now(wb, kata) if q is not None else None
    sub, passed_now = _record(store, session, q, kata, code, result, t, suite, extra)
    graded = Graded(kata, path, result, session, sub, levels, passed_now=passed_now,
                    kind=kind_of(q) if q is not None else KINDS["kata"])
    if suite == "visible" and q is not None:
        graded.check_note = kind_of(q).check_note(kata, extra, code)
    if suite == "hidden" and session is not None and q is not None and not result.tampered:
        after = open_levels(q, store.passed_levels(session.id, kata.slug))
        graded.opened = [lv for lv in after if lv not in v.levels]
        if graded.opened:  # the workspace's test file gains the new level's examples
            workspace.write_visible(wb, kata, after, t)
    if suite == "visible" and wb.learner:  # a report names the file the learner has
        shown = f"{wb.workspace.name}/{workspace.visible_file(wb, kata).name}"
        for test in result.tests:
            for attr in ("detail", "message"):
                text = getattr(test, attr)
                if text:
                    setattr(test, attr, text.replace(f"katas/{kata.slug}/test_visible.py", shown))
    return graded


def _record(store: Store, session: Session | None, q: Question | None, kata: Kata, code: str, result,
            at: float, suite: str = "hidden", extra: str | None = None, **row) -> tuple[Submission, list[int]]:
    """The one way a graded version is recorded (submit, settle and regrade): the question's kind
    adds its part to a hidden result (a hunt's pin, judged on `extra`), the submission is stored
    (`row`: auto=, regrade_of=), and for a session's question every level it passed gets its
    level event (none for a tampered run). (the submission, the levels passed for the first time)."""
    points = kind_of(q).judge(store, session, kata, q, extra, result) if suite == "hidden" and q else None
    sub = store.add_submission(session.id if session else None, kata.slug, code, result.to_json(), at,
                               suite=suite, points=points,
                               suite_version=_suite_version(kata) if suite == "hidden" else None, **row)
    passed_now = []
    if suite == "hidden" and session is not None and q is not None:
        passed_now = _record_levels(store, session.id, kata.slug, result, at, sub.id)
    return sub, passed_now


def _record_levels(store: Store, session_id: int, slug: str, result, at: float, sub_id: int) -> list[int]:
    """Level events for every level `result` passed (idempotent: the first pass is kept; none for
    a tampered run); the levels passed for the first time."""
    if result.tampered:
        return []
    return [lv.level for lv in result.levels
            if level_passed(lv) and store.record_level_passed(session_id, slug, lv.level, at, sub_id)]


def _final_cut(q: Question, kata: Kata, result) -> None:
    """A final answer (auto-submitted, or its regrade) of a question whose levels open one at a
    time counts as far as it passes them, in order, as on submits: a level counts only if every
    earlier one passed."""
    from kata import grading

    if q.reveal != "progressive":
        return
    reached = []
    for lv in result.levels:
        reached.append(lv.level)
        if not level_passed(lv):
            break
    result.tests = [t for t in result.tests if t.task_id in reached]
    grading.score(result, kata, reached)


def check(wb: Workbook, katas: list[Kata], progress=None) -> list[Graded]:
    """`progress(kata)`: a callback factory -> on_progress(done, total, level), or None."""
    return [_grade_file(wb, k, "visible", progress) for k in katas]


def submit(wb: Workbook, katas: list[Kata], progress=None) -> list[Graded]:
    if wb.is_student_bundle or any(not k.grader.is_dir() for k in katas):
        raise CatalogError(
            "this workbook has no hidden suites (a student bundle): grading happens on your "
            "instructor's side; `kata check` runs the visible tests here, and your workspace/ "
            "files are what you hand in"
        )
    return [_grade_file(wb, k, "hidden", progress) for k in katas]


def _suite_version(kata: Kata) -> str:
    from kata.suites import suite_version

    return suite_version(kata)


class _Versions(dict):
    """slug -> today's suite version, computed once per command (None: the kata is gone)."""

    def __init__(self, wb: Workbook):
        super().__init__()
        self.wb = wb

    def __missing__(self, slug: str) -> str | None:
        try:
            kata = self.wb.kata(slug)
            value = _suite_version(kata) if kata.grader.is_dir() else None
        except CatalogError:
            value = None
        self[slug] = value
        return value
