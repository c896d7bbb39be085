"""The practice room's pages about sessions that ended: a session's review and the progress charts.

The review is `session.review` (refused while the session is live, as `kata review` refuses it),
and the charts are drawn from what `kata progress` and `kata history` print (kata/web/charts.py).
One rule is stricter than the command line's: while a session is live, the review of an earlier
session that holds one of its katas is refused too, so no hidden test of a live question shows.
"""

from __future__ import annotations

from kata import session
from kata.catalog import Workbook
from kata.web.room import Refused, level_rows


def elapsed(seconds: float) -> str:
    """A moment of the session since its start, as the command line writes it (views.elapsed)."""
    from kata.views import elapsed as fmt

    return fmt(seconds)


def review(wb: Workbook, session_id: int | None) -> dict:
    from kata.store import StoreError

    if session_id is not None and not 0 < session_id < 2**63:  # no store row has such an id
        raise Refused(404, f"no session {session_id}: `kata history` lists them")
    try:
        rev = session.review(wb, session_id)
    except StoreError as exc:
        live = session.live_session(wb)
        status = 403 if live is not None and (session_id is None or session_id == live.id) else 404
        raise Refused(status, str(exc)) from None
    live = rev.live
    shared = sorted(set(live.katas) & set(rev.session.katas)) if live is not None else []
    if live is not None and shared:
        raise Refused(403, f"session {live.id} is live and holds {', '.join(shared)}: the review of "
                      f"session {rev.session.id} opens after it ends")
    s = rev.session
    out = {"session": {"id": s.id, "name": s.name, "status": s.status, "ended_by": s.ended_by},
           "points_earned": rev.points_earned, "points_possible": rev.points_possible,
           "live": None if live is None else {"id": live.id, "name": live.name},
           "scaled_score": getattr(rev, "scaled_score", None),
           "timeline": rev.timeline() if hasattr(rev, "timeline") else [],
           "questions": [_question(s, q) for q in rev.questions]}
    return out


def _question(s, q) -> dict:
    """One question of a review: what `kata review --all` prints of it."""
    counted = None
    if q.result is not None:
        spent = ""
        if q.first_activity is not None and q.last_submission is not None:
            spent = f", made at {elapsed(q.last_submission)}; first check or submit at {elapsed(q.first_activity)}"
        when = "when you finished" if s.ended_by == "finish" else "at the deadline"
        auto = f" (auto-submitted {when})" if q.submission and q.submission.auto else ""
        counted = f"counted: the best of {q.submissions} submission(s) before the cutoff{spent}{auto}"
    tests = [] if q.result is None else [
        {"name": t.name.split("::")[-1], "level": t.task_id, "status": t.status, "edge": t.edge,
         "message": t.message} for t in q.result.tests]
    return {"slug": q.slug, "title": q.title, "points_earned": q.points_earned, "evidence": q.evidence,
            "points_possible": q.points_possible, "counted": counted,
            "levels_passed": [{"level": lv, "at": elapsed(t)} for lv, t in q.splits.items()],
            "submitted_at": [elapsed(t) for t in q.submit_times], "levels": level_rows(q.result) if q.result else [],
            "passed": q.result.passed if q.result else 0, "total": len(tests),
            "missed": sum(t["status"] != "pass" for t in tests), "tests": tests,
            "part": q.part_json(), "part_lines": q.part_lines()}


def progress(wb: Workbook) -> dict:
    """The progress page: each chart as SVG, and the numbers `kata progress` prints."""
    from kata.web import charts

    rows = session.progress(wb)
    series = session.assessment_progress(wb)
    hist = session.history(wb)
    return {
        "charts": {"katas": charts.kata_scores(rows), "mocks": charts.mock_scores(series, hist),
                   "levels": charts.level_minutes(hist)},
        "katas": [{"kata": r.kata.slug, "title": r.kata.title, "points_possible": r.kata.points, "best": r.best,
                   "sessions": len(r.per_session),
                   "fastest": {f"L{lv}": elapsed(t) for lv, t in r.fastest.items()}} for r in rows],
        "assessments": [[{"exam": b.exam.name, "best": b.best, "points_possible": b.points_possible,
                          "sessions": b.sessions} for b in row] for row in series],
    }
