"""`kata watch`: re-run the visible tests of a question on every save, with the clock in view.

On a terminal it draws one screen (rich Live): the countdown, each question's state (levels open,
visible tests passed, hidden points), and the first failing visible test in full. Keys: `s` submit
the current question, `h` its next hint, `n`/`p` next/previous question, `q` quit. Without a
terminal it prints one plain line per event and reads no keys (scripts and tests drive it so).

Every save it sees is snapshotted (the visible run records the file's text, as `kata check` does).
When the clock runs out while it watches, the last saved version of each file is auto-submitted
then and there (kata.session.settle), and it stops.

What it leaves out: it watches the workspace folder only, and re-runs one question at a time.
"""

from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kata import session as sessions
from kata.catalog import Kata, Workbook


@dataclass
class Watch:
    wb: Workbook
    katas: list[Kata]  # the questions, in order
    plain: bool = True
    stop_after: int | None = None  # stop after this many saves were handled (for scripts)
    current: int = 0  # index into katas
    message: str = ""  # the last action's outcome, shown under the table
    last: dict = field(default_factory=dict)  # slug -> the last visible SuiteResult
    handled: int = 0
    keys: "queue.Queue[str]" = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)

    # --- what happens ---------------------------------------------------------

    def on_save(self, path: Path) -> None:
        kata = next((k for k in self.katas if self.wb.workspace_file(k) == path), None)
        if kata is None:
            return
        self.current = self.katas.index(kata)
        try:
            (graded,) = sessions.check(self.wb, [kata])
        except Exception as exc:  # noqa: BLE001 - a file mid-save, say: report, keep watching
            self.message = f"{kata.slug}: {exc}"
        else:
            self.last[kata.slug] = graded.result
            r = graded.result
            self.message = f"{kata.slug} saved: visible {r.passed}/{len(r.tests)} pass"
        self.handled += 1
        self.emit(self.message + self.first_failure_line())
        if self.stop_after is not None and self.handled >= self.stop_after:
            self.stop.set()

    def on_key(self, key: str) -> None:
        kata = self.katas[self.current]
        if key == "q":
            self.stop.set()
        elif key in ("n", "p"):
            self.current = (self.current + (1 if key == "n" else -1)) % len(self.katas)
            self.message = f"question {self.current + 1}: {self.katas[self.current].slug}"
        elif key == "s":
            try:
                (graded,) = sessions.submit(self.wb, [kata])
            except Exception as exc:  # noqa: BLE001 - one line, keep watching
                self.message = f"submit {kata.slug}: {exc}"
            else:
                r = graded.result
                opened = f"; level {graded.opened[0]} is open" if graded.opened else ""
                self.message = (f"submitted {kata.slug}: {r.points_earned:g}/{r.points_possible:g} "
                                f"points on levels {', '.join(map(str, graded.levels or []))}{opened}")
        elif key == "h":
            h = sessions.next_hint(self.wb, kata)
            self.message = (f"hint {h.index + 1} of {h.total} (level {h.level}): {h.text}" if h
                            else f"every hint of {kata.slug}'s open levels is shown already")
        self.emit(self.message)

    def tick(self) -> bool:
        """Once a second or so: False when the session is over (after settling it)."""
        live = sessions.live_session(self.wb)
        if live is not None:
            return True
        for a in sessions.settle(self.wb):
            self.emit(f"the clock ran out: auto-submitted {a.kata.slug} (saved "
                      f"{_clock(a.saved_at - a.session.started_at)} in): "
                      f"{a.submission.points_earned:g}/{a.submission.points_possible:g} points")
        self.emit("the session is over: `kata review` shows what you missed")
        return False

    def first_failure_line(self) -> str:
        r = self.last.get(self.katas[self.current].slug)
        failing = [t for t in r.tests if t.status != "pass"] if r else []
        if not failing:
            return ""
        t = failing[0]
        return f"; first failure: {t.name.split('::')[-1]}: {t.message}"

    # --- output ------------------------------------------------------------------

    def emit(self, line: str) -> None:
        if self.plain:
            print(f"[{self.clock_text()}] {line}", flush=True)

    def clock_text(self) -> str:
        from kata.views import deadline_warning

        s = sessions.live_session(self.wb)
        if s is None:
            return "no live session"
        remaining = s.remaining(sessions.now())
        warn = deadline_warning(remaining)
        return f"{_clock(remaining)} left" + (f", {warn}" if warn else "")

    def render(self):
        """The screen: clock, questions, the first failing test in full, the keys."""
        from rich.console import Group
        from rich.markup import escape
        from rich.table import Table
        from rich.text import Text

        from kata.views import levels_label

        _, remaining, rows = sessions.status(self.wb)
        table = Table(show_edge=False, expand=False)
        for col in ("", "question", "levels", "visible", "hidden"):
            table.add_column(col, no_wrap=True)
        for i, r in enumerate(rows):
            last = self.last.get(r.slug)
            visible = f"{last.passed}/{len(last.tests)}" if last else (
                f"{r.visible[0]}/{r.visible[1]}" if r.visible else "-")
            hidden = f"{r.hidden[0]:g}/{r.hidden[1]:g}" if r.hidden else "-"
            table.add_row(">" if i == self.current else "", r.slug, levels_label(r.levels, r.levels_open),
                          visible, hidden)
        parts = [Text(self.clock_text(), style="bold"), table]
        r = self.last.get(self.katas[self.current].slug)
        failing = [t for t in r.tests if t.status != "pass"] if r else []
        if failing:
            t = failing[0]
            detail = (t.detail or "").strip().splitlines()[-15:]
            parts.append(Text(f"first failure: {t.name.split('::')[-1]}: {t.message or ''}"))
            parts.append(Text("\n".join("  " + line for line in detail), style="dim"))
        elif r:
            parts.append(Text("every visible test passes: `s` submits", style="green"))
        if self.message:
            parts.append(Text(escape(self.message)))
        parts.append(Text("keys: s submit  h hint  n/p next/previous question  q quit", style="dim"))
        return Group(*parts)

    # --- the loop ------------------------------------------------------------------

    def run(self) -> None:
        from watchfiles import Change, watch

        self.wb.workspace.mkdir(parents=True, exist_ok=True)
        self.emit(f"watching {len(self.katas)} file(s) in workspace/: save to run the visible tests")
        live = None
        reader = None
        if not self.plain:
            from rich.live import Live

            from kata.views import console

            live = Live(self.render(), console=console(), auto_refresh=False, transient=False)
            live.start()
            reader = _KeyReader(self.keys, self.stop)
            reader.start()
        try:
            for changes in watch(self.wb.workspace, debounce=300, step=50, rust_timeout=500,
                                 yield_on_timeout=True, stop_event=self.stop):
                for change, name in sorted(changes):
                    if change != Change.deleted:
                        self.on_save(Path(name))
                while not self.keys.empty():
                    self.on_key(self.keys.get())
                if self.stop.is_set() or not self.tick():
                    break
                if live is not None:
                    live.update(self.render(), refresh=True)
        finally:
            if reader is not None:
                reader.restore()
            if live is not None:
                live.update(self.render(), refresh=True)
                live.stop()


def _clock(seconds: float) -> str:
    from kata.views import clock

    return clock(seconds)


class _KeyReader(threading.Thread):
    """Single keypresses from a terminal (cbreak mode), into a queue."""

    def __init__(self, keys: queue.Queue, stop: threading.Event):
        super().__init__(daemon=True)
        self.keys, self.stop = keys, stop
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
                    self.keys.put(key)

    def restore(self) -> None:
        if self.saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            self.saved = None
