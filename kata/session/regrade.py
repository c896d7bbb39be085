"""`kata regrade`: recorded submissions graded again on today's hidden suites.
"""

from __future__ import annotations

from dataclasses import dataclass

import kata.session.base as base
from kata.catalog import CatalogError, Workbook
from kata.kinds import kind_of
from kata.session.base import open_store
from kata.session.grade import _final_cut, _record, _suite_version
from kata.session.levels import question_for
from kata.store import Submission


@dataclass
class Regraded:
    slug: str
    before: Submission  # the row regraded
    after: Submission  # the new row, regrade_of = before.id

    @property
    def changed(self) -> bool:
        return self.before.points_earned != self.after.points_earned


def regrade_session(wb: Workbook, session_id: int, progress=None) -> list[Regraded]:
    """Grade every current hidden submission of a finished session again on today's suite; a
    submission already graded on today's suite is left alone. Refused while the session is live."""
    from kata import grading

    store = open_store(wb)
    session = store.session(session_id, base.now())
    if session.is_live(base.now()):
        raise CatalogError(f"session {session_id} is still live: regrade it after `kata finish`")
    done = []
    for sub in store.submissions(session_id=session_id):
        try:
            kata = wb.kata(sub.slug)
        except CatalogError:
            continue  # a kata no longer in this workbook
        version = _suite_version(kata)
        if sub.suite_version == version:
            continue
        levels = sorted({t["task_id"] for t in sub.result.get("tests", []) if t.get("task_id")}) or None
        result = grading.grade(kata, wb.workspace_file(kata), "hidden", code=sub.code, levels=levels,
                               on_progress=progress(kata) if progress else None)
        q = question_for(wb, session, sub.slug)
        extra = None
        if q is not None:  # judged again as it was: a final answer cut as settling cut it, a
            if sub.auto:   # hunt's pin on the test file graded then
                _final_cut(q, kata, result)
            extra = kind_of(q).extra_recorded(sub.result)
        new, _ = _record(store, session, q, kata, sub.code, result, sub.submitted_at, extra=extra,
                         auto=sub.auto, regrade_of=sub.id)
        done.append(Regraded(sub.slug, sub, new))
    return done
