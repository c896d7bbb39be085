"""The `kata` command line: argument parsing and rendering only; the work is in kata/.

Exit codes: 0 success, 1 a check that failed (tests failing, validation failing),
2 a usage or input error (printed as one line starting with "error:").

Heavy imports (pytest, hypothesis, numpy, rich) happen inside the commands that need them, so
`kata --help` stays quick.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    help="Timed, auto-graded coding katas for LLM-inference-infrastructure interviews.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_state: dict = {"workbook": None}


def complete_slug(incomplete: str) -> list[str]:
    """Shell completion for a kata slug (never fails: completion must stay quiet)."""
    try:
        from kata.catalog import Workbook

        return [s for s in Workbook.find().slugs() if s.startswith(incomplete)]
    except Exception:  # noqa: BLE001
        return []


def complete_target(incomplete: str) -> list[str]:
    """Shell completion for `kata start`: exams and kata slugs."""
    try:
        from kata.catalog import Workbook

        wb = Workbook.find()
        return [s for s in wb.exam_names() + wb.slugs() if s.startswith(incomplete)]
    except Exception:  # noqa: BLE001
        return []

# A student bundle (`kata bundle`) installs this very file with a marker beside it: there the
# commands that need hidden suites or reference solutions (submit, solution and the instructor
# workflow) are not registered at all, so they are neither in --help nor callable.
IN_BUNDLE = (Path(__file__).resolve().parent.parent / ".kata-student-bundle").is_file()


def full_only(*args, **kwargs):
    """@app.command(...) outside a student bundle; inside one, leave the command out."""
    if IN_BUNDLE:
        return lambda fn: fn
    return app.command(*args, **kwargs)


@app.callback()
def main(
    workbook: Optional[Path] = typer.Option(
        None, "--workbook", envvar="KATA_WORKBOOK",
        help="A workbook folder (katas/, solutions/, graders/, exams/) to use instead of this one.",
    ),
) -> None:
    """Timed, auto-graded coding katas for LLM-inference-infrastructure interviews.

    Start with `kata start` (the 90-minute, four-question assessment) or `kata start SLUG`.
    """
    _state["workbook"] = workbook
    _state["settled"] = False


# --- plumbing ---------------------------------------------------------------


def fail(message: str, code: int = 2):
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def handled(fn):
    """Turn the user-facing errors of kata/ into one line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import sqlite3

        from kata.catalog import CatalogError
        from kata.store import StoreError
        from kata.workspace import WorkspaceError

        try:
            return fn(*args, **kwargs)
        except (CatalogError, StoreError, WorkspaceError) as exc:
            fail(str(exc))
        except sqlite3.DatabaseError as exc:  # a store damaged in a way opening it did not show
            fail(f"{_store_path()}: the store is damaged ({exc}): run `kata doctor` to move it aside "
                 "and rebuild what can be read (your workspace/ is never touched)")
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


def _store_path() -> str:
    try:
        return str(workbook(settle=False).kata_dir / "kata.db")
    except Exception:  # noqa: BLE001 - only for an error message
        return ".kata/kata.db"


def workbook(settle: bool = True):
    """The workbook, after settling any session whose clock ran out (its last saved work is
    auto-submitted by the first command after the deadline; see kata.session.settle)."""
    from kata.catalog import Workbook

    wb = Workbook.find(_state["workbook"])
    if settle and not _state.get("settled"):
        _state["settled"] = True
        _settle(wb)
    return wb


@contextlib.contextmanager
def grading_progress(quiet: bool, what: str):
    """A progress bar (tests done / total, current level) on a terminal; one quiet line on stderr
    otherwise; nothing at all for --json. Yields a factory: kata -> on_progress callback."""
    if quiet:
        yield None
        return
    if not _interactive():
        def plain(kata):
            typer.echo(f"grading {kata.slug} ({what})...", err=True)
            return None

        yield plain
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=out(), transient=True) as bar:
        def factory(kata):
            task = bar.add_task(f"{kata.slug} ({what})", total=None)

            def on_progress(done, total, level):
                bar.update(task, completed=done, total=total,
                           description=f"{kata.slug} ({what}), level {level}")

            return on_progress

        yield factory


