"""The practice room's data: what each screen shows and what each button does, as plain dicts.

A thin layer on kata.session, the same functions the command line calls, so the page and a
terminal agree at every moment: the clock and the questions are `session.status`, Run is
`session.check`, Submit `session.submit`, the deadline's auto-submit `session.settle`, the prompt
`session.prompt_markdown` (only the open levels, as `kata show`). The learner's files are read
and written where the command line reads them; a save goes through `workspace.put`, which archives
any version it replaces, and is refused (Conflict) when the file changed on disk since the page
last read it, so neither side's work is lost.

Nothing here knows about HTTP: kata/web/app.py maps these functions to requests, and Refused to
its status code.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from kata import session
from kata.catalog import CatalogError, Kata, Workbook
from kata.kinds import kind_named, kind_of
from kata.results import PASS, timeout_line

# One grading or state change at a time (as `kata watch`): the clock and reads go on meanwhile.
ACT = threading.Lock()
# One write to the learner's files at a time (a save goes on while a grading runs)
FILES = threading.Lock()


class Refused(Exception):
    """A request the rules turn down: `status` is the HTTP status the page gets (403, 404, 409)."""

    def __init__(self, status: int, message: str, **data):
        super().__init__(message)
        self.status = status
        self.data = data


def clock(seconds: float) -> str:
    from kata.views import clock as fmt

    return fmt(seconds)


def kata_of(wb: Workbook, slug: str) -> Kata:
    """The kata named `slug` in this workbook; Refused(404) for any other name."""
    if slug not in wb.slugs():
        raise Refused(404, f"no kata '{slug}' in this workbook")
    return wb.kata(slug)


def _rel(wb: Workbook, path: Path) -> str:
    try:
        return str(path.relative_to(wb.state_dir))
    except ValueError:
        return str(path)


# --- the learner's files -----------------------------------------------------------------------


def files_of(wb: Workbook, kata: Kata, live=None) -> list[tuple[str, Path]]:
    """(role, path) of each file the learner edits for `kata`: its kind's files in the live session
    (`live`, else looked up; a hunt adds its pin file), else the workspace file. The only paths
    the page can reach."""
    from kata.kinds import kind_of

    q = session.question_for(wb, live if live is not None else session.live_session(wb), kata.slug)
    if q is None:
        return [("code", wb.workspace_file(kata))]
    return kind_of(q).watched(wb, q, kata)


def path_of(wb: Workbook, kata: Kata, role: str) -> Path:
    for r, path in files_of(wb, kata):
        if r == role:
            return path
    raise Refused(404, f"'{kata.slug}' has no '{role}' file")


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def file_info(wb: Workbook, role: str, path: Path) -> dict:
    """A workspace file as the editor loads it: its text and a digest of its bytes (None: missing)."""
    try:
        data = path.read_bytes()
    except OSError:
        return {"role": role, "path": _rel(wb, path), "name": path.name, "exists": False, "text": None,
                "sha": None}
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"role": role, "path": _rel(wb, path), "name": path.name, "exists": True, "text": text,
            "sha": digest(data), **({} if text is not None else {"error": "not UTF-8 text"})}


def read_file(wb: Workbook, slug: str, role: str) -> dict:
    kata = kata_of(wb, slug)
    return file_info(wb, role, path_of(wb, kata, role))


def save(wb: Workbook, slug: str, role: str, text: str, base: str | None, force: bool = False) -> dict:
    """Write the editor's text to the file. `base`: the digest of the version the editor started
    from. If the file changed since (another editor saved it), nothing is written and Refused(409)
    carries the file as it is now, unless `force`: then it is written too, and the version it
    replaces is archived (workspace.put archives any version that differs)."""
    from kata import workspace

    kata = kata_of(wb, slug)
    path = path_of(wb, kata, role)
    with FILES:
        now = file_info(wb, role, path)
        if now["sha"] != base and not force:
            raise Refused(409, f"{path.name} changed on disk since the page loaded it", disk=now)
        copies = workspace.put(wb, {path: text}, session.now())
    out = file_info(wb, role, path)
    out["archived"] = _rel(wb, copies[path]) if path in copies else None
    return out


def keep_copy(wb: Workbook, slug: str, role: str, text: str) -> dict:
    """Put the editor's text in a new folder under .kata/archive/ (the file on disk is left as it
    is): how the page keeps its unsaved edits when the learner takes the version on disk."""
    from kata import workspace

    kata = kata_of(wb, slug)
    path = path_of(wb, kata, role)
    with FILES:
        dest = workspace.archive_dir(wb, session.now())
        dest.mkdir(parents=True)
        (dest / path.name).write_text(text, encoding="utf-8")
    return {"archived": _rel(wb, dest / path.name)}


# --- the clock and the questions ---------------------------------------------------------------


def _title(wb: Workbook, s) -> str:
    try:
        return wb.exam(s.name).title if s.kind == "exam" else wb.kata(s.name).title
    except CatalogError:
        return s.name


def state(wb: Workbook) -> dict:
    """What `kata status` shows, for the page's header: the session, its clock and each question,
    with each file's digest (the page reloads a file saved elsewhere). Changes nothing."""
    from kata.views import deadline_warning, levels_label

    s, remaining, rows = session.status(wb)
    store = session.open_store(wb)
    t = session.now()
    out: dict = {"now": t, "session": None, "questions": [], "bundle": wb.is_student_bundle,
                 "pending_settle": bool(store.unsettled_timed_out(t))}
    last = store.last_ended_session(t)
    out["last_ended"] = None if last is None else {"id": last.id, "name": last.name, "status": last.status}
    if s is None:
        return out
    scaled = getattr(session, "scaled_now", lambda wb, s: None)(wb, s)
    out["session"] = {"id": s.id, "name": s.name, "kind": s.kind, "title": _title(wb, s),
                      "started_at": s.started_at, "deadline": s.deadline, "remaining_s": remaining,
                      "clock": clock(remaining), "warning": deadline_warning(remaining),
                      "scaled_score": scaled}
    for r in rows:
        kata = wb.kata(r.slug)
        out["questions"].append({
            "slug": r.slug, "title": r.title, "file": _rel(wb, r.file), "exists": r.exists,
            "visible": r.visible, "hidden": r.hidden, "levels": r.levels, "levels_open": r.levels_open,
            "label": levels_label(r.levels, r.levels_open), "minutes": r.minutes,
            "note": None if r.note is None else f"{r.note_label}: {kind_named(r.kind).words(r.note)}",
            "files": [{"role": role, "name": path.name, "sha": digest(_bytes(path))}
                      for role, path in files_of(wb, kata, s)],
        })
    return out


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# --- a kata's screen ----------------------------------------------------------------------------


