"""One grading child: started (in the sandbox where it works), read, bounded and killed.

`Child.start` runs a command in its own process group with memory, CPU and core-file limits,
dying with its parent (PR_SET_PDEATHSIG), its command line wrapped by kata/sandbox.py. The
plugin's events arrive over a pipe the child inherits (never a path in a folder the child can
write: a FIFO or a deleted file there could hang or blind the parent), each line signed with a key
handed over on a second pipe and numbered; `Child.events()` returns the lines that verify and
marks the stream forged at the first that does not.

`child_guard()`: while inside, SIGINT, SIGTERM and SIGHUP kill every grading child before `kata`
exits.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from kata import cgroups, sandbox

OUTPUT_CAP = 64 * 1024  # bytes of the child's own stdout/stderr kept


_PR_SET_PDEATHSIG = 1
_LIBC: list = []  # [libc handle or None], loaded once in the parent


def _libc():
    """libc, loaded in the parent: after fork, in a child of a threaded parent (grade-batch and
    validate grade from worker threads), an import or a dlopen could deadlock on a lock another
    thread held at fork time; the child only calls functions it already has."""
    if not _LIBC:
        try:
            import ctypes

            _LIBC.append(ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None)
        except OSError:  # pragma: no cover - no libc to load: the signal handlers remain
            _LIBC.append(None)
    return _LIBC[0]


def _limit_child(memory_bytes: int, cpu_seconds: int, parent_pid: int, file_bytes: int, group=None):
    import resource

    libc = _libc()
    prctl = getattr(libc, "prctl", None) if libc is not None else None

    def apply():  # runs in the child between fork and exec: no imports, no allocations of note
        if group is not None:  # its own control group (kata/cgroups.py), before anything else
            group.join()
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # no file the child writes (its saved copy of the real stdout, say) grows past file_bytes:
        # a write beyond fails with EFBIG (SIGXFSZ ignored) instead of filling the disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the parent, even on SIGKILL
            if os.getppid() != parent_pid:  # the parent died before prctl took effect
                os._exit(1)

    return apply


# Every grading child alive in this process, so that a signal to `kata` kills them first.
_CHILDREN: set[subprocess.Popen] = set()
_CHILDREN_LOCK = threading.Lock()
_GUARD = {"depth": 0, "previous": {}}


_STOP = threading.Event()  # set by a signal inside child_guard: no new child may start


class Interrupted(KeyboardInterrupt):
    """A signal stopped the grading (Ctrl-C, SIGTERM): no new child is started."""


def _kill_all_children() -> None:
    with _CHILDREN_LOCK:
        children = list(_CHILDREN)
    for child in children:
        _kill_group(child)


def _on_signal(signum, frame):
    """Kill every grading child, then unwind like Ctrl-C (SIGTERM and SIGHUP too), so that every
    temporary folder is removed on the way out and no new child starts."""
    _STOP.set()
    _kill_all_children()
    raise Interrupted(f"stopped by {signal.Signals(signum).name}")


@contextmanager
def child_guard():
    """While inside, SIGINT, SIGTERM and SIGHUP kill every grading child before `kata` exits.

    Re-entrant; a no-op outside the main thread (signal handlers live there). Commands that grade
    from worker threads (grade-batch, validate) wrap their whole pool in it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _GUARD["depth"] == 0:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            _GUARD["previous"][sig] = signal.signal(sig, _on_signal)
    _GUARD["depth"] += 1
    try:
        yield
    finally:
        _GUARD["depth"] -= 1
        if _GUARD["depth"] == 0:
            _STOP.clear()
            for sig, previous in _GUARD["previous"].items():
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            _GUARD["previous"] = {}


def _read_capped(path: Path, cap: int = OUTPUT_CAP) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
    except FileNotFoundError:
        return ""
    text = data[:cap].decode("utf-8", "replace")
    return text + ("\n[output cut]" if len(data) > cap else "")




