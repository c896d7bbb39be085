"""The `kata` command line: argument parsing and rendering only; the work is in kata/.

Exit codes: 0 success, 1 a check that failed (tests failing, validation failing),
2 a usage or input error: one line on stderr starting with "error:", for Click's own errors too
(KataGroup), so a command added here gets it for free. What is printed goes through kata.output
(prose wrapped at spaces, code never re-wrapped, the pager only when it helps).

Heavy imports (pytest, hypothesis, numpy, rich) happen inside the commands that need them, so
`kata --help` stays quick.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import NoReturn

import typer
import typer.core

from kata.results import ERROR, PASS, hidden_name
from kata.usage import KataTyper


class KataGroup(typer.core.TyperGroup):
    """The top-level command group: every usage error (Click's own included: an unknown command
    or option, a missing argument, a bad value) becomes one `error:` line on stderr, exit 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        click = _click_exceptions()
        if list(sys.argv[1:] if args is None else args) in (["-h"], ["--help"]):
            args = []  # `kata -h` is `kata` alone: the help, paged when taller than the screen
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.NoArgsIsHelpError as exc:  # plain `kata`: the help, not an error
            if _interactive():  # paged when taller than the screen (rich loads only here)
                from kata.output import paged, verbatim

                with paged():
                    verbatim(exc.ctx.get_help())
            else:
                typer.echo(exc.ctx.get_help())
            code = 0
        except click.UsageError as exc:
            usage_error(f"{_click_words(exc, click)} (try `{_command_path(exc.ctx)} -h`)")
            code = 2
        except click.ClickException as exc:
            usage_error(_click_words(exc, click))
            code = exc.exit_code
        except typer.Abort:  # Click's Abort (Typer re-exports it; its vendored Click does not)
            usage_error("interrupted")
            code = 130
        except BrokenPipeError:  # `kata show | head`: the reader left; stop quietly, as cat does
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush cannot fail
            code = 0
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _click_words(exc, click) -> str:
    """A Click error's message in kata's voice (kata.usage.error_words): an unknown option's
    close matches become "Did you mean ...?", as a mistyped kata's do."""
    from kata.usage import error_words

    if isinstance(exc, click.NoSuchOption) and exc.possibilities:
        return error_words(exc.message, exc.possibilities)
    return error_words(exc.format_message())


def _command_path(ctx) -> str:
    """The command as the learner types it (`kata start`), whatever name the program ran under."""
    if ctx is None:
        return "kata"
    return " ".join(["kata", *ctx.command_path.split()[1:]])


def _click_exceptions():
    """Click's exception classes (Typer vendors its own Click; older Typers use click itself)."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - a Typer that does not vendor Click
        from click import exceptions
    return exceptions


app = KataTyper(
    help="Timed, auto-graded coding katas for LLM-inference-infrastructure interviews.",
    cls=KataGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"kata {version('kata-workbook')}")
        except PackageNotFoundError:  # pragma: no cover - run from a tree that was never installed
            typer.echo("kata (not installed)")
        raise typer.Exit()


@app.callback()
def main(
    workbook: Path | None = typer.Option(
        None, "--workbook", envvar="KATA_WORKBOOK",
        help="A workbook folder (katas/, solutions/, graders/, exams/) to use instead of this one.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print kata's version and exit."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v",
        help="Show the grading harness's decisions (sandbox, restarts, timeouts, budgets) on stderr.",
    ),
) -> None:
    """Timed, auto-graded coding katas for LLM-inference-infrastructure interviews.

    Start with `kata start` (the 90-minute, four-question assessment) or `kata start SLUG`.
    """
    _state["workbook"] = workbook
    _state["settled"] = False
    _state["layout_told"] = False
    if verbose:
        from kata.output import log_to_stderr

        log_to_stderr()


# --- plumbing ---------------------------------------------------------------


def usage_error(message: str) -> None:
    """One `error:` line on stderr (see kata.output.error)."""
    from kata.output import error

    error(message)


def say(text: str, markup: bool = False, err: bool = False, indent: int | None = None) -> None:
    """Prose on the screen, wrapped at spaces, never inside a word (see kata.output.say)."""
    from kata.output import say as write

    write(text, markup=markup, err=err, indent=indent)


def fail(message: str, code: int = 2) -> NoReturn:
    usage_error(message)
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
            said = " ".join(str(exc).split())  # sqlite's own message may hold a newline
            fail(f"{_store_path()}: the store is damaged ({said}): run `kata doctor` to move it aside "
                 "and rebuild what can be read (your workspace/ is never touched)")
        except KeyboardInterrupt:
            fail("interrupted", 130)
        finally:
            from kata.session import close_stores

            close_stores()  # one store connection per command, closed

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
    if wb.old_layout and not _state.get("layout_told"):
        _state["layout_told"] = True
        say(f"note: this workbook holds the whole catalog (an earlier kata init): `kata init "
            f"--upgrade {_upgrade_arg(wb.root)}` moves it to the learner's layout, keeping your "
            "sessions and workspace/", err=True)
    if settle and not _state.get("settled"):
        _state["settled"] = True
        _settle(wb)
    return wb


def _upgrade_arg(root: Path) -> str:
    """The workbook as `kata init --upgrade` takes it: '.' from its root, else its path."""
    import shlex

    try:
        return "." if Path.cwd().resolve() == root else shlex.quote(str(root))
    except OSError:
        return shlex.quote(str(root))


def instructor_only(wb, command: str) -> None:
    """Refuse an author's or grader's command in a learner's workbook (it holds no catalog)."""
    if wb.learner:
        fail(f"`kata {command}` works on a catalog: in a learner's workbook the katas are the "
             "installed ones; make an instructor's workbook with `kata init --instructor DIR`")