def clock_line(wb, slug: str | None = None) -> None:
    """One line on top of every in-session command: session, question, time left, and a warning
    in the last 10, 5 and 1 minute(s). Nothing outside a session."""
    from kata import session as sessions
    from kata.views import clock, deadline_warning

    s = sessions.live_session(wb)
    if s is None:
        return
    remaining = s.remaining(sessions.now())
    where = ""
    if slug is not None and slug in s.katas and s.kind == "exam":
        where = f", Q{s.katas.index(slug) + 1} {slug}"
    warning = deadline_warning(remaining)
    warn = f" ({warning})" if warning else ""
    out().print(f"[bold]Session {s.id}[/] ({s.name}{where}): {clock(remaining)} left{warn}",
                highlight=False)


def _settle(wb) -> None:
    import sqlite3

    from kata import session
    from kata.store import StoreError
    from kata.views import clock

    if not (wb.kata_dir / "kata.db").exists():
        return
    try:
        settled = session.settle(wb)
    except (StoreError, sqlite3.DatabaseError):
        return  # a damaged store: the command itself reports it (and `kata doctor` mends it)
    for a in settled:
        sub = a.submission
        typer.echo(f"Session {a.session.id} ({a.session.name}) ran out: auto-submitted {a.kata.slug}, "
                   f"the version saved at {clock(a.saved_at - a.session.started_at)}: "
                   f"{sub.points_earned:g}/{sub.points_possible:g} points.", err=True)


def _interactive() -> bool:
    """Both ends on a terminal: a person who can answer a question."""
    import sys

    return sys.stdin.isatty() and sys.stdout.isatty()


def emit_json(data) -> None:
    import json

    typer.echo(json.dumps(data, indent=2, default=str))


def out():
    from kata.views import console

    return console()


def _rel(wb, path: Path) -> str:
    for base in (wb.state_dir, wb.root, Path.cwd()):
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


# --- browsing ---------------------------------------------------------------


@app.command("list")
@handled
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the katas and exams, with your best score so far."""
    from kata.session import exam_series, open_store, series_name

    wb = workbook()
    katas, exams = wb.katas(), wb.exams()
    best = open_store(wb).best_scores()
    if as_json:
        emit_json({
            "katas": [{"slug": k.slug, "title": k.title, "difficulty": k.difficulty,
                       "minutes": k.minutes, "levels": len(k.levels), "points": k.points,
                       "tags": list(k.tags), "best": best.get(k.slug, (None,))[0]} for k in katas],
            "exams": [{"name": e.name, "title": e.title, "minutes": e.minutes,
                       "katas": list(e.katas), "series": series_name(e.name)} for e in exams],
        })
        return
    from rich.table import Table

    table = Table(title="Katas", title_justify="left", show_edge=False)
    # slugs are typed back: never cut or wrapped (the titles wrap instead)
    table.add_column("slug", no_wrap=True, min_width=max((len(k.slug) for k in katas), default=4))
    table.add_column("title", ratio=1)
    for col in ("difficulty", "min", "levels", "best"):
        table.add_column(col, no_wrap=True)
    for k in katas:
        b = best.get(k.slug)
        table.add_row(k.slug, k.title, k.difficulty, str(k.minutes), str(len(k.levels)),
                      f"{b[0]:g}/{k.points}" if b else "-")
    out().print(table)
    table = Table(title="Exams", title_justify="left", show_edge=False)
    table.add_column("name", no_wrap=True, min_width=max((len(e.name) for e in exams), default=4))
    table.add_column("title", ratio=1)
    table.add_column("min", no_wrap=True)
    table.add_column("questions", ratio=1)
    for members in exam_series(exams):  # a series (llm-infra-oa, -2, -3) stays together
        if len(members) > 1 and table.row_count:
            table.add_section()
        for e in members:
            table.add_row(e.name, e.title, str(e.minutes),
                          ", ".join(f"{q.kata} L{q.levels[0]}" + (f"-{q.levels[-1]}" if len(q.levels) > 1 else "")
                                    for q in e.questions))
        if len(members) > 1:
            table.add_section()
    out().print(table)


@app.command()
@handled
def show(
    slug: Optional[str] = typer.Argument(None, help="The kata (default: the live session's only one).",
                                         autocompletion=complete_slug),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: kata, levels shown, markdown."),
) -> None:
    """Show a kata's prompt: in a session, the levels open so far; outside one, all of it."""
    from kata import session

    wb = workbook()
    kata = session.pick_katas(wb, slug, all_=False)[0]
    v, markdown = session.prompt_markdown(wb, kata)
    if as_json:
        emit_json({"kata": kata.slug, "levels": v.levels, "markdown": markdown})
        return
    clock_line(wb, kata.slug)
    from kata.views import print_markdown

    print_markdown(markdown)