def kata_page(wb: Workbook, slug: str) -> dict:
    """The prompt as `kata show` shows it now (only the open levels in a session), the files, the
    hints revealed so far, and whether the reference may be shown (never for a live question)."""
    from kata.web.render import markdown_html

    kata = kata_of(wb, slug)
    view, markdown = session.prompt_markdown(wb, kata)
    shown, closed = session.revealed(wb, kata)
    return {
        "slug": kata.slug, "title": kata.title, "summary": kata.summary, "levels": view.levels,
        # a level not open yet is a number and its points: its name is part of its text
        "all_levels": [{"number": lv.number, "name": lv.name if lv.number in view.levels else None,
                        "points": lv.points} for lv in kata.levels],
        "in_session": view.question is not None, "markdown": markdown, "html": markdown_html(markdown),
        "hints": [h.line() for h in shown], "hints_closed": closed,
        "files": [file_info(wb, role, path) for role, path in files_of(wb, kata)],
        "solution": _solution_refusal(wb, kata) is None,
    }


def _solution_refusal(wb: Workbook, kata: Kata, live=None) -> str | None:
    """Why the reference may not be shown now (the command line's rule), or None."""
    return session.solution_refusal(wb, kata)


def solution(wb: Workbook, slug: str) -> dict:
    from kata.web.render import source_html

    kata = kata_of(wb, slug)
    refusal = _solution_refusal(wb, kata)
    if refusal is not None:
        raise Refused(404 if "no reference" in refusal else 403, refusal)
    code = kata.solution.read_text(encoding="utf-8")
    return {"slug": kata.slug, "text": code, "html": source_html(code)}


# --- Run, Submit, Hint ----------------------------------------------------------------------------


def check(wb: Workbook, slug: str) -> dict:
    """`kata check SLUG`: each visible test with its call, expected and actual value."""
    from kata.web.render import case_of, first_asserts

    kata = kata_of(wb, slug)
    with ACT:
        (g,) = session.check(wb, [kata])
    source = first_asserts(kata.visible_tests)
    cases = [{"name": t.name.split("::")[-1], "level": t.task_id, "status": t.status,
              "message": t.message, "detail": t.detail,
              **case_of(t.name, t.message, t.detail, source)} for t in g.result.tests]
    return {"kata": kata.slug, "file": _rel(wb, g.path), "passed": g.result.passed,
            "total": len(g.result.tests), "status": g.result.status, "message": g.result.message,
            "timeouts": timeout_line(g.result), "levels": _visible_levels(g.result), "cases": cases,
            "check_note": g.kind.check_summary(g.check_note) if g.check_note else None}


def _visible_levels(result) -> list[dict]:
    levels = sorted({t.task_id for t in result.tests if t.task_id is not None})
    return [{"level": lv, "passed": sum(t.status == PASS for t in result.tests if t.task_id == lv),
             "total": sum(t.task_id == lv for t in result.tests)} for lv in levels]


def level_rows(result) -> list[dict]:
    return [{"level": lv.level, "name": lv.name, "passed": lv.passed, "total": lv.total,
             "points_earned": lv.points_earned, "points_possible": lv.points_possible} for lv in result.levels]


