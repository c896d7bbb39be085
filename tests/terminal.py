"""Run `kata` on a pseudo-terminal of a given size, as a person at a screen would, and read back
what the screen was sent (escape codes removed by `screen_text`)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

from tests.conftest import REPO

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?")


def stock_env(**extra: str) -> dict[str, str]:
    """A stock shell's environment: no PAGER, no LESS, no COLUMNS, no test switches."""
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "KATA_STATE_DIR", "KATA_WORKBOOK",
                     "KATA_NOW")}
    return {**keep, "TERM": "xterm-256color", **extra}


def run_on_terminal(args, env: dict[str, str], cols: int = 80, rows: int = 30,
                    keys: bytes = b"", timeout: float = 60.0, cwd=REPO) -> tuple[int, str]:
    """(exit code, raw bytes the terminal received, decoded). `keys` are typed one at a time
    whenever the output has been idle for half a second (a pager waiting for `q`, a question).
    Run in `cwd` (the repository: give PYTHONPATH in `env` to run the test clock elsewhere)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    # a plain `kata` ignores $KATA_NOW: a test that sets the clock runs the test-clock launcher
    module = "tests.kata_test_clock" if env.get("KATA_NOW") else "kata"
    child = subprocess.Popen([sys.executable, "-m", module, *args], stdin=slave, stdout=slave,
                             stderr=slave, env=env, cwd=cwd, preexec_fn=controlling_terminal,
                             close_fds=True)
    os.close(slave)
    chunks, pending = [], list(keys)
    idle_since, deadline = time.monotonic(), time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
                idle_since = time.monotonic()
            elif child.poll() is not None:
                break
            elif pending and time.monotonic() - idle_since > 0.5:
                os.write(master, bytes([pending.pop(0)]))
                idle_since = time.monotonic()
        else:
            raise AssertionError(f"kata {' '.join(args)} still running after {timeout}s: "
                                 + b"".join(chunks).decode(errors="replace")[-2000:])
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        os.close(master)
    return child.returncode, b"".join(chunks).decode(errors="replace")


def screen_text(raw: str) -> str:
    """What a reader sees, roughly: escape codes gone, carriage returns folded."""
    text = ANSI.sub("", raw).replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def words(text: str) -> set[str]:
    """Whitespace-separated tokens, stripped of markdown's and prose's punctuation at their ends."""
    return {w.strip("`*_()[]{},.;:'\"") for w in text.split()} - {""}


def unbroken(source: str, shown: str) -> list[str]:
    """The words of `source` that `shown` does not hold whole (a word cut by a line break)."""
    have = words(shown)
    return sorted(w for w in words(source) if w not in have)


def too_wide(shown: str, width: int = 80, allowed=()) -> list[str]:
    """Lines wider than `width` that are neither one unbreakable token (a path, a node id), nor
    in `allowed` (code lines, kept whole for the terminal to wrap), nor a traceback's line."""
    wide = []
    for line in shown.splitlines():
        body = line.strip()
        if len(line.rstrip()) <= width or " " not in body or body in allowed:
            continue
        if re.match(r"^\S+:\d+: in \S+$", body) or body.startswith(("E ", ">")):
            continue  # a traceback's `file:line: in function`, its E lines and source lines
        wide.append(line)
    return wide