# --- a session --------------------------------------------------------------


@app.command()
@handled
def start(
    target: Optional[str] = typer.Argument(None, help="An exam name or a kata slug (default: the default exam).",
                                           autocompletion=complete_target),
    abandon: bool = typer.Option(False, "--abandon", help="Abandon the live session, if any."),
    minutes: Optional[float] = typer.Option(None, "--minutes", help="Override the timer (decimals allowed, e.g. 0.5)."),
    reveal: Optional[str] = typer.Option(None, "--reveal", help="all: show every level at once (for study); progressive: one level at a time."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Start the clock without asking."),
) -> None:
    """Start a timed session: show the briefing, then copy the stubs into workspace/ and start the clock.

    On a terminal it asks before starting the clock (--yes skips the question); without one it
    starts at once."""
    from kata import session
    from kata.views import briefing, clock

    wb = workbook()
    planned = session.plan(wb, target, minutes, reveal)
    con = out()
    briefing(planned, bundle=IN_BUNDLE or wb.is_student_bundle)
    if not yes and _interactive():
        if not typer.confirm("Start the clock now?", default=True):
            typer.echo("Not started; nothing was changed.")
            return
    started = session.start(wb, target, abandon=abandon, planned=planned)
    s = started.session
    if started.abandoned:
        con.print(f"Abandoned session {started.abandoned.id} ({started.abandoned.name}).")
    con.print(f"[bold]Session {s.id} started:[/] {s.name}, {len(s.katas)} question(s), "
              f"{clock(s.deadline - s.started_at)} on the clock.")
    for i, (p, q) in enumerate(zip(started.prepared, started.questions), start=1):
        con.print(f"  Q{i}. {p.kata.title} ({p.kata.slug})")
        con.print(f"      edit {_rel(wb, p.path)}", markup=False)
        if p.archived:
            con.print(f"      your previous {p.path.name} was archived to {_rel(wb, p.archived)}")
    if IN_BUNDLE or wb.is_student_bundle:
        con.print("Read a prompt with `kata show SLUG`; run the examples with `kata check SLUG`; "
                  "`kata status` shows the clock. Hand in your workspace/ files when time is up.")
    else:
        con.print("Read a prompt with `kata show SLUG`; run the examples with `kata check SLUG`; "
                  "grade with `kata submit SLUG`; `kata status` shows the clock.")


@app.command()
@handled
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the live session: time left and each question's state."""
    from kata import session

    wb = workbook()
    s, remaining, rows = session.status(wb)
    if as_json:
        emit_json({
            "session": None if s is None else {"id": s.id, "name": s.name, "kind": s.kind,
                                               "remaining_s": round(remaining), "deadline": s.deadline},
            "questions": [{"slug": r.slug, "file": str(r.file), "exists": r.exists,
                           "visible": r.visible, "hidden": r.hidden, "levels": r.levels,
                           "levels_open": r.levels_open, "minutes": r.minutes} for r in rows],
        })
        return
    if s is None:
        typer.echo("No live session. Start one with `kata start` (see `kata list`).")
        return
    from kata.views import levels_label

    con = out()
    clock_line(wb)
    for i, r in enumerate(rows, start=1):
        vis = f"visible {r.visible[0]}/{r.visible[1]}" if r.visible else "not checked"
        hid = f"hidden {r.hidden[0]:g}/{r.hidden[1]:g} pts" if r.hidden else "not submitted"
        lv = levels_label(r.levels, r.levels_open)
        missing = "" if r.exists else " [red](file missing)[/]"
        con.print(f"  Q{i}. {r.slug:<24} {lv:<10} {vis:<14} {hid}{missing}")


@app.command()
@handled
def check(
    slug: Optional[str] = typer.Argument(None, help="The kata (default: the live session's).",
                                         autocompletion=complete_slug),
    all_: bool = typer.Option(False, "--all", help="Every test, and every failure in full."),
    failed: bool = typer.Option(False, "--failed", help="Every failing test in full, no passes."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run the visible tests on your workspace file: a summary per level and the first failures in
    full (--failed: every failure; --all: everything)."""
    from kata import session
    from kata.views import check_report

    wb = workbook()
    katas = session.pick_katas(wb, slug, all_=slug is None)
    if not as_json:
        clock_line(wb, katas[0].slug if len(katas) == 1 else None)
    with grading_progress(as_json, "visible tests") as progress:
        graded = session.check(wb, katas, progress)
    if as_json:
        emit_json([{"kata": g.kata.slug, **g.result.to_json()} for g in graded])
    else:
        long_output = (all_ or failed) and _interactive()
        with (out().pager(styles=True) if long_output else contextlib.nullcontext()):
            for g in graded:
                out().print(f"[bold]{g.kata.slug}[/] visible tests on {_rel(wb, g.path)}: "
                            f"{g.result.passed}/{len(g.result.tests)} pass")
                check_report(g.result, mode="all" if all_ else "failed" if failed else "summary")
    if any(g.result.status != "pass" for g in graded):
        raise typer.Exit(1)


@full_only()
@handled
def submit(
    slug: Optional[str] = typer.Argument(None, help="The kata (default: the live session's only one).",
                                         autocompletion=complete_slug),
    all_: bool = typer.Option(False, "--all", help="Submit every kata of the live session."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Grade your workspace file on the hidden suite and record the submission."""
    from kata import session
    from kata.views import level_table, test_lines

    wb = workbook()
    katas = session.pick_katas(wb, slug, all_)
    if not as_json:
        clock_line(wb, katas[0].slug if len(katas) == 1 else None)
    with grading_progress(as_json, "hidden suite") as progress:
        graded = session.submit(wb, katas, progress)
    if as_json:
        rows = []
        for g in graded:
            data = {"kata": g.kata.slug, **g.result.to_json(), "levels_graded": g.levels,
                    "levels_opened": g.opened}
            if g.session is not None:  # during a session: levels and pass/fail only
                data["tests"] = [{"name": f"hidden test {i}", "status": t["status"],
                                  "task_id": t["task_id"]} for i, t in enumerate(data["tests"], 1)]
            rows.append(data)
        emit_json(rows)
    else:
        con = out()
        for g in graded:
            con.print(level_table(g.result, f"{g.kata.slug}: hidden suite"))
            if g.result.message:
                con.print(f"  {g.result.message}", markup=False)
            if g.session is not None:
                con.print(f"Recorded for session {g.session.id}. Details open after the session "
                          "(`kata finish`, then `kata review`).")
                for lv in g.opened:
                    con.print(f"[bold]Level {lv} is open:[/] `kata show {g.kata.slug}` shows it; "
                              f"`kata check {g.kata.slug}` runs its examples.")
            else:
                test_lines(g.result, reveal=True)
    if any(g.result.status != "pass" for g in graded):
        raise typer.Exit(1)


@app.command()
@handled
def watch(
    slug: Optional[str] = typer.Argument(None, help="Start on this question (default: the first)."),
    plain: bool = typer.Option(False, "--plain", help="Plain lines, no screen, no keys (the default without a terminal)."),
    stop_after: Optional[int] = typer.Option(None, "--stop-after", min=1, help="Stop after this many saves (for scripts)."),
) -> None:
    """Re-run the visible tests on every save, with the clock and each question's state on screen.

    Keys: s submit, h hint, n/p next/previous question, q quit."""
    from kata import session
    from kata.watch import Watch

    wb = workbook()
    live = session.live_session(wb)
    if live is None:
        fail("no live session to watch: `kata start` one first")
    katas = [wb.kata(s) for s in live.katas]
    w = Watch(wb, katas, plain=plain or not _interactive(), stop_after=stop_after)
    if slug is not None:
        if slug not in live.katas:
            fail(f"'{slug}' is not a question of session {live.id}: {', '.join(live.katas)}")
        w.current = live.katas.index(slug)
    w.run()


@app.command()
@handled
def hint(slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug)) -> None:
    """Reveal the kata's next hint (recorded; it costs no points)."""
    from kata import session

    wb = workbook()
    kata = wb.kata(slug)
    clock_line(wb, kata.slug)
    h = session.next_hint(wb, kata)
    if h is None:
        shown = session.revealed(wb, kata)
        more = len(kata.hints) - len(shown)
        typer.echo(f"All {len(shown)} hints of {slug}'s open levels are already revealed"
                   + (f" (the other {more} belong to levels not open yet)" if more else "") + ":")
        for old in shown:
            typer.echo(f"  {old.index + 1}. (level {old.level}) {old.text}")
        return
    typer.echo(f"Hint {h.index + 1} of {h.total} (level {h.level}): {h.text}")


@app.command()
@handled
def finish() -> None:
    """End the live session now; its best submissions stand."""
    from kata import session

    s = session.finish(workbook())
    typer.echo(f"Session {s.id} ({s.name}) finished. See what you missed: `kata review {s.id}`.")


@app.command()
@handled
def review(
    session_id: Optional[int] = typer.Argument(None, metavar="[SESSION]", help="Session number (default: the last ended one)."),
    all_: bool = typer.Option(False, "--all", help="Every hidden test, passed ones too."),
    failed: bool = typer.Option(False, "--failed", help="Every test you missed (default: the first 10 per question)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """After a session: the score per level, and each hidden test you missed with its edge case and
    message (--failed: all of them; --all: every test). Long output goes through a pager."""
    from kata import session
    from kata.views import clock, level_table, review_lines

    wb = workbook()
    rev = session.review(wb, session_id)
    if as_json:
        emit_json({
            "session": rev.session.id, "name": rev.session.name,
            "points_earned": rev.points_earned, "points_possible": rev.points_possible,
            "questions": [{
                "kata": q.slug, "submissions": q.submissions, "levels": q.levels,
                "auto_submitted": bool(q.submission and q.submission.auto),
                "level_passed_s": {str(lv): t for lv, t in q.splits.items()},
                "submitted_s": q.submit_times,
                "first_activity_s": q.first_activity, "last_submission_s": q.last_submission,
                "points_earned": q.points_earned, "points_possible": q.points_possible,
                "result": q.result.to_json() if q.result else None,
            } for q in rev.questions],
        })
        return
    con = out()
    with (con.pager(styles=True) if _interactive() else contextlib.nullcontext()):
        _print_review(con, rev, clock, level_table, review_lines,
                      "all" if all_ else "failed" if failed else "summary")


def _print_review(con, rev, clock, level_table, review_lines, mode) -> None:
    s = rev.session
    con.print(f"[bold]Review of session {s.id}[/] ({s.name}, {s.status}): "
              f"[bold]{rev.points_earned:g}/{rev.points_possible:g}[/] points")
    for i, q in enumerate(rev.questions, start=1):
        con.rule(f"Q{i}. {q.title} ({q.slug})")
        if q.result is None:
            con.print(f"  no submission before the cutoff: 0/{q.points_possible:g}")
            continue
        spent = ""
        if q.first_activity is not None and q.last_submission is not None:
            spent = (f", made at {clock(q.last_submission)}; worked from {clock(q.first_activity)}")
        auto = " (auto-submitted at the deadline)" if q.submission and q.submission.auto else ""
        con.print(f"  counted: the best of {q.submissions} submission(s) before the cutoff{spent}{auto}")
        if q.splits:
            con.print("  levels passed at: " + ", ".join(f"L{lv} {clock(t)}" for lv, t in q.splits.items())
                      + f" (of levels {', '.join(map(str, q.levels))})")
        if q.submit_times:
            con.print("  submitted at: " + ", ".join(clock(t) for t in q.submit_times))
        con.print(level_table(q.result, ""))
        review_lines(q.result, mode)


@app.command()
@handled
def progress(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Your best score per kata, its score session by session, and your fastest time per level."""
    from kata import session
    from kata.views import assessment_lines, progress_lines

    rows = session.progress(workbook())
    if as_json:
        emit_json([{"kata": r.kata.slug, "points_possible": r.kata.points, "best": r.best,
                    "sessions": [{"session": sid, "points_earned": pts} for sid, pts in r.per_session],
                    "fastest_level_s": {str(lv): t for lv, t in r.fastest.items()}} for r in rows])
        return
    progress_lines(rows)
    assessment_lines(session.assessment_progress(workbook()))


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
        emit_json([{"n": i, "saved_at": s.submitted_at, "session": s.session_id, "suite": s.suite,
                    "points_earned": s.points_earned, "auto": s.auto, "lines": len(s.code.splitlines())}
                   for i, s in enumerate(snaps, start=1)])
        return
    if not snaps:
        typer.echo(f"No snapshots of {slug} yet: every `kata check` and `kata submit` takes one.")
        return
    for i, s in enumerate(snaps, start=1):
        what = "submit" if s.suite == "hidden" else "check"
        score = f"{s.points_earned:g}/{s.points_possible:g} pts" if s.suite == "hidden" else \
            f"{sum(t['status'] == 'pass' for t in s.result.get('tests', []))}/{len(s.result.get('tests', []))} visible"
        session_text = f"session {s.session_id}" if s.session_id else "practice"
        typer.echo(f"  {i:>3}  {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(s.submitted_at))}  "
                   f"{what:<6} {session_text:<11} {score:<16} {len(s.code.splitlines())} lines"
                   + ("  (auto)" if s.auto else ""))
    typer.echo(f"Restore one with `kata restore {slug} N` (your current file is archived first).")


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
    typer.echo(f"Restored snapshot {n} of {slug} to {_rel(wb, target)}"
               + (f"; your previous file is in {_rel(wb, archived[target])}" if archived else "") + ".")


@app.command()
@handled
def doctor() -> None:
    """Check the store in .kata/; if it is damaged, move it aside and rebuild what can be read."""
    from kata.session import now
    from kata.store import repair

    wb = workbook(settle=False)
    path = wb.kata_dir / "kata.db"
    r = repair(path, now())
    if r.healthy:
        typer.echo(f"{_rel(wb, path)}: healthy, nothing to do.")
        return
    typer.echo(f"{_rel(wb, path)} was damaged: moved to {_rel(wb, r.moved_to)}/ and rebuilt.")
    for table, count in (r.salvaged or {}).items():
        lost = (r.lost or {}).get(table, 0)
        typer.echo(f"  {table}: {count} row(s) recovered"
                   + (", the table could not be read" if lost < 0 else f", {lost} lost" if lost else ""))
    typer.echo("Your workspace/ files were not touched.")


@app.command()
@handled
def history(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List past sessions and their scores."""
    import time

    from kata import session

    from kata.views import splits_text

    rows = session.history(workbook())
    if as_json:
        emit_json([{"session": r.session.id, "kind": r.session.kind, "name": r.session.name,
                    "status": r.session.status, "started_at": r.session.started_at,
                    "points_earned": r.points_earned, "points_possible": r.points_possible,
                    "auto_submitted": r.auto_submitted,
                    "level_passed_s": {slug: {str(lv): t for lv, t in sp.items()}
                                       for slug, sp in r.splits.items()}}
                   for r in rows])
        return
    if not rows:
        typer.echo("No sessions yet. Start one with `kata start`.")
        return
    from rich.table import Table

    table = Table(show_edge=False)
    for col in ("session", "name", "started (UTC)", "status", "score", "levels passed at"):
        table.add_column(col)
    for r in rows:
        s = r.session
        table.add_row(str(s.id), s.name, time.strftime("%Y-%m-%d %H:%M", time.gmtime(s.started_at)),
                      s.status, f"{r.points_earned:g}/{r.points_possible:g}",
                      splits_text(r.splits) or "-")
    out().print(table)


@full_only()
@handled
def solution(slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug)) -> None:
    """Show the reference solution (refused while a live session contains the kata)."""
    from kata import session

    wb = workbook()
    kata = wb.kata(slug)
    live = session.live_session(wb)
    if live is not None and slug in live.katas:
        fail(f"session {live.id} containing '{slug}' is live: `kata finish` it first")
    if not kata.solution.is_file():
        fail(f"{kata.solution}: no reference solution in this workbook (a student bundle?)")
    from kata.views import source

    out().print(source(kata.solution.read_text(encoding="utf-8")), soft_wrap=True)


@full_only()
@handled
def validate(
    slug: Optional[str] = typer.Argument(None, help="The kata to validate."),
    all_: bool = typer.Option(False, "--all", help="Validate every kata."),
    workers: int = typer.Option(2, "--workers", min=1, help="Grading runs at once."),
    mutants: bool = typer.Option(False, "--mutants", help="Score the hidden suite by mutation testing the reference (needs mutmut 3)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check katas: schema, API, markers, reference passes, stub fails, determinism, bug zoo.

    With --mutants: the mutation score of the hidden suite, and each surviving mutant as a diff.
    """
    from kata.validate import validate as run

    wb = workbook()
    if bool(slug) == all_:
        fail("give a kata SLUG or --all")
    slugs = wb.slugs() if all_ else [wb.kata(slug).slug]
    if mutants:
        _mutants(wb, slugs, workers, as_json)
        return
    reports = run(wb, slugs, workers)
    if as_json:
        emit_json({"ok": all(r.ok for r in reports), "katas": [r.to_json() for r in reports]})
    else:
        con = out()
        for r in reports:
            runtime = f", hidden suite {r.hidden_runtime_s:.1f}s on the reference" if r.hidden_runtime_s else ""
            con.print(f"[bold]{r.slug}[/]: {'[green]OK[/]' if r.ok else '[red]FAILED[/]'} "
                      f"({r.hidden_tests} hidden tests, {r.bugs} bugs{runtime})")
            for c in r.checks:
                con.print(f"  {'[green]ok[/]  ' if c.ok else '[red]FAIL[/]'} {c.name:<14} ", end="")
                con.print(c.detail, markup=False)
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


def _mutants(wb, slugs: list[str], workers: int, as_json: bool) -> None:
    from kata.mutants import run_mutants

    reports = []
    for slug in slugs:
        if not as_json:
            typer.echo(f"{slug}: mutation testing the reference (this takes a while)...", err=True)
        reports.append(run_mutants(wb.kata(slug), workers))
    if as_json:
        emit_json([r.to_json() for r in reports])
        return
    con = out()
    for r in reports:
        score = "n/a" if r.score is None else f"{r.score:.1%}"
        con.print(f"[bold]{r.slug}[/]: mutation score {score} ({r.count('killed')} killed of "
                  f"{r.scored}; {r.count('survived')} survived, {r.count('no tests')} with no test, "
                  f"{r.count('equivalent')} marked equivalent)")
        for m in r.mutants:
            if m.status == "survived":
                con.rule(f"survived: {m.name}", align="left")
                con.print(m.diff, markup=False)
        for note in r.stale_marks:
            con.print(f"[yellow]stale mark in kata.toml:[/] {note}", highlight=False)
    if any(r.count("survived") for r in reports):
        typer.echo("Mark a mutant that cannot be caught in kata.toml: "
                   "[[equivalent_mutants]] name = \"...\" reason = \"...\"")


# --- instructors ------------------------------------------------------------


@full_only()
@handled
def new(
    slug: str = typer.Argument(..., help="The new kata's slug, e.g. token-budget."),
    title: Optional[str] = typer.Option(None, "--title", help="Its title."),
) -> None:
    """Scaffold a new kata (prompt, stub, visible tests, reference, hidden suite, a bug)."""
    from kata.scaffold import new_kata

    wb = workbook()
    files = new_kata(wb, slug, title)
    typer.echo(f"Created kata '{slug}' from a small worked example:")
    for f in files:
        typer.echo(f"  {_rel(wb, f)}")
    typer.echo(f"Check it is valid as it stands: kata validate {slug}. Then make it yours; "
               "see AUTHORING.md.")


@full_only()
@handled
def bundle(
    student: Path = typer.Option(..., "--student", help="Folder to write the student bundle to (new or empty)."),
) -> None:
    """Write a student bundle: prompts, stubs and visible tests; no solutions, no hidden tests."""
    from kata.cohort import student_bundle

    wb = workbook()
    files = student_bundle(wb, student)
    typer.echo(f"Wrote a student bundle of {len(files)} files to {student}: prompts, stubs, visible "
               "tests and the CLI; no reference solutions and no hidden tests (checked file by file).")
    typer.echo(f"Students run: cd {student} && python3 -m venv .venv && .venv/bin/pip install -e . "
               "&& .venv/bin/kata start")


@full_only("grade-batch")
@handled
def grade_batch(
    submissions: Path = typer.Argument(..., help="SUBMISSIONS/<student>/<module>.py for each student."),
    out_dir: Path = typer.Option(Path("gradebook"), "--out", help="Where to write gradebook.json and .csv."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Gradings at once (default: the number of cores)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="Grade only slice K of N, e.g. 2/4."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.5, help="Seconds one hidden test may run."),
) -> None:
    """Grade a cohort's submissions on the hidden suites, in parallel, into a gradebook."""
    import os

    from rich.progress import Progress

    from kata.cohort import discover, grade_batch as run, parse_shard, write_gradebook
    from kata.grading import Limits

    wb = workbook()
    k, n = parse_shard(shard)
    submissions = submissions.expanduser().resolve()  # relative to here, not to the workbook
    students = discover(wb, submissions)
    total = sum(1 for i, _ in enumerate(students) if i % n == k - 1) * len(wb.slugs())
    with Progress(console=out(), transient=True) as progress:
        task = progress.add_task("grading", total=total)
        book = run(wb, submissions, workers or os.cpu_count() or 1, shard,
                   on_done=lambda row: progress.advance(task),
                   limits=Limits(test_timeout=timeout, hard_test_grace=max(2.0, timeout / 2)))
    json_path, csv_path = write_gradebook(book, out_dir)
    con = out()
    con.print(f"Graded {len(book['students'])} students x {len(book['katas'])} katas "
              f"(shard {book['shard']}): {_rel(wb, json_path)}, {_rel(wb, csv_path)}")
    missing: dict[str, list[str]] = {}
    for row in book["rows"]:
        if row["status"] == "missing":
            missing.setdefault(row["student"], []).append(row["kata"])
    if missing:
        con.print(f"Missing (no file handed in, 0 points): {len(missing)} student(s)")
        for student, slugs in sorted(missing.items()):
            con.print(f"  {student}: {', '.join(slugs)}", markup=False)
    if book["most_failed"]:
        con.print("Hidden tests most students failed:")
        for item in book["most_failed"][:5]:
            con.print(f"  {item['students_failed']:>3}  {item['test']}", markup=False)


gradebook_app = typer.Typer(help="Work with gradebooks written by grade-batch.", no_args_is_help=True)
if not IN_BUNDLE:
    app.add_typer(gradebook_app, name="gradebook")


@gradebook_app.command("merge")
@handled
def gradebook_merge(
    files: list[Path] = typer.Argument(..., help="gradebook.json files of the shards."),
    out_dir: Path = typer.Option(Path("gradebook"), "--out", help="Where to write the merged gradebook."),
) -> None:
    """Merge shard gradebooks into one."""
    import json

    from kata.catalog import CatalogError
    from kata.cohort import merge, write_gradebook

    books = []
    for f in files:
        try:
            books.append(json.loads(f.read_text()))
        except (OSError, ValueError) as exc:
            raise CatalogError(f"{f}: not a readable gradebook JSON ({exc})") from None
    book = merge(books)
    json_path, csv_path = write_gradebook(book, out_dir)
    typer.echo(f"Merged {len(files)} gradebooks ({len(book['students'])} students): {json_path}, {csv_path}")


# kata.engine.cli imports only typer at its top level (numpy and the engine load inside its commands)
from kata.engine.cli import engine_app  # noqa: E402

app.add_typer(engine_app, name="engine", help="Run the reference inference engine.")

if __name__ == "__main__":  # pragma: no cover
    app()