def submit(wb: Workbook, slug: str) -> dict:
    """`kata submit SLUG`: each level's tests passed and points, as the command line shows them
    (during a session each hidden test only as its level and pass/fail), and the levels it opened."""
    from kata.present import submitted

    kata = kata_of(wb, slug)
    with ACT:
        (g,) = session.submit(wb, [kata])
    v = submitted(wb, g)  # what it may show: the command line's rule
    r = v.result
    out = {"kata": kata.slug, "session": v.session, "practice": not v.live,
           "levels": level_rows(r), "passed": r.passed, "total": len(r.tests),
           "points_earned": r.points_earned, "points_possible": r.points_possible,
           "message": r.message, "timeouts": v.timeouts, "opened": v.opened,
           "passed_now": v.passed_now, "part": v.part,
           "tests": [{"name": t.name.split("::")[-1], "level": t.task_id, "status": t.status,
                      "edge": t.edge, "message": t.message} for t in r.tests]}
    if v.live:
        out["recorded"] = (f"Recorded for session {v.session}{v.share}. Details open "
                           "after the session (Finish, then the review).")
        if v.practice:  # what each missed test checks, as `kata submit` says
            out["missed"] = [{"level": lv, "edge": edge, "tests": n} for lv, edge, n in v.missed]
    return out


def hint(wb: Workbook, slug: str) -> dict:
    """`kata hint SLUG`: the next hint of an open level (recorded), and every hint shown so far."""
    kata = kata_of(wb, slug)
    with ACT:
        h = session.next_hint(wb, kata)
    shown, closed = session.revealed(wb, kata)
    return {"hint": h.line() if h else None, "hints": [x.line() for x in shown], "hints_closed": closed}


# --- the session's start and end ------------------------------------------------------------------


def catalog(wb: Workbook) -> dict:
    """`kata list`: the katas and exams, with the best score so far."""
    best = session.best_scores(wb)
    return {
        "katas": [{"slug": k.slug, "title": k.title, "summary": k.summary, "difficulty": k.difficulty,
                   "minutes": k.minutes, "levels": len(k.levels), "points": k.points,
                   "best": best.get(k.slug, (None,))[0]} for k in wb.katas()],
        "exams": [{"name": e.name, "title": e.title, "minutes": e.minutes, "description": e.description,
                   "questions": [f"{q.kata} L{q.levels[0]}" + (f"-{q.levels[-1]}" if len(q.levels) > 1 else "")
                                 for q in e.questions]} for e in wb.exams()],
        "bundle": wb.is_student_bundle,
    }


def _target(wb: Workbook, target: str) -> str:
    if target not in wb.exam_names() and target not in wb.slugs():
        raise Refused(404, session.unknown_target_message(wb, target))
    return target


def briefing(wb: Workbook, target: str, minutes: float | None = None, reveal: str | None = None) -> dict:
    """What `kata start TARGET` shows before the clock starts. Changes nothing."""
    p = session.plan(wb, _target(wb, target), minutes, reveal)
    return {"target": target, "title": p.title, "description": p.description, "minutes": p.minutes,
            "clock": clock(p.minutes * 60),
            "questions": [{"slug": k.slug, "title": k.title, "levels": list(q.levels), "reveal": q.reveal,
                           "minutes": q.minutes, "task": kind_of(q).task_words.strip()}
                          for q, k in zip(p.questions, p.katas, strict=True)]}


def start(wb: Workbook, target: str, minutes: float | None = None, reveal: str | None = None,
          abandon: bool = False) -> dict:
    """`kata start TARGET --yes`: the stubs into workspace/ (a file there is archived first)."""
    with ACT:
        planned = session.plan(wb, _target(wb, target), minutes, reveal)
        started = session.start(wb, planned.name, abandon=abandon, planned=planned)
    s = started.session
    return {"session": s.id, "name": s.name,
            "abandoned": started.abandoned.id if started.abandoned else None,
            "files": [{"slug": p.kata.slug, "path": _rel(wb, p.path),
                       "archived": _rel(wb, p.archived) if p.archived else None} for p in started.prepared]}


def finish(wb: Workbook) -> dict:
    """`kata finish --yes`: end the session now; the last saved work not yet submitted is graded."""
    with ACT:
        s, graded = session.finish(wb)
    return {"session": s.id, "name": s.name, "lines": [ln for a in graded for ln in a.lines()]}


def settle(wb: Workbook) -> dict:
    """The deadline's auto-submit, as the first command after a deadline runs it."""
    with ACT:
        done = session.settle(wb)
    sessions: dict[int, dict] = {}
    for a in done:
        row = sessions.setdefault(a.session.id, {"session": a.session.id, "name": a.session.name, "lines": []})
        row["lines"].extend(a.lines())
    return {"settled": list(sessions.values())}
