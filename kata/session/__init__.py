"""What the learner's commands do, without any printing: start, check, submit, hint, finish, review.

The command line and the room parse and render; everything they render comes back from here as
plain data, so each step is unit-tested without them. A package of use cases, each a module:

    base      the clock (`now()`) and one store connection per command
    levels    what a learner may see now: a session's questions, the open levels, the prompt
    start     the plan and the start
    grade     check and submit: one file graded, recorded, the levels it opens
    settle    the deadline's auto-submit, and finish
    hints     hints of the open levels, recorded
    review    a session once it is over
    history   history, status, progress, the mock assessments side by side
    regrade   submissions graded again on today's suites

Times come from `base.now()`: the machine's clock. Only kata's own test suite, which turns
`kata.session.base.TEST_CLOCK` on (tests/conftest.py, tests/kata_test_clock.py), can move it with
$KATA_NOW (seconds since the epoch); anywhere else $KATA_NOW does nothing.
"""

from __future__ import annotations

from kata.session.base import _STORES, close_stores, fake_clock, now, open_store
from kata.session.grade import Graded, check, missing_file_message, submit
from kata.session.hints import Hint, next_hint, revealed
from kata.session.history import (
    ExamBest,
    HistoryRow,
    KataProgress,
    QuestionStatus,
    assessment_progress,
    exam_series,
    history,
    progress,
    series_name,
    status,
)
from kata.session.levels import (
    View,
    best_scores,
    earned_levels,
    level_passed,
    live_session,
    open_levels,
    pick_katas,
    prompt_markdown,
    question_for,
    questions_of,
    solution_refusal,
    study_note,
    view,
)
from kata.session.regrade import Regraded, regrade_session
from kata.session.review import QuestionReview, Review, _question_points, project_exam, review, scaled_now
from kata.session.settle import AutoSubmitted, finish, settle
from kata.session.start import Plan, Started, own_work, plan, plan_hunt, start, unknown_target_message
from kata.store import still_live_message  # the command line's words for a start refused

__all__ = [
    "still_live_message",
    "fake_clock",
    "now",
    "_STORES",
    "open_store",
    "close_stores",
    "questions_of",
    "question_for",
    "open_levels",
    "View",
    "view",
    "earned_levels",
    "study_note",
    "prompt_markdown",
    "solution_refusal",
    "best_scores",
    "live_session",
    "pick_katas",
    "level_passed",
    "Started",
    "Plan",
    "plan",
    "plan_hunt",
    "unknown_target_message",
    "start",
    "own_work",
    "Graded",
    "missing_file_message",
    "check",
    "submit",
    "AutoSubmitted",
    "settle",
    "finish",
    "Hint",
    "next_hint",
    "revealed",
    "QuestionReview",
    "Review",
    "project_exam",
    "scaled_now",
    "_question_points",
    "review",
    "HistoryRow",
    "history",
    "QuestionStatus",
    "status",
    "KataProgress",
    "progress",
    "series_name",
    "exam_series",
    "ExamBest",
    "assessment_progress",
    "Regraded",
    "regrade_session",
]
