"""The command line's common part: the app every command module registers on, the global
options (`main`), and the plumbing the commands share: the workbook (settled first), one-line
errors (`fail`, `handled`), prose (`say`), JSON (`emit_json`), the clock line, grading progress
and the pager around a report. It imports no command module: they import it.

Exit codes: 0 success, 1 a check that failed (tests failing, validation failing),
2 a usage or input error: one line on stderr starting with "error:", for Click's own errors too
(KataGroup), so a command added in any module gets it for free. What is printed goes through
kata.output (prose wrapped at spaces, code never re-wrapped, the pager only when it helps).

Heavy imports (pytest, hypothesis, numpy, rich) happen inside the functions that need them, so
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

# A student bundle (`kata bundle`) installs this very package with a marker beside it: there the
# commands that need hidden suites or reference solutions (submit, solution and the instructor
# workflow) are not registered at all, so they are neither in --help nor callable.
IN_BUNDLE = (Path(__file__).resolve().parents[2] / ".kata-student-bundle").is_file()


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
        help="A workbook folder (kata init made it, or one with katas/) to use instead of this one.",
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
