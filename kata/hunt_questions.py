"""Hunt questions in a session: drawn at start, handed out, scored on submit, shown in review.

kata/hunt.py knows what a hunt is (the code handed out, how a pin is judged); this module puts it
behind the same session, submit, review and history paths as a kata question (through the Hunt
kind in kata/kinds.py), with nothing in the store but a result's extra field:

* drawing and handing out (kata/kinds.py's Hunt): each hunt question of a plan gets its bug
  from the session's seed (`--seed S`, else a fresh one, kept in sessions.seed), so a session can
  be reviewed and regraded exactly; the workspace gets the handed-out code as
  workspace/<module> and a pin template as workspace/test_hunt_<module>.py (a learner file
  already there is archived first);
* `score_pin`: on `kata submit`, the result gains "hunt": {points_earned, points_possible,
  verdict, reason, late, test_code}; the submission counts fix + pin;
* `review_info`: after the session, the bug's header (Bug, Level, Breaks), or that it was a decoy,
  the pin's verdict, and when the pin and the fix were first made.

Example:
    hunt_question(wb, "lru-kv-cache", seed=7)
    -> (Question(..., kind='hunt', bug='keys_lru_first'), 7)    (the bug depends on the seed)
"""

from __future__ import annotations

import random
from pathlib import Path

from kata import hunt
from kata.catalog import Kata, Question, Workbook, check_minutes


DEFAULT_MINUTES = 15  # `kata hunt` without --minutes


def hunt_question(wb: Workbook, slug: str | None, bug: str | None = None, decoy: bool = False,
                  level: int | None = None, minutes: float | None = None, seed: int = 0
                  ) -> tuple[Question, int]:
    """The question `kata hunt` asks, and the seed it was drawn with: a hunt of levels 1..level
    (default: the bug's own level with --bug, else 1), its bug `bug`, a decoy with `decoy`, else
    a bug (and, without SLUG, a kata) drawn with the seed."""
    from kata.catalog import CatalogError

    if bug is not None and decoy:
        raise CatalogError("give --bug NAME or --decoy, not both")
    check_minutes(minutes)
    rng = random.Random(seed)
    if slug is None:
        if bug is not None:
            raise CatalogError("--bug needs the kata: `kata hunt SLUG --bug NAME`")
        slug = rng.choice(wb.slugs())
    kata = wb.kata(slug)
    if level is not None:
        kata.level(level)  # CatalogError naming the levels there are
    if bug is not None:
        level = level or hunt.bug(kata, bug, level).level
    level = level or 1
    if bug is None and not decoy:
        bug = hunt.draw(kata, level, rng)
    return Question(kata.slug, tuple(range(1, level + 1)), minutes or DEFAULT_MINUTES, "all", "hunt", bug), seed


def test_path(wb: Workbook, kata: Kata) -> Path:
    return wb.workspace / hunt.test_file_name(kata)


def read_test(wb: Workbook, kata: Kata) -> str:
    try:
        return test_path(wb, kata).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def saved_test(wb: Workbook, store, session, kata: Kata) -> str:
    """The pin file as it stood at the session's deadline: the workspace file if saved by then,
    else the last one a counted submission graded."""
    path = test_path(wb, kata)
    try:
        if session.started_at <= path.stat().st_mtime <= session.deadline:
            return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    graded = [(sub.result.get("hunt") or {}).get("test_code") for sub in
              store.counted_submissions(session, kata.slug)]
    return next((code for code in reversed(graded) if code is not None), "")


def attempted_pin(test_code: str) -> bool:
    """Whether a pin file holds an answer: a test function, or the verdict that the code is correct
    (the handed-out file's docstring shows both as examples: those do not count). A file that does
    not parse counts, so that its error is graded and shown."""
    import ast

    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return True
    tests = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name.lower().startswith("test") for n in tree.body)
    return tests or hunt.claims_correct(test_code)


def handed_out(kata: Kata, q: Question) -> str:
    return hunt.handout(kata, q.bug, max(q.levels))


