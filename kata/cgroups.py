"""Per-child control groups: each grading child in a group of its own, where the system lets kata
make one, so that no child can harm a neighbour graded beside it (grade-batch runs several).

A group gives the child and every process it starts:

* a process-count limit (PIDS_MAX): a fork bomb stops at its own limit, not at a limit it shares
  with classmates (the per-user process limit does not hold root, and counts everyone);
* an equal CPU share: a child that starts thirty CPU-burning processes gets the CPU time of one
  child, not thirty;
* a memory limit that counts what the child keeps in tmpfs (the sandbox's /tmp is memory that
  RLIMIT_AS does not see): the kernel's out-of-memory killer then picks a process of that child,
  never kata or a classmate's run;
* an end: when the run is over, every process left in the group is killed, a daemon that called
  setsid outside the sandbox included.

Where groups can be made: cgroup v1 hierarchies for pids, cpu and memory that kata may write (it
runs as root, in a container or on a server), or a cgroup v2 tree whose controllers kata may enable
below its own group. Elsewhere (a desktop's delegated user slice, macOS) `create` returns None and
the child has its rlimits only (kata/child.py); `status()` says which.

    group = create(memory_bytes=3 * 1024**3)   # None where groups cannot be made
    Popen(..., preexec_fn=lambda: group.join())  # in the child, before exec
    ...; group.close()                           # kill what is left, remove the group
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

PIDS_MAX = 128  # processes (threads count too) one grading child may have at once
ROOT = Path("/sys/fs/cgroup")
_V1 = ("pids", "cpu", "memory")
_COUNTER = itertools.count()
_STATUS: dict = {}  # "mode": "v1" | "v2" | None, "why": str


def _own_paths() -> dict[str, str]:
    """controller ("" for the v2 tree) -> this process's group path, from /proc/self/cgroup."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _v1_parents() -> dict[str, Path] | None:
    own = _own_paths()
    parents = {}
    for name in _V1:
        if name not in own:
            return None
        parent = ROOT / name / own[name].lstrip("/")
        if not _writable(parent):
            return None
        parents[name] = parent
    return parents


def _v2_parent() -> Path | None:
    """The v2 group to make children in, with pids, cpu and memory enabled below it; None when
    they cannot be (a group with processes of its own, other than the root, cannot enable them)."""
    if not (ROOT / "cgroup.controllers").is_file():
        return None
    parent = ROOT / _own_paths().get("", "/").lstrip("/")
    try:
        have = set((parent / "cgroup.controllers").read_text().split())
        if not set(_V1) <= have:
            return None
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not set(_V1) <= enabled:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in _V1))
    except OSError:
        return None
    return parent if _writable(parent) else None


def status() -> str | None:
    """None when per-child groups are made, else why not (one phrase). Decided once."""
    if "mode" not in _STATUS:
        if os.environ.get("KATA_CGROUPS", "").lower() in ("0", "off", "no", "false"):
            _STATUS.update(mode=None, why="turned off (KATA_CGROUPS=off)")
        elif _v1_parents() is not None:
            _STATUS.update(mode="v1", why=None)
        elif _v2_parent() is not None:
            _STATUS.update(mode="v2", why=None)
        else:
            _STATUS.update(mode=None, why="this system does not let kata make control groups")
    return _STATUS["why"]


def status_line() -> str:
    """One sentence (no full stop) for `kata doctor` and `kata grade-batch`."""
    why = status()
    if why is None:
        return (f"Each grading run has a control group of its own ({PIDS_MAX} processes at most, "
                "an equal CPU share, a memory limit that counts its /tmp)")
    return f"Grading runs have no control group of their own ({why}): the process limits only"


class Group:
    """One child's group: a folder per hierarchy (v1) or one folder (v2)."""

    def __init__(self, folders: list[Path]):
        self.folders = folders
        self._procs = [str(f / "cgroup.procs") for f in folders]

    def join(self) -> None:
        """Move the calling process into the group: run in the child between fork and exec (no
        imports; a failed write leaves it outside, with its rlimits)."""
        pid = str(os.getpid()).encode()
        for path in self._procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            except OSError:
                pass

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self._procs:
            try:
                found.update(int(p) for p in Path(path).read_text().split())
            except (OSError, ValueError):
                pass
        return found

    def close(self, timeout: float = 5.0) -> None:
        """Kill every process left in the group, then remove it."""
        give_up = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left or time.monotonic() > give_up:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                pass


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass  # a knob this kernel lacks: the others still hold


def create(memory_bytes: int) -> Group | None:
    """A fresh group for one grading child (see the module doc), or None where none can be made."""
    if status() is not None:
        return None
    name = f"kata-{os.getpid()}-{next(_COUNTER)}"
    folders: list[Path] = []
    try:
        if _STATUS["mode"] == "v1":
            parents = _v1_parents() or {}
            for controller in _V1:
                folder = parents[controller] / name
                folder.mkdir()
                folders.append(folder)
            _write(parents["pids"] / name / "pids.max", str(PIDS_MAX))
            _write(parents["memory"] / name / "memory.limit_in_bytes", str(memory_bytes))
        else:
            parent = _v2_parent()
            if parent is None:
                return None
            folder = parent / name
            folder.mkdir()
            folders.append(folder)
            _write(folder / "pids.max", str(PIDS_MAX))
            _write(folder / "memory.max", str(memory_bytes))
            _write(folder / "memory.swap.max", "0")
    except (OSError, KeyError):
        Group(folders).close()
        return None
    return Group(folders)
