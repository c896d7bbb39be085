"""The grading child's sandbox: one function wraps its command line, one decides if it can.

When bubblewrap (`bwrap`, Debian's `bubblewrap` package) works on this machine, every grading
child runs inside it:

* new mount, PID, IPC, UTS, user and network namespaces (no network at all);
* a read-only view of the Python installation, the installed `kata` package (and nothing beside
  it: an editable install keeps solutions/ and graders/ next to kata/, and they stay out of view)
  and the run's private folder (the hidden suite and the learner's file, copied for this run);
* a fresh, empty, writable tmpfs (TMPFS_BYTES at most) as the working folder, home and /tmp, with hypothesis's Unicode
  tables mounted read-only inside it (`unicode_tables()`: built once per machine, not per child);
* no view of the workbook, the workspace, the submissions folder or the state folder;
* `--die-with-parent` and a PID namespace: when the run ends, every process the learner's code
  started ends with it (a double fork and setsid included);
* an empty environment plus an allowlist (`child_env`).

Whether bwrap works is decided once per process by a real trial run (`status()`), not by its
presence on PATH: in containers and under some AppArmor profiles bwrap is installed but refused.
Where it does not work, grading runs as before (process group, resource limits, signed events,
canaries, manifest checks) and `kata doctor` and `kata grade-batch` say so in one line
(`status_line()`).

    >>> wrap(["python", "-m", "pytest"], [Path("/tmp/kata-run-x")])[:2]  # doctest: +SKIP
    ['/usr/bin/bwrap', '--unshare-all']

Set KATA_SANDBOX=off to grade without it (tests of the unsandboxed path do so).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

log = logging.getLogger("kata.harness")

INSTALL_HINT = "install bubblewrap (e.g. `sudo apt-get install bubblewrap`)"
ENV_SWITCH = "KATA_SANDBOX"  # "off": never sandbox
WORKDIR = "/kata-work"  # the child's working folder and home inside the sandbox (a tmpfs)
TMPFS_BYTES = 256 * 1024**2  # the size of each writable tmpfs (/tmp, WORKDIR): memory no limit counts
SHM_BYTES = 64 * 1024**2  # /dev/shm's size (bwrap's own /dev would give it half the machine's memory)
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")

_STATUS: dict[str, str | None] = {}  # "reason" -> None (works) or why not, once per process


def status() -> str | None:
    """None when grading children run in the sandbox, else why not (one phrase). Cached."""
    if os.environ.get(ENV_SWITCH, "").lower() in ("off", "0", "no"):
        return f"{ENV_SWITCH}=off"
    if "reason" not in _STATUS:
        _STATUS["reason"] = _trial()
        log.info("sandbox: %s", "bubblewrap works (trial run passed)" if _STATUS["reason"] is None
                 else f"not used: {_STATUS['reason']}")
    return _STATUS["reason"]


def available() -> bool:
    return status() is None


def status_line() -> str:
    """One line for `kata doctor` and `kata grade-batch`."""
    reason = status()
    if reason is None:
        return "grading is sandboxed (bubblewrap: no network, no view of the workbook or other files)"
    if reason.startswith(ENV_SWITCH):
        return f"grading is not sandboxed ({reason})"
    return f"grading is not sandboxed ({reason}): {INSTALL_HINT} and check that it can run"


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def _trial() -> str | None:
    """Run `python -c` inside the very sandbox a grading child gets; None if it printed back."""
    if not sys.platform.startswith("linux"):
        return "bubblewrap needs Linux"
    if _bwrap() is None:
        return "bwrap is not on PATH"
    probe = "import sys, socket; print('kata-sandbox-ok', sys.prefix)"
    cmd = wrap([sys.executable, "-c", probe], [], force=True)
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=20, env=child_env({}),
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started ({type(exc).__name__})"
    if done.returncode != 0 or b"kata-sandbox-ok" not in done.stdout:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap is installed but refused to run ({err[-1][:120] if err else done.returncode})"
    return None


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """An empty environment plus the allowlist, plus `extra` (the harness's own variables).

    Nothing else of the parent's environment (an instructor's tokens, KATA_* settings,
    PYTHONPATH, PYTEST_ADDOPTS) reaches learner code, sandboxed or not."""
    env = {k: os.environ[k] for k in ALLOWED_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra)
    return env


# --- what the child sees ------------------------------------------------------

_CONTENT_DIRS = ("_content", "solutions", "graders", "katas", "exams", "tests", "workbook", "_workbook", "data")


def _python_roots() -> list[Path]:
    """Folders the interpreter and its installed packages live in (read-only in the sandbox)."""
    paths = sysconfig.get_paths()
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix),
             Path(paths["stdlib"]), Path(paths["purelib"]), Path(paths["platlib"]),
             Path(os.path.realpath(sys.executable)).parent}
    present = sorted(r for r in roots if r.exists())
    return [r for r in present if not any(other in r.parents for other in present)]


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def _base_args(proc: list[str]) -> list[str]:
    """What both sandboxes share: new namespaces, dying with the parent, `proc` (a fresh /proc, or
    none), a fresh /dev with a sized /dev/shm, a sized /tmp, and the system's and the Python
    installation's folders read-only."""
    args = [_bwrap() or "bwrap", "--unshare-all", "--die-with-parent", "--new-session", *proc,
            "--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
            "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
    for system in ("/usr", "/etc/alternatives", "/etc/ssl"):
        args += ["--ro-bind-try", system, system]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        target = Path(top)
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), top]
        elif target.is_dir():
            args += ["--ro-bind", top, top]
    for root in _python_roots():
        if any((root / name).is_dir() for name in ("solutions", "graders")):
            continue  # a workbook (e.g. a venv made in the clone itself): never mounted whole
        args += ["--ro-bind", str(root), str(root)]
    return args


