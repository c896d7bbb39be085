"""The one output layer of the command line: consoles, wrapping, errors and the pager.

Every command prints through here, so what a learner sees follows four rules:

- **Prose wraps at spaces, never inside a word.** `say("...")` fits the text to the screen; a single
  token wider than the screen (a path, a test's node id) stays whole on a line of its own, for the
  terminal to wrap, so it can still be copied and an editor can still jump to `file:line`.
- **Code is never re-wrapped.** `verbatim(text)` prints code line for line; `report(text)` prints a
  failure report whose code lines are cut at the screen's edge with `…` (file and line stand above
  them) and whose `E` lines wrap at spaces under their gutter.
- **An error is one `error:` line on stderr** (`error("...")`), wrapped like prose when the screen is
  narrow, its continuation indented under the message.
- **The pager runs only when it helps**: on a terminal, and only when the output is taller than the
  screen (`with paged(): ...`). It honours the user's PAGER and LESS; with LESS unset it runs
  `less -FRX` (as git does), so colour shows as colour, never as `ESC[1m`; a pager that cannot show
  colour gets plain text (as click's echo_via_pager does).

Width: the terminal's; piped, COLUMNS, else 80 (never the size of a terminal that stdin or stderr
is still on), and no line ends in spaces. KATA_PLAIN=1 (the tests' switch) or NO_COLOR: no colour;
KATA_PLAIN also leaves prose unwrapped unless COLUMNS is set (tables take COLUMNS or 100).

Example:
    say("Hint 1 of 3 for level 1: keep the arrivals in a heap ...")   # wrapped at 80 on a tty
    with paged():
        print_review(...)                                          # less -FRX, if taller
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys

from rich.console import Console
from rich.text import Text

PIPED_WIDTH = 80  # the width of output to a pipe or a file when COLUMNS is not set


class _Console(Console):
    """rich's Console, except that off a terminal no line ends in spaces: rich pads a paragraph,
    a centred heading or a table's last cell out to the full width, which a file or a pipe keeps."""

    def _render_buffer(self, buffer) -> str:
        rendered = super()._render_buffer(buffer)
        return rendered if self.is_terminal else _TRAILING_SPACES.sub(r"\1", rendered)


_TRAILING_SPACES = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n)")  # before a line's end (and its reset)

_consoles: dict[bool, Console] = {}  # stderr? -> its console


def console(err: bool = False) -> Console:
    """The console for stdout (or stderr), made once per process (tests reset it). Piped, it is
    COLUMNS wide, else PIPED_WIDTH: rich would otherwise take the size of a terminal that stdin
    or stderr is on (`kata show | less` drawn to that terminal's full width)."""
    if err not in _consoles:
        plain = bool(os.environ.get("KATA_PLAIN"))
        con = _Console(
            stderr=err,
            highlight=False,
            no_color=plain or None,
            width=int(os.environ.get("COLUMNS") or 100) if plain else None,
            force_terminal=False if plain else None,
            soft_wrap=False,
        )
        if not plain and not con.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
            con.width = PIPED_WIDTH
        _consoles[err] = con
    return _consoles[err]


def reset() -> None:
    """Forget the consoles (tests switch output streams and environment between invocations)."""
    _consoles.clear()


# --- wrapping ---------------------------------------------------------------------


def wrap(text: Text, width: int, indent: int | None = None) -> list[Text]:
    """`text` cut into lines of at most `width` cells at spaces. Each of its own lines keeps its
    start; the lines wrapping adds start `indent` spaces in (None: as many as that line's own
    leading spaces). A word wider than the room left stays whole on a line of its own.

    Example: wrap(Text("  aa bb cc"), 7) -> [Text("  aa bb"), Text("  cc")]
    """
    lines: list[Text] = []
    for para in text.split("\n", allow_blank=True):
        plain = para.plain
        pad = len(plain) - len(plain.lstrip(" ")) if indent is None else indent
        starts: list[int] = []  # offsets where a wrapped line begins (each at a word's first character)
        line_start, has_word = 0, False
        for start, end in _words(plain, width - pad):
            room = width - (pad if starts else 0)
            if has_word and end - line_start > room:
                starts.append(start)
                line_start = start
            has_word = True
        pieces = para.divide(starts) if starts else [para]
        for i, piece in enumerate(pieces):
            piece.rstrip()
            lines.append(Text(" " * pad) + piece if i else piece)
    return lines