@contextlib.contextmanager
def grading_progress(quiet: bool, what: str):
    """Progress of a grading run on stderr, from the harness's own counts (kata.output.long_run:
    on a terminal a bar per kata with the tests done / total, the current level and the time
    taken; otherwise one line per kata; nothing at all for --json). Yields a factory: kata ->
    on_progress callback (kata.grading's on_progress(done, total, level))."""
    from kata.output import long_run

    if quiet:
        yield None
        return
    with long_run() as run:
        def factory(kata):
            update = run.task(f"{kata.slug} ({what}): starting", unit="tests",
                              announce=f"grading {kata.slug} ({what})...")

            def on_progress(done, total, level):
                where = f", level {level}" if level is not None else ""
                update(done, total, f"{kata.slug} ({what}){where}")

            return on_progress

        yield factory


def _clock_before_grading(wb, katas, as_json: bool) -> bool:
    """`kata check` and `kata submit` piped: the clock line first, as every in-session command
    prints it (on a terminal it heads the paged report instead: _paged_report). Whether printed."""
    first = not as_json and not _interactive()
    if first:
        clock_line(wb, katas[0].slug if len(katas) == 1 else None)
    return first


@contextlib.contextmanager
def _paged_report(wb, katas, clock_shown: bool):
    """A grading report, paged on a terminal, the clock line on top of it (never scrolled off
    above the pager) unless _clock_before_grading printed it already."""
    from kata.output import paged

    with paged():
        if not clock_shown:
            clock_line(wb, katas[0].slug if len(katas) == 1 else None)
        yield


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
    say(f"[bold]Session {s.id}[/] ({s.name}{where}): {clock(remaining)} left{warn}", markup=True)


def _settle(wb) -> None:
    import sqlite3

    from kata import session
    from kata.output import say as write
    from kata.store import StoreError

    if not (wb.kata_dir / "kata.db").exists():
        return
    try:
        with grading_progress(False, "auto-submit") as progress:
            def announce(kata):  # before each grading: the clock ran out, this is why we wait
                say(f"The clock ran out: auto-submitting {kata.slug}, the last version saved "
                    "before the deadline...", err=True)
                return progress(kata)

            settled = session.settle(wb, announce)
    except (StoreError, sqlite3.DatabaseError):
        return  # a damaged store: the command itself reports it (and `kata doctor` mends it)
    for sid in dict.fromkeys(a.session.id for a in settled):
        mine = [a for a in settled if a.session.id == sid]
        say(f"Session {sid} ({mine[0].session.name}) ran out at its deadline:", err=True)
        for a in mine:
            for line in a.lines():  # a wrapped line continues under the slug's text
                write(f"  {line}", err=True, markup=False, indent=4)
        say(f"`kata review {sid}` shows the session.", err=True)


