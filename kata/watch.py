"""`kata watch`: re-run the visible tests of a question on every save, with the clock in view.

One event loop, as rustlings' watch: saves, keys, clock ticks, grading progress and grading done
all arrive as events on one queue, and the loop handles them one at a time:

    save      -> grade the saved question's visible tests (in a worker thread)
    key       -> s submit, h hint, n/p next/previous question, q quit
    tick      -> redraw the clock; when the session is over, auto-submit and stop
    progress  -> redraw "grading adder (hidden suite) 12/45"
    graded    -> show the result; a submit that opened a level re-runs that question's visible
                 tests, so no panel shows a state older than the level that opened

It runs the visible tests of every question at start. While a grading runs the clock keeps
ticking, the screen says "grading...", and keys typed meanwhile are dropped (`ss` submits once);
a save made meanwhile is graded right after.

On a terminal it draws one screen (rich Live) and reads single keys; without one it prints one
plain line per event and reads no keys (scripts and tests drive it so, and may put key events on
its queue). Every save it sees is snapshotted (the visible run records the file's text, as
`kata check` does). When the clock runs out, the last saved version of each file is
auto-submitted then and there (kata.session.settle), and it stops.

What it leaves out: it watches the workspace folder only, and grades one thing at a time.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kata import session as sessions
from kata.catalog import Kata, Workbook
from kata.results import PASS

TICK_S = 1.0


def _timeouts(result) -> str:
    """'; 12 tests timed out: an infinite loop?' for a status line, or ''."""
    from kata.results import timeout_line

    line = timeout_line(result)
    return f"; {line}" if line else ""


@dataclass
class Event:
    kind: str  # save | key | tick | progress | graded
    data: object = None


@dataclass
class Job:
    """A grading running in a worker thread: what the screen says, and what to do when done."""
    label: str  # "adder (hidden suite)"
    save: bool = False  # grading a save (counted for stop_after, even if it failed)
    done: int = 0
    total: int | None = None


@dataclass
class Watch:
    wb: Workbook
    katas: list[Kata]  # the questions, in order
    plain: bool = True
    stop_after: int | None = None  # stop after this many saves were graded (for scripts)
    current: int = 0  # index into katas
    message: str = ""  # the last action's outcome, shown under the table
    last: dict = field(default_factory=dict)  # slug -> the last visible SuiteResult
    handled: int = 0  # saves graded
    job: Job | None = None  # the grading running now, if any
    pending: list = field(default_factory=list)  # saves that arrived while a job ran
    events: queue.Queue[Event] = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)
    over: bool = False  # the session ended while watching: the screen says so, not "no live session"
    _worker: threading.Thread | None = field(default=None, repr=False)

    # --- the loop ------------------------------------------------------------------

    def run(self) -> None:
        """Watch until `q`, the end of the session, or `stop_after` saves."""
        self.wb.workspace.mkdir(parents=True, exist_ok=True)
        self.emit(f"watching {len(self.katas)} file(s) in workspace/: save to run the visible tests")
        live, reader = self._screen_start()
        threads = [threading.Thread(target=self._watch_files, daemon=True),
                   threading.Thread(target=self._tick, daemon=True)]
        for t in threads:
            t.start()
        try:
            self.start_job("visible tests of every question", self._check_all, self.katas)
            while not self.stop.is_set():
                try:
                    ev = self.events.get(timeout=TICK_S)
                except queue.Empty:
                    continue
                self.dispatch(ev)
                if live is not None:
                    live.update(self.render(), refresh=True)
        finally:
            self.stop.set()
            if reader is not None:
                reader.restore()
            if live is not None:
                live.update(self.render(), refresh=True)
                live.stop()
            if self._worker is not None:  # let a grading in flight record its result
                self._worker.join(timeout=120)

    def dispatch(self, ev: Event) -> None:
        getattr(self, "on_" + ev.kind)(ev.data)

    def drain(self, timeout: float = 60.0) -> None:
        """Handle queued events until no grading runs and none is left (headless use)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.dispatch(self.events.get(timeout=0.05))
            except queue.Empty:
                if self.job is None:
                    return

    # --- events --------------------------------------------------------------------

    def on_save(self, path: Path) -> None:
        kata = next((k for k in self.katas if self.wb.workspace_file(k) == Path(path)), None)
        if kata is None:
            return
        if self.job is not None:  # graded right after the job in flight
            if kata not in self.pending:
                self.pending.append(kata)
            return
        self.current = self.katas.index(kata)
        self.start_job(f"{kata.slug} (visible tests)", self._check_saved, kata, save=True)

    def on_deleted(self, path: Path) -> None:
        kata = next((k for k in self.katas if self.wb.workspace_file(k) == Path(path)), None)
        if kata is None or Path(path).exists():  # saved by renaming over it: a save follows
            return
        self.last.pop(kata.slug, None)
        self.say(f"{Path(path).name} was deleted: `kata restore {kata.slug} N` puts back saved "
                 f"version N (`kata snapshots {kata.slug}` lists them)")

    def on_key(self, key: str) -> None:
        if key == "q":  # quitting always works (a grading in flight still records its result)
            self.stop.set()
            return
        if self.job is not None:  # dropped: keys typed while grading never pile up
            return
        kata = self.katas[self.current]
        if key in ("n", "p"):
            self.current = (self.current + (1 if key == "n" else -1)) % len(self.katas)
            self.say(f"question {self.current + 1}: {self.katas[self.current].slug}")
        elif key == "s":
            self.start_job(f"{kata.slug} (hidden suite)", self._submit, kata)
        elif key == "h":
            h = sessions.next_hint(self.wb, kata)
            self.say(h.line() if h
                     else f"every hint of {kata.slug}'s open levels is shown already")

    def on_tick(self, _=None) -> None:
        """Once a second: when the session is over, settle it and stop."""
        if sessions.live_session(self.wb) is not None or self.job is not None:
            return
        said = []
        for a in sessions.settle(self.wb, self._announce):
            first, *evidence = a.lines()
            self.emit(f"the clock ran out; {first}")
            for line in evidence:  # what it went by, where the deadline keeper's record did not decide
                self.emit(line)
            said += a.lines()
        if not said:  # settled by another kata command meanwhile: say what it counted
            for line in self._counted():
                self.emit(line)
                said.append(line)
        self.over = True
        self.emit("the session is over: `kata review` shows what you missed")
        # the screen's last message (on a terminal): what the deadline did with each question
        self.message = "\n".join([*said, "`kata review` shows what you missed"])  # the top line says it is over
        self.stop.set()

    def _counted(self) -> list[str]:
        """What counts for each question of the session that just ended (it was settled by
        another command): its points, and whether the deadline auto-submitted them."""
        store = sessions.open_store(self.wb)
        ended = store.last_ended_session(sessions.now())
        if ended is None:
            return []
        lines = []
        for kata in self.katas:
            official = store.official_submission(ended, kata.slug)
            if official is None:
                lines.append(f"{kata.slug}: nothing counted (no submission, no saved work)")
            else:
                how = "auto-submitted at the deadline" if official.auto else "your best submission"
                lines.append(f"{kata.slug}: {official.points_earned:g}/{official.points_possible:g} "
                             f"points ({how})")
        return lines

    def on_progress(self, counts) -> None:
        if self.job is not None:
            self.job.done, self.job.total = counts

    def on_graded(self, then) -> None:
        """A job finished: `then()` applies its result (in this thread); then the saves that
        arrived meanwhile are graded."""
        if self.job is not None and self.job.save:
            self.handled += 1
        self.job = None
        then()
        if self.stop_after is not None and self.handled >= self.stop_after:
            self.stop.set()
            return
        if self.job is None and self.pending:
            self.on_save(self.wb.workspace_file(self.pending.pop(0)))

    # --- jobs (run in a worker thread; their results come back as a graded event) -----------

    def start_job(self, label: str, work, *args, save: bool = False) -> None:
        self.job = Job(label, save)
        self.emit(f"grading {label}...")

        def run():
            try:
                then = work(*args)
            except Exception as exc:  # noqa: BLE001 - a file mid-save, say: report, keep watching
                then = self._said(f"{label}: {exc}")
            self.events.put(Event("graded", then))

        self._worker = threading.Thread(target=run, daemon=True)
        self._worker.start()

    def _progress(self, kata):
        return lambda done, total, level: self.events.put(Event("progress", (min(done, total), total)))

    def _check_all(self, katas, before: str = ""):
        """The visible tests of `katas`; the message says `before` (what led here), then them."""
        results = [(k, sessions.check(self.wb, [k], self._progress)[0]) for k in katas
                   if self.wb.workspace_file(k).is_file()]

        def then():
            for k, graded in results:
                self.last[k.slug] = graded.result
            self.say(before + "visible tests: " + ", ".join(
                f"{k.slug} {g.result.passed}/{len(g.result.tests)}" for k, g in results))
        return then

    def _check_saved(self, kata):
        (graded,) = sessions.check(self.wb, [kata], self._progress)

        def then():
            self.last[kata.slug] = graded.result
            r = graded.result
            self.say(f"{kata.slug} saved: visible {r.passed}/{len(r.tests)} pass"
                     + _timeouts(r) + self.first_failure_line() + (f"; {graded.kind.check_summary(graded.check_note)}" if graded.check_note else ""))
        return then

    def _submit(self, kata):
        (graded,) = sessions.submit(self.wb, [kata], self._progress)

        def then():
            r = graded.result
            lv = graded.levels or []
            opened = f"; level {graded.opened[0]} is open" if graded.opened else ""
            share = graded.question_share(self.wb).replace(": ", "; ", 1)
            self.say(f"submitted {kata.slug}: {r.points_earned:g}/{r.points_possible:g} points on "
                     f"level{'s' if len(lv) > 1 else ''} {', '.join(map(str, lv))}{share}{opened}"
                     + _timeouts(r))
            if graded.opened:  # its visible tests changed: never show the old count
                self.last.pop(kata.slug, None)
                self.start_job(f"{kata.slug} (visible tests of level {graded.opened[0]})",
                               self._check_all, [kata], self.message + "; ")
        return then

    def _said(self, message: str):
        return lambda: self.say(message)

    def _announce(self, kata):
        self.emit(f"the clock ran out: auto-submitting {kata.slug}...")
        return None

    # --- background sources of events ----------------------------------------------

    def _watch_files(self) -> None:
        from watchfiles import Change, watch

        for changes in watch(self.wb.workspace, debounce=300, step=50, rust_timeout=500,
                             yield_on_timeout=True, stop_event=self.stop):
            for change, name in sorted(changes):
                kind = "deleted" if change == Change.deleted else "save"
                self.events.put(Event(kind, Path(name)))

    def _tick(self) -> None:
        while not self.stop.wait(TICK_S):
            self.events.put(Event("tick"))

    # --- output ------------------------------------------------------------------

    def say(self, message: str) -> None:
        self.message = message
        self.emit(message)

    def first_failure_line(self) -> str:
        r = self.last.get(self.katas[self.current].slug)
        failing = [t for t in r.tests if t.status != PASS] if r else []
        if not failing:
            return ""
        t = failing[0]
        return f"; first failure: {t.name.split('::')[-1]}: {t.message}"

    def emit(self, line: str) -> None:
        if self.plain:
            print(f"[{self.clock_text()}] {line}", flush=True)

    def clock_text(self) -> str:
        from kata.views import deadline_warning

        s = sessions.live_session(self.wb)
        if s is None:
            return "the session is over" if self.over else "no live session"
        remaining = s.remaining(sessions.now())
        warn = deadline_warning(remaining)
        return f"{_clock(remaining)} left" + (f", {warn}" if warn else "")

    def render(self):
        """The screen: clock (and the grading running), questions, the first failing test in
        full, the last message, the keys."""
        from rich.console import Group
        from rich.text import Text

        from kata.output import console, report_lines
        from kata.views import without_message

        top = Text(self.clock_text(), style="bold")
        parts = [top]
        if self.job is not None:  # a line of its own: beside the clock's warning it wrapped at 80
            count = f" {self.job.done}/{self.job.total}" if self.job.total else ""
            parts.append(Text(f"grading {self.job.label}...{count}", style="yellow"))
        if not self.over:  # no questions left to show once it is over
            parts.append(self._table())
        r = self.last.get(self.katas[self.current].slug)
        failing = [t for t in r.tests if t.status != PASS] if r and not self.over else []
        if failing:
            t = failing[0]
            detail = (t.detail or "").strip().splitlines()
            if t.message:  # said on the line above: not again as `E   AssertionError: ...`
                detail = without_message(detail, t.message)
            parts.append(Text(f"first failure: {t.name.split('::')[-1]}: {t.message or ''}"))
            fitted = report_lines("\n".join("  " + line for line in detail[-15:]), console().width)
            parts.append(Text("\n", style="dim").join(fitted))
        elif r and self.job is None and not self.over:  # over: nothing passes, `s` submits nothing
            parts.append(Text("every visible test passes: `s` submits", style="green"))
        if self.message:
            parts.append(Text(self.message))
        if not self.over:
            keys = ("keys paused while grading" if self.job is not None
                    else "keys: s submit  h hint  n/p next/previous question  q quit")
            parts.append(Text(keys, style="dim"))
        return Group(*parts)

    def _table(self):
        from rich.table import Table

        from kata.views import levels_label

        _, _, rows = sessions.status(self.wb)
        table = Table(show_edge=False, expand=False)
        for col in ("", "question", "levels", "visible", "hidden"):
            table.add_column(col, no_wrap=True)
        files = {k.slug: self.wb.workspace_file(k) for k in self.katas}
        for i, r in enumerate(rows):
            last = self.last.get(r.slug)
            visible = f"{last.passed}/{len(last.tests)}" if last else (
                f"{r.visible[0]}/{r.visible[1]}" if r.visible else "-")
            if r.slug in files and not files[r.slug].exists():
                visible = "no file"  # deleted: no count for code that is not there
            hidden = f"{r.hidden[0]:g}/{r.hidden[1]:g}" if r.hidden else "-"
            table.add_row(">" if i == self.current else "", r.slug, levels_label(r.levels, r.levels_open),
                          visible, hidden)
        return table

    def _screen_start(self):
        if self.plain:
            return None, None
        from rich.live import Live

        from kata.views import console

        live = Live(self.render(), console=console(), auto_refresh=False, transient=False)
        live.start()
        reader = _KeyReader(self.events, self.stop)
        reader.start()
        return live, reader


def _clock(seconds: float) -> str:
    from kata.views import clock

    return clock(seconds)


class _KeyReader(threading.Thread):
    """Single keypresses from a terminal (cbreak mode), onto the event queue."""

    def __init__(self, events: queue.Queue, stop: threading.Event):
        super().__init__(daemon=True)
        self.events, self.stop = events, stop
        self.saved = None
        try:
            import termios
            import tty

            self.fd = sys.stdin.fileno()
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except Exception:  # noqa: BLE001 - no terminal: no keys
            self.fd = None

    def run(self) -> None:
        import os
        import select

        while self.fd is not None and not self.stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                key = os.read(self.fd, 1).decode(errors="ignore").lower()
                if key:
                    self.events.put(Event("key", key))

    def restore(self) -> None:
        if self.saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            self.saved = None
