"""The deadline keeper: a small detached process that reads a timed session's workspace files at
its deadline, so that the work saved before the deadline is what counts even when a file changes
after it with no `kata` command in between.

`kata start` (and `kata hunt`) launch one per session (`launch`): `python -m kata.keeper` in a
session of its own, stdin, stdout and stderr on /dev/null, its pid in .kata/keeper-<session>.pid.
It sleeps until the deadline on the machine's clock, waking every POLL_S seconds to see that the
session is still live with the same deadline (it exits at once otherwise), then reads each file,
records it in the store (Store.add_deadline_snapshots), removes its pid file and exits.
`kata finish`, `kata start --abandon` and settling end it (`stop`: a pid is signalled only when
its command line is this keeper's, with this pid file).

A keeper that wakes more than LATE_S seconds after the deadline (the machine was asleep, or it was
paused) records only that (a LATE_FILE row): what the files hold then is not what they held at the
deadline. While it waits it touches its pid file every POLL_S, so a keeper paused before the
deadline leaves a stale one (`stopped_early` reads both records). When there is no record
(killed, asleep, a session started before keepers existed), settling falls back on the versions kata
snapshotted and the files' modification times, and says which it used (kata.session.settle).

Example (what `kata start` runs):
    python -m kata.keeper --pid-file .kata/keeper-3.pid --db .kata/kata.db --session 3
        --deadline 1800000300.0 --file adder code workspace/adder.py
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

POLL_S = 2.0  # how often a sleeping keeper checks that its session is still live
LATE_S = 30.0  # a keeper waking later than this after the deadline records nothing
WAIT_S = 10.0  # how long settling waits for a live keeper's record, at most
STOP_S = 3.0  # how long `stop` waits for a signalled keeper to go, before SIGKILL

MODULE = "kata.keeper"
LATE_FILE = "late"  # the row a keeper that woke too late records instead of the files (slug "")


def pid_file(kata_dir: Path, session_id: int) -> Path:
    return Path(kata_dir).absolute() / f"keeper-{session_id}.pid"


# --- the side that runs in `kata` ------------------------------------------------------------


def launch(kata_dir: Path, db: Path, session_id: int, deadline: float,
           files: list[tuple[str, str, Path]]) -> int | None:
    """Start the keeper of a session that ends at `deadline` (seconds since the epoch), reading
    `files` ((slug, 'code'|'test', path)) then. Returns its pid; None where none can run (not a
    POSIX system, or the process could not start: settling then says what it went by)."""
    if os.name != "posix":
        return None
    path = pid_file(kata_dir, session_id)
    argv = [sys.executable, "-m", MODULE, "--pid-file", str(path), "--db", str(Path(db).absolute()),
            "--session", str(session_id), "--deadline", repr(float(deadline))]
    for slug, kind, file in files:
        argv += ["--file", slug, kind, str(Path(file).absolute())]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
                                cwd=_where_kata_imports(path.parent))
    except OSError:
        return None
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(f"{proc.pid}\n")
        os.replace(tmp, path)
    except OSError:  # no pid file, no way to end it: none runs
        proc.kill()
        proc.wait()
        return None
    # reaped as soon as it exits, so a long-lived caller (a test run) keeps no zombie
    threading.Thread(target=proc.wait, name=f"kata-keeper-{proc.pid}", daemon=True).start()
    return proc.pid


def _where_kata_imports(state: Path) -> str:
    """The folder to start the keeper in (`-m` puts it first on the keeper's path): the state
    folder when this kata is on the path anyway (installed, or on $PYTHONPATH); else (run from a
    source folder) the folder holding the package, so that the keeper runs this same kata."""
    root = Path(__file__).resolve().parent.parent
    for entry in sys.path[1:]:
        try:
            if entry and Path(entry).resolve() == root:
                return str(state)
        except OSError:
            continue
    return str(root)


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def is_keeper(pid: int, path: Path) -> bool:
    """Whether `pid` is a live (not zombie) keeper started with pid file `path`: a pid reused by
    another process, or a keeper of another session, is never signalled."""
    cmdline = _cmdline(pid)
    return MODULE.encode() in cmdline and str(path).encode() in cmdline


def _cmdline(pid: int) -> bytes:
    proc = Path(f"/proc/{pid}")
    if Path("/proc/self").exists():
        try:
            return (proc / "cmdline").read_bytes().replace(b"\0", b" ")  # a zombie's is empty
        except OSError:
            return b""
    try:  # no /proc (macOS): ps shows a zombie as <defunct>
        return subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True,
                              timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return b""


def running(kata_dir: Path, session_id: int) -> int | None:
    """The pid of the session's keeper if it is running."""
    path = pid_file(kata_dir, session_id)
    pid = read_pid(path)
    return pid if pid is not None and is_keeper(pid, path) else None


def stop(kata_dir: Path, session_id: int | None = None) -> list[int]:
    """End the keeper of `session_id` (None: every keeper of this state folder) and remove its
    pid file; a pid file whose process is gone (killed) is removed too. Returns the pids ended."""
    paths = [pid_file(kata_dir, session_id)] if session_id is not None else \
        sorted(Path(kata_dir).glob("keeper-*.pid"))
    ended = []
    for path in paths:
        pid = read_pid(path)
        if pid is not None and is_keeper(pid, path):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except OSError:
                    break
                give_up = time.monotonic() + STOP_S
                while is_keeper(pid, path) and time.monotonic() < give_up:
                    time.sleep(0.02)
                if not is_keeper(pid, path):
                    break
            ended.append(pid)
        try:
            path.unlink()
        except OSError:
            pass
    return ended


def await_record(store, kata_dir: Path, session) -> None:
    """Settling a session just after its deadline: give its running keeper (at most WAIT_S
    seconds) to record what the files held at the deadline."""
    give_up = time.monotonic() + WAIT_S
    path = pid_file(kata_dir, session.id)
    while time.monotonic() < give_up and session.deadline <= time.time() < session.deadline + LATE_S + POLL_S:
        if store.deadline_snapshots(session.id) or running(kata_dir, session.id) is None:
            return
        try:  # a keeper that stopped touching its pid file (paused) will not record: no wait for it
            if time.time() - path.stat().st_mtime > 3 * POLL_S:
                return
        except OSError:
            return
        time.sleep(0.02)


def stopped_early(kata_dir: Path, session, kept: dict) -> str | None:
    """Why the session's keeper cannot vouch for the deadline, read from its own records: it woke
    too late (its LATE_FILE row), or its pid file, which it touches every POLL_S while it waits,
    went stale before the deadline (the keeper was paused, or killed). None when neither."""
    late = kept.get(("", LATE_FILE))
    if late is not None:
        return f"the deadline keeper woke {late.taken_at - session.deadline:.0f} s after the deadline (paused or asleep)"
    try:
        beat = pid_file(kata_dir, session.id).stat().st_mtime
    except OSError:
        return None
    if beat < session.deadline - 3 * POLL_S and beat >= session.started_at:
        return (f"the deadline keeper stopped answering {session.deadline - beat:.0f} s before the "
                "deadline (paused or killed)")
    return None


# --- the keeper itself ---------------------------------------------------------------------


def _due(db: Path, session_id: int, deadline: float) -> bool:
    """Whether the session is still to be kept: live (or ended by this very deadline) and its
    deadline unchanged. A store that is gone ends the keeper; a busy one is asked again later."""
    if not db.exists():
        return False
    try:
        con = sqlite3.connect(db.resolve().as_uri() + "?mode=rw", uri=True, timeout=5)
        try:
            row = con.execute("SELECT status, deadline, ended_by FROM sessions WHERE id = ?",
                              (session_id,)).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return True
    if row is None or abs(row[1] - deadline) > 1e-6:
        return False
    return row[0] == "live" or row[2] == "deadline"


def _read(path: Path) -> tuple[str | None, float | None]:
    """(its text, its modification time) now; (None, ...) when missing or not UTF-8. The time is
    taken after the read, so a change made while reading shows as a later time."""
    try:
        code: str | None = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        code = None
    except OSError:
        return None, None
    try:
        return code, path.stat().st_mtime
    except OSError:
        return None, None


def keep(db: Path, session_id: int, deadline: float, files: list[tuple[str, str, Path]],
         pid_path: Path | None = None) -> bool:
    """Sleep until the deadline, then record the files; False if nothing was recorded. While it
    sleeps it touches its pid file every POLL_S (its own record that it is awake: settling reads
    a stale one as a keeper stopped before the deadline); woken too late, it records only that
    (a LATE_FILE row) and not the files."""
    while True:
        left = deadline - time.time()
        if left <= 0:
            break
        time.sleep(min(POLL_S, left))
        if pid_path is not None:
            try:
                os.utime(pid_path)
            except OSError:
                pass
        if not _due(db, session_id, deadline):
            return False
    if time.time() - deadline > LATE_S:
        if _due(db, session_id, deadline):
            from kata.store import Store

            store = Store(db)
            try:
                store.add_deadline_snapshots(session_id, [("", LATE_FILE, None, None)], time.time())
            finally:
                store.close()
        return False
    read = [(slug, kind, *_read(path)) for slug, kind, path in files]
    taken = time.time()
    if not _due(db, session_id, deadline):
        return False
    from kata.store import Store

    store = Store(db)
    try:
        store.add_deadline_snapshots(session_id, read, taken)
    finally:
        store.close()
    return True


def _stopped(signum, frame):
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pid-file", required=True, type=Path)
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--session", required=True, type=int)
    parser.add_argument("--deadline", required=True, type=float)
    parser.add_argument("--file", action="append", nargs=3, default=[], metavar=("SLUG", "KIND", "PATH"))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stopped)
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    try:
        keep(args.db, args.session, args.deadline,
             [(slug, kind, Path(path)) for slug, kind, path in args.file], args.pid_file)
    finally:
        if read_pid(args.pid_file) == os.getpid():
            try:
                args.pid_file.unlink()
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