def _interactive() -> bool:
    """Both ends on a terminal: a person who can answer a question."""
    import sys

    return sys.stdin.isatty() and sys.stdout.isatty()


JSON_VERSION = 2  # the shape of every --json output (docs/FORMATS.md); bumped on a breaking change


def emit_json(data: dict) -> None:
    """Every --json output is one object whose first field is `version` (docs/FORMATS.md)."""
    import json

    typer.echo(json.dumps({"version": JSON_VERSION, **data}, indent=2, default=str))


def out():
    from kata.views import console

    return console()


def _rel(wb, path: Path) -> str:
    """A path as the user can type it from here: relative to the current folder when under it,
    else absolute (a state folder elsewhere, KATA_STATE_DIR, is named in full)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


# --- a workbook of your own --------------------------------------------------


@app.command()
@handled
def init(
    directory: Path = typer.Argument(..., help="A new (or empty) folder for the workbook."),
    instructor: bool = typer.Option(False, "--instructor",
                                    help="The whole catalog (katas, hidden suites, references), to author and grade."),
    upgrade: bool = typer.Option(False, "--upgrade",
                                 help="Move DIRECTORY, made by an earlier kata init, to the learner's layout; sessions stay."),
) -> None:
    """Make a workbook folder to practise in: your code and sessions; the katas, their hidden
    suites and references stay in the installed kata."""
    from kata.init import init_workbook, upgrade_workbook

    if instructor and upgrade:
        fail("give --instructor or --upgrade, not both")
    if upgrade:
        folder, moved = upgrade_workbook(directory)
        say(f"Moved {folder} to the learner's layout: your workspace/ and sessions stay; the "
            f"catalog it held went to {_rel_to(folder, moved)}.")
        return
    target = init_workbook(directory, instructor=instructor)
    kind = "an instructor's workbook" if instructor else "a workbook"
    say(f"Made {kind} in {target}.")
    say(f"Next: cd {directory} && kata start")


def _rel_to(base: Path, path: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


# --- browsing ---------------------------------------------------------------


@app.command("list")
@handled
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the katas and exams, with your best score so far."""
    from kata.session import best_scores, series_name

    wb = workbook()
    katas, exams = wb.katas(), wb.exams()
    best = best_scores(wb)
    if as_json:
        emit_json({
            "katas": [{"slug": k.slug, "title": k.title, "difficulty": k.difficulty,
                       "minutes": k.minutes, "levels": len(k.levels), "points": k.points,
                       "tags": list(k.tags), "best": best.get(k.slug, (None,))[0]} for k in katas],
            "exams": [{"name": e.name, "title": e.title, "minutes": e.minutes,
                       "katas": list(e.katas), "series": series_name(e.name)} for e in exams],
        })
        return
    from kata.output import paged

    with paged():  # a row per kata and per exam: taller than a screen
        _print_catalog(wb, katas, exams, best)


def _print_catalog(wb, katas, exams, best) -> None:
    """`kata list`'s tables: the katas, then the exams (a series together), the default marked."""
    from rich.table import Table

    from kata.session import exam_series

    # on a narrow screen (80 columns) short headers leave the titles room, and the exams' titles
    # (which `kata start` shows) give theirs to the questions, so a row wraps less
    narrow = out().width < 100
    table = Table(title="Katas", title_justify="left", show_edge=False)
    # slugs are typed back: never cut or wrapped (the titles wrap instead)
    table.add_column("slug", no_wrap=True, min_width=max((len(k.slug) for k in katas), default=4))
    table.add_column("title", ratio=1)
    for col in (("diff.", "min", "lv", "best") if narrow else ("difficulty", "min", "levels", "best")):
        table.add_column(col, no_wrap=True)
    for k in katas:
        b = best.get(k.slug)
        table.add_row(k.slug, k.title, k.difficulty, str(k.minutes), str(len(k.levels)),
                      f"{b[0]:g}/{k.points}" if b else "-")
    out().print(table)
    table = Table(title="Exams", title_justify="left", show_edge=False)
    table.add_column("name", no_wrap=True, min_width=max((len(e.name) + 2 for e in exams), default=4))
    if not narrow:
        table.add_column("title", ratio=1)
    table.add_column("min", no_wrap=True)
    table.add_column("questions", ratio=2)
    from kata.catalog import DEFAULT_EXAM

    for members in exam_series(exams):  # a series (llm-infra-oa, -2, -3) stays together
        if len(members) > 1 and table.row_count:
            table.add_section()
        for e in members:
            questions = ", ".join(f"{q.kata} L{q.levels[0]}" + (f"-{q.levels[-1]}" if len(q.levels) > 1 else "")
                                  for q in e.questions)
            name = e.name + (" *" if e.name == DEFAULT_EXAM else "")
            table.add_row(*((name, str(e.minutes), questions) if narrow
                            else (name, e.title, str(e.minutes), questions)))
        if len(members) > 1:
            table.add_section()
    out().print(table)
    if DEFAULT_EXAM in wb.exam_names():
        say(f"* the default: `kata start` with no name starts {DEFAULT_EXAM}.", markup=False)