# a number with its unit stays on one line: "15 min", "1 h 30 min", "2 s", "40 points"
_QUANTITY = (r"\d[\d,.]*\s(?:h|min|s|ms|points?|pts|tests?|GiB|MiB|GB|MB)\b"
             r"(?:\s\d+\s(?:min|s)\b)*[^\s`]*")


NBSP = "\u00a0"  # a space wrapping never breaks at: "marks of 3 sessions: ▃▅▇" stays whole
_WORD = r"[^ \t\n]+"  # a word: up to a breaking space (an NBSP is not one)


def _words(plain: str, room: int) -> list[tuple[int, int]]:
    """(start, end) of each unit wrapping keeps whole: a word, a number with its unit (`_QUANTITY`),
    or an inline code span with what follows it (`HUNT_VERDICT = "correct"`, `kata restore SLUG N`), so a command or an
    assignment is never cut across two lines. A span longer than `room` is cut at its spaces."""
    units = []
    for m in re.finditer(r"`[^`\n]+`[^\s`]*|" + _QUANTITY + r"|" + _WORD, plain):
        if m.group().startswith("`") and " " in m.group() and m.end() - m.start() > room:
            units += [(m.start() + w.start(), m.start() + w.end()) for w in re.finditer(r"\S+", m.group())]
        else:
            units.append((m.start(), m.end()))
    return units


def say(message, *, indent: int | None = None, markup: bool = True, err: bool = False,
        style: str | None = None) -> None:
    """Prose: wrapped to the screen at spaces, never inside a word. `indent`: continuation lines
    start that many spaces in (default: under the first line's own leading spaces)."""
    con = console(err)
    text = message if isinstance(message, Text) else (
        Text.from_markup(message, style=style or "") if markup else Text(message, style=style or ""))
    for line in wrap(text, prose_width(con), indent):
        if NBSP in line.plain:  # it kept its words together; on the screen it is a space
            line.plain = line.plain.replace(NBSP, " ")
        con.print(line, soft_wrap=True)


def prose_width(con: Console) -> int:
    """The width prose wraps to: the console's (the screen's; piped, COLUMNS or PIPED_WIDTH).
    Under KATA_PLAIN (the tests' switch) without COLUMNS: no wrapping, each message on one line."""
    if con.is_terminal or os.environ.get("COLUMNS") or not os.environ.get("KATA_PLAIN"):
        return max(20, con.width)
    return 1 << 30


def verbatim(text: str, *, err: bool = False, style: str | None = None) -> None:
    """Code or a traceback: every line as it is, never re-wrapped or cropped."""
    console(err).print(text, markup=False, highlight=False, soft_wrap=True, style=style)


_LOCATION = re.compile(r"^\s*\S+:\d+: ")  # pytest's "katas/x/test_visible.py:34: in test_y"
_EXPLAINED = re.compile(r"^(\s*)E(\s+)")  # pytest's explanation lines: "E   assert 3 == 2"


def report_lines(text: str, width: int) -> list[Text]:
    """A failure report (pytest's short traceback) fitted to a screen `width` cells wide, never
    broken inside a path or a line of code: a line that fits stays as it is; a location line
    (`path:line: in name`) stays whole however long (the terminal wraps it, so it can still be
    copied); an explanation line (`E   ...`, pytest's words and values) wraps at spaces, each
    continuation under its text with the `E` gutter kept; a line of code is cut at the edge with
    `…` (its file and line stand whole above it).

    Example: report_lines("E   assert [1, 2] == [1, 3]", 18)
        -> ["E   assert [1, 2]", "E   == [1, 3]"]
    """
    from rich.cells import cell_len

    out: list[Text] = []
    for line in text.splitlines():
        if cell_len(line) <= width:
            out.append(Text(line))
            continue
        where = _LOCATION.match(line)
        if where:  # "path:12:" whole on its line, "in test_name" under it
            pad = len(line) - len(line.lstrip(" "))
            out += [Text(line[:where.end() - 1]), Text(" " * (pad + 4) + line[where.end():])]
            continue
        explained = _EXPLAINED.match(line)
        if explained is None:
            cut = Text(line)
            cut.truncate(width, overflow="ellipsis")
            out.append(cut)
            continue
        pad, gutter = len(explained.group(1)), explained.end()
        for i, piece in enumerate(wrap(Text(line), width, indent=gutter)):
            plain = piece.plain
            out.append(Text(plain if i == 0 else plain[:pad] + "E" + plain[pad + 1:]))
    return out


