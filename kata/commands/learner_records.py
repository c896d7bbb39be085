"""The learner's commands after a session, and over every session: `kata review`, `progress`,
`snapshots`, `restore`, `doctor`, `history`, `solution`.

Bodies parse and present; the work is in kata.session and kata.store.
"""

from __future__ import annotations

import typer

from kata.commands.base import _rel, app, complete_slug, emit_json, fail, full_only, handled, out, say, workbook


@app.command()
@handled
def review(
    session_id: int | None = typer.Argument(None, metavar="SESSION", help="Session number (default: the last ended one)."),
    all_: bool = typer.Option(False, "--all", help="Every hidden test, passed ones too."),
    failed: bool = typer.Option(False, "--failed", help="Every test you missed (default: the first 10 per question)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """After a session: the score per level, and each hidden test you missed with its edge case and
    message (--failed: all of them; --all: every test). Long output goes through a pager."""
    from kata import session
    from kata.views import elapsed, level_table, review_lines

    wb = workbook()
    rev = session.review(wb, session_id)
    if as_json:
        emit_json({
            "session": rev.session.id, "name": rev.session.name,
            "points_earned": rev.points_earned, "points_possible": rev.points_possible,
            "questions": [{
                "kata": q.slug, "submissions": q.submissions, "levels": q.levels,
                "auto_submitted": bool(q.submission and q.submission.auto), "evidence": q.evidence,
                "level_passed_s": {str(lv): t for lv, t in q.splits.items()},
                "submitted_s": q.submit_times,
                "first_activity_s": q.first_activity, "last_submission_s": q.last_submission,
                "points_earned": q.points_earned, "points_possible": q.points_possible,
                "result": q.result.to_json() if q.result else None,
                "part": q.part_json(),
            } for q in rev.questions],
            **({"scaled_score": rev.scaled_score, "timeline": rev.timeline()} if rev.project else {}),
        })
        return
    from kata.output import paged

    with paged():
        if rev.live is not None:
            say(f"Session {rev.live.id} ({rev.live.name}) is live; its review opens after it ends. "
                f"This is session {rev.session.id}, the last one that ended.")
        _print_review(out(), rev, elapsed, level_table, review_lines,
                      "all" if all_ else "failed" if failed else "summary")


def _print_review(con, rev, elapsed, level_table, review_lines, mode) -> None:
    s = rev.session
    say(f"[bold]Review of session {s.id}[/] ({s.name}, {s.status.replace('_', ' ')}): "
        f"[bold]{rev.points_earned:g}/{rev.points_possible:g}[/] points", markup=True)
    if rev.project is not None:
        _print_timeline(rev)
    for i, q in enumerate(rev.questions, start=1):
        con.rule(f"Q{i}. {q.title} ({q.slug})")
        for line in q.part_lines():
            say(f"  {line}", markup=False, indent=4)
        if q.result is None:
            say(f"  no submission before the cutoff: 0/{q.points_possible:g}", markup=True)
            continue
        spent = ""
        if q.first_activity is not None and q.last_submission is not None:
            spent = (f", made at {elapsed(q.last_submission)}; first check or submit at {elapsed(q.first_activity)}")
        when = "when you finished" if s.ended_by == "finish" else "at the deadline"
        auto = f" (auto-submitted {when})" if q.submission and q.submission.auto else ""
        say(f"  counted: the best of {q.submissions} submission(s) before the cutoff{spent}{auto}", markup=True)
        if q.evidence:
            say(f"  {q.evidence}", markup=False, indent=4)
        if q.splits:
            say("  levels passed at: " + ", ".join(f"L{lv} {elapsed(t)}" for lv, t in q.splits.items())
                + f" (of level{'s' if len(q.levels) > 1 else ''} {', '.join(map(str, q.levels))})",
                markup=True)
        if q.submit_times:
            say("  submitted at: " + ", ".join(elapsed(t) for t in q.submit_times), markup=True)
        con.print(level_table(q.result, ""))
        review_lines(q.result, mode, q)


def _print_timeline(rev) -> None:
    """A project exam's score on its scale, and minutes per level against the reported budgets."""
    say(f"  {rev.scaled_score} on the 200-600 scale (a scale like the real round's, not its formula)",
        markup=False)
    for row in rev.timeline():
        lo, hi = row["budget"]
        if row["minutes"] is None:
            took = "not opened"
        else:
            took = f"{row['minutes']:g} min, " + ("passed" if row["passed"] else "not passed")
            took += " (over)" if row["minutes"] > hi else ""
        say(f"  level {row['level']}: {took}; reported {lo}-{hi} min", markup=False)


@app.command()
@handled
def progress(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Your best score per kata, its score session by session, and your fastest time per level."""
    from kata import session
    from kata.views import assessment_lines, progress_lines

    rows = session.progress(workbook())
    assessments = session.assessment_progress(workbook())  # the mocks of a series, side by side
    if as_json:
        emit_json({"katas": [{"kata": r.kata.slug, "points_possible": r.kata.points, "best": r.best,
                    "sessions": [{"session": sid, "points_earned": pts} for sid, pts in r.per_session],
                    "fastest_level_s": {str(lv): t for lv, t in r.fastest.items()},
                    "other_suite_sessions": r.other_suite, "beside": r.beside} for r in rows],
                    "assessments": [[{"exam": b.exam.name, "points_possible": b.points_possible,
                                      "best": b.best, "sessions": b.sessions} for b in row]
                                    for row in assessments]})
        return
    from kata.output import paged

    with paged():  # a row per kata and per mock: longer than a screen
        progress_lines(rows)
        assessment_lines(assessments)


@app.command()
@handled
def snapshots(
    slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List every saved version of your file for a kata (each check and submit), newest last."""
    import time

    from kata import session

    wb = workbook()
    kata = wb.kata(slug)
    snaps = session.open_store(wb).snapshots(None, kata.slug)
    if as_json:
        emit_json({"snapshots": [{"n": i, "saved_at": s.submitted_at, "session": s.session_id, "suite": s.suite,
                    "points_earned": s.points_earned, "auto": s.auto, "lines": len(s.code.splitlines())}
                   for i, s in enumerate(snaps, start=1)]})
        return
    if not snaps:
        say(f"No snapshots of {slug} yet: every `kata check` and `kata submit` takes one.")
        return
    for i, s in enumerate(snaps, start=1):
        what = "submit" if s.suite == "hidden" else "check"
        score = f"{s.points_earned:g}/{s.points_possible:g} pts" if s.suite == "hidden" else \
            f"{sum(t['status'] == 'pass' for t in s.result.get('tests', []))}/{len(s.result.get('tests', []))} visible"
        session_text = f"session {s.session_id}" if s.session_id else "practice"
        say(f"  {i:>3}  {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(s.submitted_at))}  "
            f"{what:<6} {session_text:<11} {score:<16} {len(s.code.splitlines())} lines"
            + ("  (auto)" if s.auto else ""))
    say(f"Restore one with `kata restore {slug} N` (your current file is archived first).")


@app.command()
@handled
def restore(
    slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug),
    n: int = typer.Argument(..., help="The snapshot's number in `kata snapshots SLUG`."),
) -> None:
    """Put snapshot N back as your workspace file; the current file is archived first."""
    from kata import session, workspace

    wb = workbook()
    kata = wb.kata(slug)
    snaps = session.open_store(wb).snapshots(None, kata.slug)
    if not 1 <= n <= len(snaps):
        fail(f"no snapshot {n} of {slug}: `kata snapshots {slug}` lists 1..{len(snaps)}"
             if snaps else f"no snapshots of {slug} yet")
    target = wb.workspace_file(kata)
    archived = workspace.archive(wb, [target]) if target.exists() else {}
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(snaps[n - 1].code, encoding="utf-8")
    say(f"Restored snapshot {n} of {slug} to {_rel(wb, target)}"
        + (f"; your previous file is in {_rel(wb, archived[target])}" if archived else "") + ".")


@app.command()
@handled
def doctor() -> None:
    """Check the store in .kata/; if it is damaged, move it aside and rebuild what can be read."""
    from kata.session import now
    from kata.store import repair

    from kata import cgroups
    from kata.sandbox import status_line

    wb = workbook(settle=False)
    say(status_line().capitalize() + ".", markup=False)
    say(cgroups.status_line() + ".", markup=False)
    path = wb.kata_dir / "kata.db"
    r = repair(path, now())
    if r.healthy:
        from kata.store import Store

        store = Store(path)
        try:
            edited = store.edited_rows()
        finally:
            store.close()
        if edited:
            say(f"{_rel(wb, path)}: {len(edited)} row(s) were changed outside kata (their digests do not "
                "match, so their scores cannot be trusted): " + "; ".join(edited) + ".", markup=False)
            raise typer.Exit(1)
        say(f"{_rel(wb, path)}: healthy, nothing to do.")
        return
    assert r.moved_to is not None  # an unhealthy store is always moved aside
    say(f"{_rel(wb, path)} was damaged: moved to {_rel(wb, r.moved_to)}/ and rebuilt.")
    for table, count in (r.salvaged or {}).items():
        lost = (r.lost or {}).get(table, 0)
        say(f"  {table}: {count} row(s) recovered"
            + (", the table could not be read" if lost < 0 else f", {lost} lost" if lost else ""))
    say("Your workspace/ files were not touched.")


@app.command()
@handled
def history(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List past sessions and their scores."""
    import time

    from kata import session

    rows = session.history(workbook())
    if as_json:
        emit_json({"sessions": [{"session": r.session.id, "kind": r.session.kind, "name": r.session.name,
                    "status": r.session.status, "started_at": r.session.started_at,
                    "points_earned": r.points_earned, "points_possible": r.points_possible,
                    "auto_submitted": r.auto_submitted, "other_suite": r.other_suite,
                    "level_passed_s": {slug: {str(lv): t for lv, t in sp.items()}
                                       for slug, sp in r.splits.items()}}
                   for r in rows]})
        return
    if not rows:
        say("No sessions yet. Start one with `kata start`.")
        return
    from rich.table import Table

    table = Table(show_edge=False)
    # ids, names, dates and scores are read whole (typed back, compared): only the splits wrap
    table.add_column("#", no_wrap=True)
    table.add_column("name", no_wrap=True)
    table.add_column("started (UTC)", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("score", no_wrap=True)
    table.add_column("levels passed", ratio=1)
    for r in rows:
        s = r.session
        table.add_row(str(s.id), s.name, time.strftime("%m-%d %H:%M", time.gmtime(s.started_at)),
                      s.status.replace("_", " "),
                      f"{r.points_earned:g}/{r.points_possible:g}" + ("*" if r.other_suite else ""),
                      _splits_by_question(s, r.splits) or "-")
    out().print(table)
    stale = [r.session.id for r in rows if r.other_suite]
    if stale:
        say(f"* scored on an older version of a hidden suite: `kata regrade {stale[-1]}` grades "
            "that session's submissions on today's suite (the old result is kept)")


def _splits_by_question(s, splits: dict) -> str:
    """When each level passed, by question number (Q2 L1 12:10), or by level alone in a session of
    one kata: a slug per row would not fit 80 columns beside the rest."""
    from kata.views import elapsed

    def levels(sp: dict) -> str:
        return " ".join(f"L{lv} {elapsed(t)}" for lv, t in sp.items())

    if len(s.katas) == 1:
        return "; ".join(levels(sp) for sp in splits.values() if sp)
    return "; ".join(f"Q{s.katas.index(slug) + 1} {levels(sp)}" if slug in s.katas else f"{slug} {levels(sp)}"
                     for slug, sp in splits.items() if sp)


@full_only()
@handled
def solution(slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug)) -> None:
    """Show the reference solution: once a session holding the kata has ended, or after a
    submit that passes all its levels (never while a live session holds it)."""
    from kata import session

    wb = workbook()
    kata = wb.kata(slug)
    refusal = session.solution_refusal(wb, kata)
    if refusal is not None:
        fail(refusal)
    from kata.views import source

    out().print(source(kata.solution.read_text(encoding="utf-8")), soft_wrap=True)