@app.command()
@handled
def show(
    slug: str | None = typer.Argument(None, help="The kata (default: the live session's only one).",
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
    from kata.output import paged
    from kata.views import print_markdown

    with paged():
        clock_line(wb, kata.slug)
        print_markdown(markdown)


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
        from kata.formats import redacted, write_junit

        # during a session the file shows what this command shows: levels and pass/fail only
        write_junit([(g.kata, redacted(g.result) if g.session is not None else g.result) for g in graded],
                    junit_xml, rich=junit_rich)
    if as_json:
        rows = []
        for g in graded:
            from kata.kinds import part_view

            data = {"kata": g.kata.slug, **g.result.to_json(), "part": part_view(g.result),
                    "levels_graded": g.levels, "levels_opened": g.opened}
            if g.session is not None:  # during a session: levels and pass/fail only
                practice = g.session.kind == "kata"  # feedback by property: a missed test's edge text
                data["tests"] = [{"name": hidden_name(i), "status": t["status"], "task_id": t["task_id"],
                                  **({"edge": t["edge"]} if practice and t["status"] != PASS else {})}
                                 for i, t in enumerate(data["tests"], 1)]
            rows.append(data)
        emit_json({"results": rows})
    else:
        with _paged_report(wb, katas, clock_first):
            _print_submitted(graded, level_table, test_lines)
    if any(g.result.status != PASS for g in graded):
        raise typer.Exit(1)


def _missed_properties(result) -> None:
    """A practice session's feedback by property: the edge text of each hidden test missed ("a
    total exactly equal to the budget fits"), never its name, input, call or message. A mock exam
    shows counts only, as the real round does."""
    from kata.results import missed_edges

    missed = missed_edges(result)
    if not missed:
        return
    tests = sum(n for _, _, n in missed)
    say(f"Missed ({tests}), by what each hidden test checks:", markup=False)
    for level, edge, n in missed[:10]:  # a wrapped line continues under the text, not the level
        say(f"  L{level} {edge}" + (f" ({n} tests)" if n > 1 else ""), markup=False, indent=5)
    if len(missed) > 10:
        say(f"  ... and {len(missed) - 10} more (all of them in `kata review` after the session)",
            markup=False, indent=4)


def _question_share(g) -> str:
    return g.question_share(workbook(settle=False))


def _print_submitted(graded, level_table, test_lines) -> None:
    from kata.views import timeouts

    for g in graded:
        out().print(level_table(g.result, f"{g.kata.slug}: hidden suite"))
        if g.result.message:
            say(f"  {g.result.message}", markup=False)
        timeouts(g.result)
        from kata.kinds import part_view

        for line in (part_view(g.result) or {}).get("lines", []):
            say(line, markup=False)
        if g.session is None:
            test_lines(g.result, reveal=True)
            from kata.session import live_session

            live = live_session(workbook(settle=False))
            why = "no live session" if live is None else f"session {live.id} does not hold it"
            say(f"Practice ({why}): every hidden test is shown; the code is kept as a "
                f"snapshot (`kata snapshots {g.kata.slug}`) and counts for no session.")
            continue
        if g.session.kind == "kata":  # practice: what each missed test is about, never its input
            _missed_properties(g.result)
        say(f"Recorded for session {g.session.id}{_question_share(g)}. Details open after the "
            "session (`kata finish`, then `kata review`).")
        for lv in g.opened:
            say(f"[bold]Level {lv} is open:[/] `kata show {g.kata.slug}` shows it; "
                f"`kata check {g.kata.slug}` runs its examples.", markup=True)


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
                "auto_submitted": bool(q.submission and q.submission.auto),
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


@full_only()
@handled
def validate(
    slug: str | None = typer.Argument(None, help="The kata to validate."),
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
    instructor_only(wb, "validate")
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
            say(f"[bold]{r.slug}[/]: {'[green]OK[/]' if r.ok else '[red]FAILED[/]'} "
                f"({r.hidden_tests} hidden tests, {r.bugs} bugs{runtime})", markup=True)
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
            say(f"{slug}: mutation testing the reference (this takes a while)...", err=True)
        reports.append(run_mutants(wb.kata(slug), workers))
    if as_json:
        emit_json({"katas": [r.to_json() for r in reports]})
        return
    con = out()
    for r in reports:
        score = "n/a" if r.score is None else f"{r.score:.1%}"
        say(f"[bold]{r.slug}[/]: mutation score {score} ({r.count('killed')} killed of "
            f"{r.scored}; {r.count('survived')} survived, {r.count('no tests')} with no test, "
            f"{r.count('equivalent')} marked equivalent)", markup=True)
        for m in r.mutants:
            if m.status == "survived":
                con.rule(f"survived: {m.name}", align="left")
                con.print(m.diff, markup=False)
        for note in r.stale_marks:
            say(f"[yellow]stale mark in kata.toml:[/] {note}", markup=True)
    if any(r.count("survived") for r in reports):
        say("Mark a mutant that cannot be caught in kata.toml: "
            "[[equivalent_mutants]] name = \"...\" reason = \"...\"")


# --- instructors ------------------------------------------------------------


@full_only()
@handled
def new(
    slug: str = typer.Argument(..., help="The new kata's slug, e.g. token-budget."),
    title: str | None = typer.Option(None, "--title", help="Its title."),
) -> None:
    """Scaffold a new kata (prompt, stub, visible tests, reference, hidden suite, a bug)."""
    from kata.scaffold import new_kata

    wb = workbook()
    instructor_only(wb, "new")
    files = new_kata(wb, slug, title)
    say(f"Created kata '{slug}' from a small worked example:")
    for f in files:
        say(f"  {_rel(wb, f)}")
    say(f"Check it is valid as it stands: kata validate {slug}. Then make it yours; "
        "see AUTHORING.md.")


@full_only()
@handled
def bundle(
    student: Path = typer.Option(..., "--student", help="Folder to write the student bundle to (new or empty)."),
) -> None:
    """Write a student bundle: prompts, stubs and visible tests; no solutions, no hidden tests."""
    from kata.cohort import student_bundle

    wb = workbook()
    instructor_only(wb, "bundle")
    files = student_bundle(wb, student)
    say(f"Wrote a student bundle of {len(files)} files to {student}: prompts, stubs, visible "
        "tests and the CLI; no reference solutions and no hidden tests (checked file by file).")
    say(f"Students run: cd {student} && python3 -m venv .venv && .venv/bin/pip install -e . "
        "&& .venv/bin/kata start")


@full_only()
@handled
def regrade(
    session_id: int | None = typer.Argument(None, metavar="SESSION",
                                               help="The session to regrade (default: the last ended one)."),
    batch: Path | None = typer.Option(None, "--batch", metavar="GRADEBOOK",
                                         help="Regrade a grade-batch from its gradebook.json instead."),
    out_dir: Path = typer.Option(Path("gradebook-regraded"), "--out",
                                 help="With --batch: where to write the new gradebook."),
) -> None:
    """Grade recorded submissions again on today's hidden suites, keeping the old results beside
    the new (a session's, or with --batch a grade-batch's)."""
    from kata import session
    from kata.cohort import write_gradebook
    from kata.cohort import regrade_batch
    from kata.session import regrade_session

    wb = workbook()
    if batch is not None:
        if session_id is not None:
            fail("give a SESSION or --batch GRADEBOOK, not both")
        book = regrade_batch(wb, batch)
        json_path, _ = write_gradebook(book, out_dir)
        changed = [r for r in book["rows"] if r.get("previous") and
                   r["previous"]["points_earned"] != r["points_earned"]]
        say(f"Regraded {len(book['students'])} students on today's suites: {_rel(wb, json_path)}; "
                    f"{len(changed)} score(s) changed")
        for r in changed:
            say(f"  {r['student']} {r['kata']}: {r['previous']['points_earned']:g} -> "
                        f"{r['points_earned']:g}")
        _error_rows(book)
        return
    if session_id is None:
        last = session.open_store(wb).last_ended_session(session.now())
        if last is None:
            fail("no ended session to regrade: see `kata history`")
        session_id = last.id
    with grading_progress(False, "hidden suite") as progress:
        done = regrade_session(wb, session_id, progress)
    if not done:
        say(f"Session {session_id}: every submission was graded on today's suites already.")
        return
    say(f"Session {session_id}: {len(done)} submission(s) regraded on today's suites "
                "(the old results are kept):")
    for d in done:
        say(f"  {d.slug}: {d.before.points_earned:g} (suite {d.before.suite_version or 'unrecorded'}) -> "
                    f"{d.after.points_earned:g} (suite {d.after.suite_version})")


@full_only()
@handled
def runner(
    slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug),
    input_dir: Path = typer.Argument(..., help="A folder holding the solution file (the kata's module)."),
    output_dir: Path = typer.Argument(..., help="Where to write results.json (made if missing)."),
) -> None:
    """Exercism's test-runner interface: grade INPUT_DIR's solution on the hidden suite and write
    OUTPUT_DIR/results.json (version 3); exits 0 whatever the tests say (refused while a live
    session contains the kata)."""
    import json
    import os

    from kata.catalog import CatalogError, Workbook
    from kata.cohort import open_folder_inside, read_inside, write_inside
    from kata.formats import exercism_results
    from kata.grading import grade

    from kata import session

    wb = Workbook.find(_state["workbook"])
    kata = wb.kata(slug)
    # a store only where one exists: a runner in a read-only container creates none
    live = session.live_session(wb) if (wb.kata_dir / "kata.db").is_file() else None
    if live is not None and slug in live.katas:  # its results name and quote every hidden test
        fail(f"session {live.id} containing '{slug}' is live: `kata finish` it first")
    if not input_dir.is_dir():
        fail(f"INPUT_DIR {input_dir}: not a folder: give the folder that holds {kata.module}")
    # INPUT_DIR is the harness's; what lies inside it is the submission's: no link in it is followed
    given, real = Path(os.path.abspath(input_dir)), input_dir.resolve()
    target = Path(os.path.abspath(output_dir))
    if ".." in output_dir.parts:
        fail(f"OUTPUT_DIR {output_dir}: has a '..' in it: give the folder's path without one")
    try:
        for base in (given, real):  # OUTPUT_DIR inside the submission: every folder on the way checked
            if target == base or base in target.parents:
                folder = open_folder_inside(real, list(target.relative_to(base).parts), create=True,
                                            advice="give a real folder as OUTPUT_DIR")
                break
        else:
            output_dir.mkdir(parents=True, exist_ok=True)
            folder = os.open(output_dir, os.O_RDONLY | os.O_DIRECTORY)
    except CatalogError as exc:
        fail(f"OUTPUT_DIR {output_dir}: {exc}")
    except OSError as exc:
        fail(f"OUTPUT_DIR {output_dir}: cannot write results.json ({exc.strerror})")
    try:
        code: str | None = read_inside(real, kata.module)
        reason = None
    except FileNotFoundError:
        code, reason = None, f"{kata.module} not found in the submission: name the solution file {kata.module}"
    except CatalogError as exc:
        code, reason = None, str(exc)
    except OSError as exc:
        code, reason = None, f"{kata.module}: cannot be read ({exc.strerror})"
    try:
        if code is not None:
            results = exercism_results(kata, grade(kata, input_dir / kata.module, "hidden", code=code))
        else:
            results = {"version": 3, "status": ERROR, "tests": [], "message": reason}
        try:  # a new file renamed over results.json: a link a submission planted there is replaced
            write_inside(folder, "results.json", json.dumps(results, indent=2) + "\n")
        except OSError as exc:
            fail(f"OUTPUT_DIR {output_dir}: cannot write results.json ({exc.strerror})")
    finally:
        os.close(folder)


def _error_rows(book: dict) -> None:
    """A gradebook's error rows, each with its one-line reason: a refused file (a link, a FIFO, a
    file moved or changed since the batch) or code that could not run."""
    from kata.output import say as write

    errors = [row for row in book["rows"] if row["status"] == ERROR]
    if errors:
        say(f"Errors (0 points): {len(errors)} row(s)")
        for row in errors:  # a wrapped reason continues under the row's text
            write(f"  {row['student']} {row['kata']}: {row['message']}", markup=False, indent=4)


@full_only("grade-batch")
@handled
def grade_batch(
    submissions: Path = typer.Argument(..., help="SUBMISSIONS/<student>/<module>.py for each student."),
    out_dir: Path = typer.Option(Path("gradebook"), "--out", help="Where to write gradebook.json and .csv."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Gradings at once (default: the number of cores)."),
    shard: str | None = typer.Option(None, "--shard", help="Grade only slice K of N, e.g. 2/4."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.5, help="Seconds one hidden test may run."),
    junit_xml: Path | None = typer.Option(None, "--junit-xml", metavar="PATH",
                                             help="Also write JUnit XML (a suite per student and kata)."),
    junit_rich: bool = typer.Option(False, "--junit-rich",
                                    help="With --junit-xml: add file/line attributes and per-test properties."),
    require_sandbox: bool = typer.Option(False, "--require-sandbox",
                                         help="Refuse to start unless grading runs in the sandbox."),
    allow_unsandboxed: bool = typer.Option(
        False, "--allow-unsandboxed",
        help="Grade even where the sandbox cannot run (one student's code could then change a "
             "classmate's run; the gradebook says so)."),
    reference_in_process: bool = typer.Option(
        False, "--reference-in-process",
        help="Time each reference beside the student's code in the same process, as `kata "
             "submit` does, instead of once in its own child (student code could then read it)."),
) -> None:
    """Grade a cohort's submissions on the hidden suites, in parallel, into a gradebook.

    Every submission is read before the first student's code runs; the gradebook is rewritten as
    each student finishes, so Ctrl-C keeps every finished row. Refused where the sandbox cannot
    run, unless --allow-unsandboxed."""
    import os

    from rich.progress import Progress

    from kata import cgroups, sandbox
    from kata.cohort import batch_limits, discover, grade_batch as run, parse_shard, write_gradebook

    wb = workbook()
    instructor_only(wb, "grade-batch")
    if require_sandbox and not sandbox.available():
        fail(f"--require-sandbox: {sandbox.status_line()}")
    if not allow_unsandboxed and not sandbox.available():
        fail(f"{sandbox.status_line()}: in a batch, one student's code could then change a "
             "classmate's run: install bubblewrap, or pass --allow-unsandboxed to grade anyway "
             "(the gradebook says so)")
    k, n = parse_shard(shard)
    submissions = submissions.expanduser().resolve()  # relative to here, not to the workbook
    students = discover(wb, submissions)  # a mistake in the arguments is the one line printed
    say(sandbox.status_line().capitalize() + ".", markup=False, err=True)
    say(cgroups.status_line() + ".", markup=False, err=True)
    total = sum(1 for i, _ in enumerate(students) if i % n == k - 1) * len(wb.slugs())
    results: list = []  # (student, slug, SuiteResult), for --junit-xml
    try:
        with Progress(console=out(), transient=True) as progress:
            task = progress.add_task("grading", total=total)
            book = run(wb, submissions, workers or os.cpu_count() or 1, shard,
                       on_done=lambda row: progress.advance(task), out=out_dir,
                       limits=batch_limits(timeout), reference_apart=not reference_in_process,
                       on_result=lambda student, slug, result: results.append((student, slug, result)))
    except KeyboardInterrupt:
        fail(f"interrupted: every finished student's row is in {out_dir / 'gradebook.csv'}; "
             "run the command again to grade them all", code=130)
    json_path, csv_path = write_gradebook(book, out_dir)
    if junit_xml is not None:
        from kata.formats import write_junit

        results.sort(key=lambda item: (item[0], item[1]))
        write_junit([(wb.kata(slug), result) for _, slug, result in results], junit_xml,
                    names=[f"{student}/{slug}" for student, slug, _ in results], rich=junit_rich)
    _batch_summary(wb, book, json_path, csv_path)


def _batch_summary(wb, book: dict, json_path: Path, csv_path: Path) -> None:
    """What grade-batch prints once the gradebook is written: where, what it could not promise,
    who handed nothing in, the error rows, the hidden tests most students failed."""
    say(f"Graded {len(book['students'])} students x {len(book['katas'])} katas "
        f"(shard {book['shard']}): {_rel(wb, json_path)}, {_rel(wb, csv_path)}", markup=True)
    if not book["sandboxed"]:
        say("Not sandboxed: one student's code could have changed a classmate's run "
            "(gradebook.json says \"sandboxed\": false).", markup=False)
    if book["reference"] == "in-process":
        say("References timed in the students' processes: their code could read them "
            "(gradebook.json says \"reference\": \"in-process\").", markup=False)
    missing: dict[str, list[str]] = {}
    for row in book["rows"]:
        if row["status"] == "missing":
            missing.setdefault(row["student"], []).append(row["kata"])
    if missing:
        say(f"Missing (no file handed in, 0 points): {len(missing)} student(s)", markup=True)
        for student, slugs in sorted(missing.items()):
            say(f"  {student}: {', '.join(slugs)}", markup=False)
    _error_rows(book)
    if book["most_failed"]:
        say("Hidden tests most students failed:", markup=True)
        for item in book["most_failed"][:5]:
            say(f"  {item['students_failed']:>3}  {item['test']}", markup=False)


gradebook_app = KataTyper(help="Work with gradebooks written by grade-batch.", no_args_is_help=True)
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
    say(f"Merged {len(files)} gradebooks ({len(book['students'])} students): {json_path}, {csv_path}")
    if book["mixed_suite_versions"]:
        say("note: these scores come from different versions of a hidden suite (suite_versions in "
            "the JSON): `kata regrade --batch` grades them all on today's")


# One line each in `kata -h` (a command's help opens with more than fits beside its name at 80
# columns: without these, each line would end cut short in "...").
SHORT_HELP = {
    "init": "Make a workbook folder to practise in.",
    "show": "Show a kata's prompt (in a session: the levels open so far).",
    "start": "Start a timed session: an exam, or one kata on its own.",
    "hunt": "Review an assistant's code: pin its bug with a test, fix it.",
    "check": "Run the visible tests on your workspace file.",
    "submit": "Grade your workspace file on the hidden suite; record it.",
    "watch": "Run the visible tests on every save, the clock on screen.",
    "review": "After a session: the score per level and each hidden test.",
    "progress": "Your best score per kata, session by session.",
    "snapshots": "List every saved version of your file for a kata.",
    "restore": "Put snapshot N back as your workspace file.",
    "doctor": "Check the store in .kata/ and repair it if it is damaged.",
    "solution": "Show the reference solution (not during a session).",
    "validate": "Check katas: reference passes, stub fails, bugs caught.",
    "new": "Scaffold a new kata: prompt, stub, tests, reference.",
    "bundle": "Write a student bundle: no solutions, no hidden tests.",
    "regrade": "Grade recorded submissions again on today's hidden suites.",
    "runner": "Exercism's test-runner interface (results.json, v3).",
    "grade-batch": "Grade a cohort's submissions into a gradebook.",
}
for _info in app.registered_commands:
    _name = _info.name or (_info.callback.__name__.replace("_", "-") if _info.callback else "")
    if _name in SHORT_HELP:
        _info.short_help = SHORT_HELP[_name]

# kata.judges.cli imports only typer at its top level (numpy and the engine load inside its commands)
from kata.judges.cli import engine_app  # noqa: E402

app.add_typer(engine_app, name="engine", help="Run the reference inference engine.")

if __name__ == "__main__":  # pragma: no cover
    app()