def report(text: str, *, err: bool = False, style: str | None = None) -> None:
    """A failure report, fitted to the screen by `report_lines` (to `prose_width`)."""
    con = console(err)
    for line in report_lines(text, prose_width(con)):
        con.print(line, soft_wrap=True, style=style or "", markup=False, highlight=False)


def error(message: str) -> None:
    """A usage or input error: one `error:` line on stderr (continuation indented under it)."""
    say(Text("error: " + message), indent=7, err=True)


# --- long runs ------------------------------------------------------------------------

HEARTBEAT_S = 15.0  # off a terminal: a line on stderr this often while a long run goes on


class LongRun:
    """The one progress reporter for anything a learner waits on (a grading run, the
    auto-submit after a deadline, an engine trace): each piece of work is a task with a count.
    On a terminal, a transient bar on stderr per task: a spinner, what runs, the count and the
    time it has taken, redrawn several times a second, so a wait on one slow test (79/80 for
    half a minute) still shows the clock moving. Off a terminal, a line when a task starts (if
    `announce`) and one every HEARTBEAT_S seconds while it goes on; nothing at all if quiet.

        with long_run() as run:
            update = run.task("reference", total=100_000, unit="requests finished")
            update(41_203)           # -> "reference  ━━━━━━╸    41,203/100,000 requests finished  0:00:07"
    """

    def __init__(self, bar, quiet: bool, clock=None) -> None:
        import time

        self._bar, self._quiet, self._clock = bar, quiet, clock or time.monotonic

    def task(self, description: str, total: int | None = None, unit: str = "",
             announce: str | None = None):
        """A task; returns update(done, total=None, description=None). `announce`: the line
        printed when it starts off a terminal (None: none)."""
        if self._quiet:
            return lambda done, total=None, description=None: None
        if self._bar is not None:
            return self._bar_task(description, total, unit)
        if announce:
            say(announce, err=True)
        return self._line_task(description, total, unit)

    def _bar_task(self, description: str, total: int | None, unit: str):
        bar, known = self._bar, {"total": total}
        tid = bar.add_task(description, total=total, count=_count_text(0, total, unit))

        def update(done, total=None, description=None):
            if total is not None:
                known["total"] = total
            total = known["total"]
            fields = {"description": description} if description is not None else {}
            bar.update(tid, completed=min(done, total or done), total=total,
                       count=_count_text(done, total, unit), **fields)

        return update

    def _line_task(self, description: str, total: int | None, unit: str):
        now_of = self._clock
        state = {"description": description, "total": total, "started": now_of(), "last": now_of()}

        def update(done, total=None, description=None):
            state.update({k: v for k, v in (("description", description), ("total", total))
                          if v is not None})
            now = now_of()
            if now - state["last"] >= HEARTBEAT_S:
                state["last"] = now
                say(f"{state['description']}: {_count_text(done, state['total'], unit)}, "
                    f"{round(now - state['started'])} s so far...", err=True)

        return update


def _count_text(done: int, total: int | None, unit: str) -> str:
    """ "41,203/100,000 requests finished"; "" until the total is known (never "0/?")."""
    if not total:
        return ""
    return f"{done:,}/{total:,}" + (f" {unit}" if unit else "")


@contextlib.contextmanager
def long_run(quiet: bool = False, clock=None):
    """A LongRun for the block (see LongRun); the bar, on a terminal, is gone when it ends."""
    err = console(err=True)
    if quiet or not err.is_terminal:
        yield LongRun(None, quiet, clock)
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with keys_unechoed(), Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                   BarColumn(bar_width=20), TextColumn("{task.fields[count]}"),
                                   TimeElapsedColumn(), console=err, transient=True) as bar:
        yield LongRun(bar, quiet, clock)


