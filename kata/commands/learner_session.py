"""The learner's commands in a session: `kata start`, `hunt`, `status`, `check`, `submit`,
`watch`, `serve`, `hint`, `finish`, and the yes/no question they ask on a terminal (`confirm`).

Bodies parse and present; the work is in kata.session (and kata.watch, kata.serve).
"""

from __future__ import annotations

from pathlib import Path

import typer

from kata.commands.base import (
    IN_BUNDLE,
    _clock_before_grading,
    _interactive,
    _paged_report,
    _rel,
    app,
    clock_line,
    complete_slug,
    complete_target,
    emit_json,
    fail,
    full_only,
    grading_progress,
    handled,
    out,
    say,
    workbook,
)
from kata.results import PASS

# --- a session --------------------------------------------------------------


@app.command()
@handled
def start(
    target: str | None = typer.Argument(None, help="An exam name or a kata slug (default: the default exam).",
                                           autocompletion=complete_target),
    abandon: bool = typer.Option(False, "--abandon", help="Abandon the live session, if any, and start this one (without a target: the default exam)."),
    minutes: float | None = typer.Option(None, "--minutes", help="Override the timer (decimals allowed, e.g. 0.5)."),
    reveal: str | None = typer.Option(None, "--reveal", help="all: show every level at once (for study); progressive: one level at a time."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Start the clock without asking."),
    seed: int | None = typer.Option(None, "--seed", help="Draw an exam's hunts with this seed (default: a fresh one)."),
    keep_file: bool = typer.Option(False, "--keep-file",
                                   help="Practising one kata: go on with your workspace file instead of a fresh stub."),
) -> None:
    """Start a timed session: show the briefing, then copy the stubs into workspace/ and start the clock.

    On a terminal it asks before starting the clock (--yes skips the question); without one it
    starts at once. Practising one kata you already have a file for, it asks whether to go on with
    it (--keep-file: yes); your file is archived either way."""
    from kata import session

    wb = workbook()
    planned = session.plan(wb, target, minutes, reveal, seed)
    _start_planned(wb, planned, abandon, yes, lambda: _keep_file(wb, planned, keep_file, yes))


def _keep_file(wb, planned, keep_file: bool, yes: bool) -> bool:
    """Whether a single kata's session goes on with the learner's own file (asked on a terminal)."""
    from kata.session import own_work

    mine = own_work(wb, planned)
    if mine is None:
        return False
    if keep_file or yes or not _interactive():
        return keep_file
    return confirm(f"Go on with your {_rel(wb, mine)}? It is archived either way (no: a fresh stub).")


def _start_planned(wb, planned, abandon: bool, yes: bool, keep=lambda: False) -> None:
    """The briefing, the questions, the start: shared by `kata start` and `kata hunt`. `keep()`
    says (asking, on a terminal, after the briefing) whether to go on with the learner's file."""
    from kata import session
    from kata.views import briefing, duration

    live = session.live_session(wb)
    if live is not None and not abandon:  # refused before the briefing, not after it
        fail(session.still_live_message(live, session.now()))
    from kata.output import paged

    with paged():  # an onsite loop's briefing is taller than a screen: read it whole first
        briefing(planned, bundle=IN_BUNDLE or wb.is_student_bundle)
    kept = keep()
    if not yes and _interactive():
        question = "Start the clock now?"
        if live is not None:
            question = f"Abandon session {live.id} ({live.name}) and start the clock now?"
        if not confirm(question):
            say("Not started; nothing was changed.")
            return
    started = session.start(wb, planned.name, abandon=abandon, planned=planned, keep=kept)
    s = started.session
    if started.abandoned:
        say(f"Abandoned session {started.abandoned.id} ({started.abandoned.name}).", markup=True)
    say(f"[bold]Session {s.id} started:[/] {s.name}, {len(s.katas)} question{'s' if len(s.katas) != 1 else ''}, "
        f"{duration(s.deadline - s.started_at)} on the clock.", markup=True)
    from kata.kinds import kind_of

    for i, (p, q) in enumerate(zip(started.prepared, started.questions, strict=True), start=1):
        say(f"  Q{i}. {p.kata.title} ({p.kata.slug})", markup=True)
        say(f"      edit {_rel(wb, p.path)}", markup=False)
        for what, path in kind_of(q).extra_files(wb, p.kata):
            say(f"      {what} {_rel(wb, path)}", markup=False)
        for path, copy in ((p.path, p.archived), *p.others_archived):
            if copy:
                fresh = (path == p.path and not kept and s.kind == "kata"
                         and kind_of(q).stub_handout)
                again = "; `--keep-file` goes on with it instead" if fresh else ""
                say(f"      your previous {path.name} was archived to {_rel(wb, copy)}{again}",
                    markup=False, indent=6)
    if IN_BUNDLE or wb.is_student_bundle:
        say("Read a prompt with `kata show SLUG`; run the examples with `kata check SLUG`; "
            "`kata status` shows the clock. Hand in your workspace/ files when time is up.", markup=True)
    else:
        say("Read a prompt with `kata show SLUG`; run the examples with `kata check SLUG`; "
            "grade with `kata submit SLUG`; `kata status` shows the clock.", markup=True)


@full_only()
@handled
def hunt(
    slug: str | None = typer.Argument(None, help="The kata (default: one drawn at random).",
                                         autocompletion=complete_slug),
    bug: str | None = typer.Option(None, "--bug", help="The zoo patch to plant (its file stem in tests/bugs/SLUG/), for authors and tests."),
    decoy: bool = typer.Option(False, "--decoy", help="Hand out the correct code (for authors and tests)."),
    level: int | None = typer.Option(None, "--level", help="Cover levels 1..N (default: the bug's level, else 1)."),
    minutes: float | None = typer.Option(None, "--minutes", help="The timer (default 15; decimals allowed)."),
    seed: int | None = typer.Option(None, "--seed", help="Draw the kata and the bug with this seed."),
    abandon: bool = typer.Option(False, "--abandon", help="Abandon the live session, if any."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Start the clock without asking."),
) -> None:
    """Review code an assistant wrote: a timed question whose workspace file has one bug in it.
    Pin the bug with a test in workspace/test_hunt_<module>.py, then fix the code; `kata submit`
    grades both, and `kata review` shows the bug after the session."""
    from kata.session import plan_hunt

    wb = workbook()
    _start_planned(wb, plan_hunt(wb, slug, bug, decoy, level, minutes, seed), abandon, yes)


@app.command()
@handled
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the live session: time left and each question's state."""
    from kata import session

    wb = workbook()
    s, remaining, rows = session.status(wb)
    scaled = session.scaled_now(wb, s) if s is not None else None
    if as_json:
        emit_json({
            "session": None if s is None else {"id": s.id, "name": s.name, "kind": s.kind,
                                               "remaining_s": round(remaining), "deadline": s.deadline,
                                               **({"scaled_score": scaled} if scaled is not None else {})},
            "questions": [{"slug": r.slug, "file": str(r.file), "exists": r.exists,
                           "visible": r.visible, "hidden": r.hidden, "levels": r.levels,
                           "levels_open": r.levels_open, "minutes": r.minutes,
                           "note": None if r.note is None else {"label": r.note_label, "value": r.note}}
                          for r in rows],
        })
        return
    if s is None:
        say("No live session. Start one with `kata start` (see `kata list`).")
        return
    from kata.views import levels_label

    clock_line(wb)
    for i, r in enumerate(rows, start=1):
        vis = f"visible {r.visible[0]}/{r.visible[1]}" if r.visible else "not checked"
        hid = f"hidden {r.hidden[0]:g}/{r.hidden[1]:g} pts" if r.hidden else "not submitted"
        lv = levels_label(r.levels, r.levels_open)
        missing = "" if r.exists else " [red](file missing)[/]"
        say(f"  Q{i}. {r.slug:<24} {lv:<10} {vis:<14} {hid}{missing}", markup=True)
        from kata.kinds import kind_named

        if r.note is not None:  # a line of its own: at 80 columns it would wrap inside the note
            say(f"      {r.note_label}: {kind_named(r.kind).words(r.note)}", markup=False)
    if scaled is not None:
        say(f"  Score so far: {scaled} on the 200-600 scale.", markup=False)


@app.command()
@handled
def check(
    slug: str | None = typer.Argument(None, help="The kata (default: the live session's).",
                                         autocompletion=complete_slug),
    all_: bool = typer.Option(False, "--all", help="Every test, and every failure in full."),
    failed: bool = typer.Option(False, "--failed", help="Every failing test in full, no passes."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    junit_xml: Path | None = typer.Option(None, "--junit-xml", metavar="PATH",
                                             help="Also write JUnit XML (a suite per kata, file and line per test)."),
    junit_rich: bool = typer.Option(False, "--junit-rich",
                                    help="With --junit-xml: add file/line attributes and per-test properties."),
) -> None:
    """Run the visible tests on your workspace file: a summary per level and the first failures in
    full (--failed: every failure; --all: everything)."""
    from kata import session
    from kata.views import check_report

    wb = workbook()
    katas = session.pick_katas(wb, slug, all_=slug is None)
    clock_first = _clock_before_grading(wb, katas, as_json)
    with grading_progress(as_json, "visible tests") as progress:
        graded = session.check(wb, katas, progress)
    if junit_xml is not None:
        from kata.formats import write_junit

        write_junit([(g.kata, g.result) for g in graded], junit_xml, rich=junit_rich)
    if as_json:
        emit_json({"results": [{"kata": g.kata.slug, **g.result.to_json(),
                                **({"check_note": g.check_note} if g.check_note else {})} for g in graded]})
    else:
        with _paged_report(wb, katas, clock_first):
            for g in graded:
                say(f"[bold]{g.kata.slug}[/] visible tests on {_rel(wb, g.path)}: "
                    f"{g.result.passed}/{len(g.result.tests)} pass", markup=True)
                check_report(g.result, mode="all" if all_ else "failed" if failed else "summary")
                for line in (g.kind.check_lines(g.kata, g.check_note) if g.check_note else []):
                    say(line, markup=False)
    if any(g.result.status != PASS for g in graded):
        raise typer.Exit(1)


@full_only()
@handled
def submit(
    slug: str | None = typer.Argument(None, help="The kata (default: every question of the live session).",
                                         autocompletion=complete_slug),
    all_: bool = typer.Option(False, "--all", help="Submit every kata of the live session (the default)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    junit_xml: Path | None = typer.Option(None, "--junit-xml", metavar="PATH",
                                             help="Also write JUnit XML (a suite per kata, file and line per test)."),
    junit_rich: bool = typer.Option(False, "--junit-rich",
                                    help="With --junit-xml: add file/line attributes and per-test properties."),
) -> None:
    """Grade your workspace file on the hidden suite and record the submission.

    Without a SLUG, every question of the live session, as `kata check` does."""
    from kata import session
    from kata.views import level_table, test_lines

    wb = workbook()
    katas = session.pick_katas(wb, slug, all_ or slug is None)
    clock_first = _clock_before_grading(wb, katas, as_json)
    with grading_progress(as_json, "hidden suite") as progress:
        graded = session.submit(wb, katas, progress)
    if junit_xml is not None:
        from kata.formats import write_junit
        from kata.present import may_show

        # during a session the file shows what this command shows: levels and pass/fail only
        write_junit([(g.kata, may_show(g.result, g.session is not None, practice=False)) for g in graded],
                    junit_xml, rich=junit_rich)
    from kata.present import submitted

    views = [submitted(wb, g) for g in graded]
    if as_json:
        emit_json({"results": [v.to_json() for v in views]})
    else:
        with _paged_report(wb, katas, clock_first):
            _print_submitted(graded, views, level_table, test_lines)
    if any(g.result.status != PASS for g in graded):
        raise typer.Exit(1)


def _missed_properties(missed) -> None:
    """A practice session's feedback by property: the edge text of each hidden test missed ("a
    total exactly equal to the budget fits"), never its name, input, call or message. A mock exam
    shows counts only, as the real round does (kata.present decides which)."""
    if not missed:
        return
    tests = sum(n for _, _, n in missed)
    say(f"Missed ({tests}), by what each hidden test checks:", markup=False)
    for level, edge, n in missed[:10]:  # a wrapped line continues under the text, not the level
        say(f"  L{level} {edge}" + (f" ({n} tests)" if n > 1 else ""), markup=False, indent=5)
    if len(missed) > 10:
        say(f"  ... and {len(missed) - 10} more (all of them in `kata review` after the session)",
            markup=False, indent=4)


def _print_submitted(graded, views, level_table, test_lines) -> None:
    """Each submission as kata.present shows it (`views`, one per graded file)."""
    from kata.views import timeouts

    for g, v in zip(graded, views, strict=True):
        out().print(level_table(v.result, f"{g.kata.slug}: hidden suite"))
        if v.result.message:
            say(f"  {v.result.message}", markup=False)
        timeouts(v.result)
        for line in (v.part or {}).get("lines", []):
            say(line, markup=False)
        if not v.live:
            test_lines(v.result, reveal=True)
            from kata.session import live_session

            live = live_session(workbook(settle=False))
            why = "no live session" if live is None else f"session {live.id} does not hold it"
            say(f"Practice ({why}): every hidden test is shown; the code is kept as a "
                f"snapshot (`kata snapshots {g.kata.slug}`) and counts for no session.")
            continue
        if v.practice:  # what each missed test is about, never its input
            _missed_properties(v.missed)
        say(f"Recorded for session {v.session}{v.share}. Details open after the "
            "session (`kata finish`, then `kata review`).")
        for lv in g.opened:
            from kata.workspace import visible_file

            wb = workbook(settle=False)
            examples = _rel(wb, visible_file(wb, g.kata))
            say(f"[bold]Level {lv} is open:[/] `kata show {g.kata.slug}` shows it; its examples "
                f"are in {examples} (`kata check {g.kata.slug}` runs them).", markup=True)


@app.command()
@handled
def watch(
    slug: str | None = typer.Argument(None, help="Start on this question (default: the first)."),
    plain: bool = typer.Option(False, "--plain", help="Plain lines, no screen, no keys (the default without a terminal)."),
    stop_after: int | None = typer.Option(None, "--stop-after", min=1, help="Stop after this many saves (for scripts)."),
) -> None:
    """Run the visible tests at once and on every save, with the clock and each question's state on screen.

    Keys: s submit, h hint, n/p next/previous question, q quit (keys typed while it grades are
    dropped)."""
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
    try:
        w.run()
    except KeyboardInterrupt:  # Ctrl-C is a way to quit, as q is: no error
        say("Stopped watching; the session goes on (`kata status` shows it).", markup=False)


@app.command()
@handled
def serve(
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Listen on this port (default: a free one)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Print the address; open no browser."),
) -> None:
    """The session's screen in your browser, on this machine only.

    A web server on 127.0.0.1 with a random token in its address: the prompt, an editor on your
    workspace file, Run, Submit, hints and the clock; then the review and your progress charts.
    It edits the same files and records in the same store as the other commands. Ctrl-C stops it."""
    from kata import serve as server

    why = server.missing()
    if why:
        fail(why)
    wb = workbook()
    try:
        server.serve(wb, port, open_browser=not no_browser, say=lambda line: say(line, markup=False))
    except server.PortError as exc:
        fail(str(exc))


@app.command()
@handled
def hint(slug: str | None = typer.Argument(None, help="The kata (default: the live session's only one).",
                                              autocompletion=complete_slug)) -> None:
    """Reveal the kata's next hint (recorded; it costs no points)."""
    from kata import session

    wb = workbook()
    kata = session.pick_katas(wb, slug, all_=False)[0]
    clock_line(wb, kata.slug)
    h = session.next_hint(wb, kata)
    if h is None:
        shown, closed = session.revealed(wb, kata)
        if not shown:
            say(f"{kata.slug} has no hint for its open levels"
                + (f" ({closed} open with later levels)." if closed else "."))
            return
        say(f"All {len(shown)} hints of {kata.slug}'s open levels are already revealed"
            + (f" (the other {closed} belong to levels not open yet)" if closed else "") + ":")
        for old in shown:
            say(f"  {old.line()}")
        return
    live = session.live_session(wb)
    if live is not None and kata.slug not in live.katas:  # under the session's header: say whose
        say(f"{kata.slug} (not a question of session {live.id}): {h.line()}")
    else:
        say(h.line())


@app.command()
@handled
def finish(yes: bool = typer.Option(False, "--yes", "-y", help="End it without asking.")) -> None:
    """End the live session now; its best submissions stand.

    On a terminal it asks first (--yes skips the question): a session cannot be resumed."""
    from kata import session

    wb = workbook()
    live = session.live_session(wb)
    if live is not None and not yes and _interactive():
        left = live.remaining(session.now())
        from kata.views import clock

        if not confirm(f"End session {live.id} ({live.name}) with {clock(left)} left? "
                       "It cannot be resumed."):
            say("Not finished; the clock is still running.")
            return
    with grading_progress(False, "submit") as progress:
        def announce(kata):  # before each grading: why the command waits
            say(f"Grading {kata.slug}: the version you saved last was not submitted...", err=True)
            return progress(kata)

        s, graded = session.finish(wb, announce)
    say(f"Session {s.id} ({s.name}) finished.")
    from kata.output import say as write

    for a in graded:
        for line in a.lines():  # a wrapped line continues under the slug's text
            write(f"  {line}", markup=False, indent=4)
    rev = session.review(wb, s.id)
    if rev.points_possible and rev.points_earned >= rev.points_possible:  # nothing was missed
        say(f"Every hidden test passed: {rev.points_earned:g}/{rev.points_possible:g} points. "
            f"`kata review {s.id}` shows the session.")
    else:
        say(f"See what you missed: `kata review {s.id}`.")


def confirm(question: str) -> bool:
    """Ask a yes/no question on the terminal; only y or yes (any case) is yes: [y/N]. The
    question wraps at spaces like prose; the answer goes after its last line."""
    from rich.text import Text

    from kata.output import console, prose_width, wrap

    lines = [line.plain for line in wrap(Text(f"{question} [y/N]"), prose_width(console()) - 1)]
    for line in lines[:-1]:
        typer.echo(line)
    try:
        answer = input(f"{lines[-1]} ")
    except EOFError:
        return False
    except KeyboardInterrupt:  # the error line goes under the question, not after its "^C"
        typer.echo("", err=True)
        raise
    return answer.strip().lower() in ("y", "yes")