def wrap(cmd: list[str], visible: list[Path], force: bool = False,
         writable: list[Path] | None = None) -> list[str]:
    """`cmd` run inside bubblewrap, or `cmd` unchanged where the sandbox is not available.

    `visible`: the run's private folders (its copy of the suite, the learner's file), mounted
    read-only at the same paths so the command's arguments stay valid; `writable`: folders
    mounted writable at their own paths (only for runs of the reference itself)."""
    if not force and not available():
        return cmd
    args = _base_args(["--proc", "/proc"])
    package = _package_dir()
    args += ["--ro-bind", str(package), str(package)]
    for name in _CONTENT_DIRS:  # a wheel may ship workbook content under the package
        if (package / name).is_dir():
            args += ["--tmpfs", str(package / name)]
    for folder in visible:
        args += ["--ro-bind", str(folder), str(folder)]
    for folder in writable or []:
        args += ["--bind", str(folder), str(folder)]
    args += ["--size", str(TMPFS_BYTES), "--tmpfs", WORKDIR]
    tables = unicode_tables()
    if tables is not None:  # read-only: no child can change what the next one generates
        args += ["--ro-bind", str(tables), f"{WORKDIR}/hypothesis/unicode_data"]
    args += ["--setenv", "HOME", WORKDIR, "--chdir", WORKDIR, "--"]
    return args + cmd


# --- the learner's own process, inside a grading child's sandbox ---------------------------

_NESTED: dict[str, str | None] = {}


def inner_wrap(cmd: list[str], files: list[Path]) -> list[str]:
    """`cmd` in a sandbox of its own, started from inside a grading child's (kata/boundary.py's
    learner process): new namespaces again, no network, no /proc (a nested one cannot be
    mounted: without it no other process can even be named), the Python installation and
    `files` read-only (the learner's file and the boundary's server, not the hidden suite beside
    them), and a fresh tmpfs for /tmp and the working folder."""
    args = _base_args([])
    for path in files:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--size", str(TMPFS_BYTES), "--tmpfs", WORKDIR, "--setenv", "HOME", WORKDIR, "--chdir", WORKDIR, "--"]
    return args + cmd


def nested_status() -> str | None:
    """None when a grading child can start a sandbox inside its own (checked by a trial run of
    both), else why not. Cached."""
    if "reason" not in _NESTED:
        reason = status()
        if reason is None:
            probe = [sys.executable, "-I", "-c", "print('kata-nested-ok')"]
            cmd = wrap(inner_wrap(probe, []), [], force=True)
            try:
                done = subprocess.run(cmd, capture_output=True, timeout=20, env=child_env({}),
                                      stdin=subprocess.DEVNULL)
                if done.returncode != 0 or b"kata-nested-ok" not in done.stdout:
                    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
                    reason = f"a sandbox inside the sandbox was refused ({err[-1][:120] if err else done.returncode})"
            except (OSError, subprocess.TimeoutExpired) as exc:
                reason = f"a sandbox inside the sandbox could not be started ({type(exc).__name__})"
        _NESTED["reason"] = reason
    return _NESTED["reason"]


# --- hypothesis's Unicode tables ------------------------------------------------

_TABLES: dict[str, Path | None] = {}

_BUILD_TABLES = """
from hypothesis import given, settings, strategies as st
@settings(max_examples=1, database=None, derandomize=True)
@given(st.text(), st.characters())
def build(text, char):
    pass
build()
"""


def unicode_tables() -> Path | None:
    """A folder of hypothesis's Unicode tables (which characters are in which category, which
    encode in UTF-8), built once per machine in kata's cache folder by a child that runs no
    learner code, and mounted read-only in every sandboxed child. Without it, every fresh child
    that draws text (st.characters, st.text) rebuilds them first: 0.15-1.5 s per grading. None
    where they cannot be built (then each child builds its own, as before). Cached."""
    if "path" not in _TABLES:
        _TABLES["path"] = _build_tables()
    return _TABLES["path"]


def _build_tables() -> Path | None:
    try:
        import hypothesis
        from platformdirs import user_cache_path

        version = f"hypothesis-{hypothesis.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
        home = user_cache_path("kata", appauthor=False) / version
        tables = home / "unicode_data"
        if tables.is_dir() and any(tables.rglob("*.json.gz")):
            return tables
        home.mkdir(parents=True, exist_ok=True)
        building = home / f"building-{os.getpid()}"
        done = subprocess.run([sys.executable, "-c", _BUILD_TABLES], capture_output=True, timeout=120,
                              env=child_env({"HYPOTHESIS_STORAGE_DIRECTORY": str(building)}),
                              stdin=subprocess.DEVNULL)
        built = building / "unicode_data"
        if done.returncode != 0 or not any(built.rglob("*.json.gz")):
            log.info("hypothesis tables: not built (exit %s)", done.returncode)
            return None
        try:
            built.rename(tables)  # atomic: another process that built them first wins
        except OSError:
            pass
        shutil.rmtree(building, ignore_errors=True)
        log.info("hypothesis tables: built in %s", tables)
        return tables if tables.is_dir() else None
    except (OSError, ImportError, subprocess.TimeoutExpired) as exc:
        log.info("hypothesis tables: not built (%s)", type(exc).__name__)
        return None