class Child:
    """A running grading child and the read end of its event pipe."""

    def __init__(self, popen: subprocess.Popen, events_fd: int, key: bytes, output: Path, group=None):
        self.popen = popen
        self.group = group  # its control group (kata/cgroups.py), or None
        self.reader = _EventReader(events_fd, key)
        self.output_path = output

    @classmethod
    def start(cls, cmd: list[str], key: bytes, canaries: list, env: dict, cwd: Path,
              output: Path, visible: list[Path], memory_bytes: int, cpu_seconds: int,
              file_bytes: int = 256 * 1024**2, writable: list[Path] | None = None) -> Child:
        """Start `cmd` (a pytest command line to which `--kata-events fd:N` is appended) with the
        secret {key, canaries} on a pipe named by $KATA_SECRET_FD. `visible`: the folders the
        sandbox mounts read-only (the run's private copy); `writable`: folders it mounts writable
        (a recording run of the reference's, never one that runs a learner's code)."""
        if _STOP.is_set():
            raise Interrupted("grading was interrupted")
        events_r, events_w = os.pipe()
        secret_r, secret_w = os.pipe()
        os.write(secret_w, json.dumps({"key": key.decode(), "canaries": canaries}).encode())
        os.close(secret_w)
        os.set_blocking(events_r, False)
        cmd = cmd + ["--kata-events", f"fd:{events_w}"]
        env = {**env, "KATA_SECRET_FD": str(secret_r)}
        wrapped = sandbox.wrap(cmd, visible, writable=writable)
        # a process limit, an equal CPU share and a memory limit that counts its tmpfs
        group = cgroups.create(memory_bytes + 2 * sandbox.TMPFS_BYTES)
        try:
            with output.open("wb") as out:
                popen = subprocess.Popen(
                    wrapped, cwd=cwd, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                    start_new_session=True, pass_fds=(secret_r, events_w),
                    preexec_fn=_limit_child(memory_bytes, cpu_seconds, os.getpid(), file_bytes, group))
        except BaseException:
            os.close(events_r)
            if group is not None:
                group.close()
            raise
        finally:
            os.close(secret_r)
            os.close(events_w)
        with _CHILDREN_LOCK:
            _CHILDREN.add(popen)
        if _STOP.is_set():  # a signal came while it started: it was not yet there to be killed
            _kill_group(popen)
        return cls(popen, events_r, key, output, group)

    def poll(self) -> int | None:
        return self.popen.poll()

    def events(self) -> list[dict]:
        return self.reader.poll()

    @property
    def forged(self) -> str | None:
        return self.reader.forged

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def stop(self) -> None:
        """Kill the whole process group (grandchildren the learner spawned, too) and reap it; then
        every process left in its control group (one that called setsid, say)."""
        _kill_group(self.popen)
        self.popen.wait()
        if self.group is not None:
            self.group.close()
            self.group = None

    def close(self) -> list[dict]:
        """Kill what is left, read the last events, forget the child; return those events."""
        self.stop()
        last = self.reader.poll()
        self.reader.close()
        with _CHILDREN_LOCK:
            _CHILDREN.discard(self.popen)
        return last

    def output(self) -> str:
        return _read_capped(self.output_path)


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            child.kill()
        except ProcessLookupError:
            pass


class _EventReader:
    """Reads the plugin's JSON lines from the event pipe without blocking, checking each line's
    signature and sequence number. A line that fails either is reported as forged. Each poll
    reads at most READ_BYTES, so a child that floods the pipe cannot keep the parent (and its
    watchdog) reading; a line longer than LINE_BYTES is a flood, reported as forged."""

    READ_BYTES = 1 << 20
    LINE_BYTES = 4 << 20  # the plugin's longest line (a sweep's collected ids) is far shorter

    def __init__(self, fd: int, key: bytes):
        self.fd: int | None = fd
        self.key = key
        self.buffer = b""
        self.seq = 0
        self.forged: str | None = None

    def poll(self) -> list[dict]:
        chunks, read = [self.buffer], 0
        while self.fd is not None and read < self.READ_BYTES and not self.forged:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as exc:  # pragma: no cover - a pipe read fails only if the fd is gone
                if exc.errno == errno.EBADF:
                    break
                raise
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        *lines, self.buffer = b"".join(chunks).split(b"\n")
        if len(self.buffer) > self.LINE_BYTES and not self.forged:
            self.forged = (f"the grading event stream holds a line of over {self.LINE_BYTES >> 20} MiB "
                           "the plugin did not write (a flood)")
        if self.forged:
            self.buffer = b""  # nothing more is believed: keep no memory for a flood
        events = []
        for line in lines:
            if self.forged:
                break
            event = self._verify(line)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _verify(self, line: bytes) -> dict | None:
        try:
            outer = json.loads(line)
            body, sig = outer["body"], outer["sig"]
            want = hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(want, str(sig)):
                raise ValueError("bad signature")
            event = json.loads(body)
            if event.get("n") != self.seq + 1:
                raise ValueError(f"event {event.get('n')} where {self.seq + 1} was due")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.forged = f"the grading event stream holds a line the plugin did not write ({exc})"
            return None
        self.seq += 1
        return event



def _describe_exit(code: int | None) -> str:
    if code is None:
        return "was killed"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGKILL": " (often: out of memory)", "SIGXCPU": " (CPU time limit)",
                "SIGSEGV": " (a crash)"}.get(name, "")
        return f"died from {name}{hint}"
    return f"exited with code {code}"


# --- the private copy and the manifest --------------------------------------