# --- the pager ------------------------------------------------------------------------


def pager_command(environ) -> tuple[list[str], dict[str, str], bool] | None:
    """(argv, environment, shows colour) of the user's pager, or None for no pager.

    PAGER wins (empty or `cat`: no pager); else `less`, else `more`. For less, an unset LESS
    becomes "FRX" (quit if one screen, raw colour, keep the screen), as git sets it; a LESS or a
    PAGER line of the user's own is kept, and colour is sent only if its flags include R or r.
    Any other pager gets plain text.

    Example: pager_command({}) -> (["less"], {"LESS": "FRX"}, True)
    """
    cmd = environ.get("PAGER")
    if cmd is None:
        cmd = "less" if shutil.which("less") else "more" if shutil.which("more") else ""
    argv = shlex.split(cmd)
    if not argv or os.path.basename(argv[0]) == "cat":
        return None
    env = dict(environ)
    if os.path.basename(argv[0]) != "less":
        return argv, env, False
    if "LESS" not in environ:
        env["LESS"] = "FRX"
    flags = env["LESS"] + " " + " ".join(a for a in argv[1:] if a.startswith("-"))
    short = re.search(r"(^|\s)-?[A-Za-z]*[rR]", flags)  # -R, -r, FRX, -iMR
    return argv, env, bool(short or re.search(r"--raw-control-chars", flags, re.I))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def on_terminal() -> bool:
    """A person at a screen: stdin and stdout both terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


@contextlib.contextmanager
def keys_unechoed():
    """While a progress bar shows, keys typed are not echoed onto it (they still reach the shell
    afterwards, as type-ahead). Nothing changes without a terminal on stdin."""
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except Exception:  # noqa: BLE001 - no terminal (a pipe, a test runner): nothing to do
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~termios.ECHO  # lflag
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


@contextlib.contextmanager
def paged():
    """Collect what the block prints; on a terminal, page it when it is taller than the screen.
    Without a terminal (a pipe, a file, tests) the block prints straight through."""
    con = console()
    if not (on_terminal() and con.is_terminal):
        yield
        return
    captured = con.capture()
    captured.__enter__()
    try:
        yield
    finally:  # what was printed before an error is still shown
        captured.__exit__(None, None, None)
        page(captured.get(), con.size.height, con.size.width)


def screen_rows(text: str, width: int) -> int:
    """The rows `text` takes on a screen `width` cells wide: a line longer than the screen (a
    failure report's source line, say) wraps onto several.

    Example: screen_rows("ab\ncdefg\n", 4) -> 3"""
    from rich.cells import cell_len

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return sum(max(1, -(-cell_len(strip_ansi(line)) // max(1, width))) for line in lines)


def page(text: str, height: int, width: int = 1 << 30) -> None:
    """Show `text` through the pager if it takes more rows than the screen's `height` (lines
    wider than `width` count once per row they wrap onto), else print it."""
    found = pager_command(os.environ) if screen_rows(text, width) >= height - 1 else None
    if found is not None:
        argv, env, colour = found
        try:
            subprocess.run(argv, input=(text if colour else strip_ansi(text)).encode(),
                           env=env, check=False)
            return
        except OSError:  # a PAGER that does not run: print instead
            pass
        except KeyboardInterrupt:
            return
    sys.stdout.write(text)
    sys.stdout.flush()


def log_to_stderr() -> None:
    """`kata --verbose`: the harness's log lines on stderr, prefixed 'kata: ', written to
    sys.stderr as it is when each line is logged: while a progress bar is on screen, rich stands
    in for sys.stderr and prints each line above the bar, never through it."""
    import logging

    class CurrentStderr(logging.StreamHandler):
        @property  # type: ignore[override]
        def stream(self):
            return sys.stderr

        @stream.setter
        def stream(self, value) -> None:  # StreamHandler.__init__ sets it; the property wins
            pass

    handler = CurrentStderr()
    handler.setFormatter(logging.Formatter("kata: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