def pin_unsubmitted(wb: Workbook, store, session, kata: Kata) -> bool:
    """Whether the pin file saved by the deadline differs from the last one a submission graded."""
    graded = [(sub.result.get("hunt") or {}).get("test_code") for sub in
              store.counted_submissions(session, kata.slug)]
    return not graded or saved_test(wb, store, session, kata) != graded[-1]


def score_pin(store, session, kata: Kata, q: Question, test_code: str, fix) -> dict:
    """The pin's part of a submission (see the module docstring). `fix`: the SuiteResult of the
    workspace file on the hidden suite of the question's levels."""
    pin = hunt.judge(kata, q.bug, max(q.levels), test_code)
    possible = float(fix.points_possible)
    late = pin.earned and _fixed_before_pinned(store, session, kata.slug)
    earned = (possible / 2 if late else possible) if pin.earned else 0.0
    reason = pin.reason + (" (half points: the fix passed before the bug was pinned)" if late else "")
    return {"points_earned": earned, "points_possible": possible, "verdict": pin.verdict,
            "reason": reason, "late": late, "test_code": test_code}


def _fixed_before_pinned(store, session, slug: str) -> bool:
    """Whether an earlier submission of the session fixed the code before any pinned the bug."""
    for sub in store.submissions(session_id=session.id, slug=slug):
        if (sub.result.get("hunt") or {}).get("points_earned"):
            return False
        if sub.result.get("points_possible") and \
                sub.result.get("points_earned") == sub.result.get("points_possible"):
            return True
    return False


def totals(result) -> tuple[float, float]:
    """A hunt submission's (points earned, possible): the fix's plus the pin's."""
    pin = result.hunt or {}
    return (round(result.points_earned + pin.get("points_earned", 0.0), 2),
            result.points_possible + pin.get("points_possible", 0.0))


def progress_rows(store, sessions, slug: str, worth=None) -> list[dict]:
    """Per session that held a hunt of this kata: its official pin verdict and points.
    `worth(question)`: the question's points, for a hunt never submitted (else 0)."""
    rows = []
    for s in sessions:
        q = next((Question.from_json(x) for x in (s.questions or ()) if x.get("kata") == slug), None)
        if q is None or not q.is_hunt:
            continue
        official = store.official_submission(s, slug)
        pin = (official.result.get("hunt") or {}) if official else {}
        rows.append({"session": s.id, "verdict": pin.get("verdict", "not submitted"),
                     "points_earned": official.points_earned if official else 0.0,
                     "points_possible": official.points_possible if official else
                     (worth(q) if worth is not None else 0.0)})
    return rows


def review_info(wb: Workbook, store, session, q: Question) -> dict:
    """What `kata review` shows of a hunt once the session is over."""
    info: dict = {"bug": q.bug, "decoy": q.bug is None, "header": {}}
    try:
        kata = wb.kata(q.kata)
        if q.bug is not None:
            info["header"] = dict(hunt.bug(kata, q.bug, max(q.levels)).header)
    except Exception as exc:  # noqa: BLE001 - a zoo entry renamed since: say so, review the rest
        info["header"] = {"Bug": f"(the zoo entry can no longer be read: {exc})"}
    pinned_at = fixed_at = None
    official = store.official_submission(session, q.kata)
    for sub in store.counted_submissions(session, q.kata):
        at = round(sub.submitted_at - session.started_at, 1)
        if pinned_at is None and (sub.result.get("hunt") or {}).get("points_earned"):
            pinned_at = at
        if fixed_at is None and sub.result.get("points_possible") and \
                sub.result.get("points_earned") == sub.result.get("points_possible"):
            fixed_at = at
    pin = (official.result.get("hunt") or {}) if official else {}
    info.update(verdict=pin.get("verdict"), reason=pin.get("reason"),
                pin_points=pin.get("points_earned", 0.0), pinned_at_s=pinned_at, fixed_at_s=fixed_at)
    return info

