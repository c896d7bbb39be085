"""Shared fixtures: one fixed environment for the whole run; every test gets its own state folder
and plain, fixed-width output."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import kata.session.base as session_module

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


# --- one environment for every run, whatever the shell exports ----------------------------------
# kata, rich, click, pytest and pip all read the environment: a NO_COLOR, a COLUMNS=40, a LANG=C,
# a far time zone or a PYTHONDONTWRITEBYTECODE in the shell that runs the suite would change what
# the tests see. So before any test (and before the background validation, and every `kata`, pip
# or pytest process the tests start, which inherit os.environ) the variables that change output
# or behaviour are set to fixed values or removed. A test that wants colour, a width, a pager or
# a locale sets it itself (monkeypatch.setenv, or the env it passes to a child).

# removed: colour and terminal-size switches, pagers, the CLI's own settings and completion
_UNSET = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "PY_COLORS", "COLORTERM",
          "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES",
          "TERMINAL_WIDTH", "PAGER", "MANPAGER", "LESS", "LANGUAGE", "_KATA_COMPLETE",
          "_TYPER_STANDARD_TRACEBACK", "TYPER_USE_RICH", "_TYPER_FORCE_DISABLE_TERMINAL",
          "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_TIMEOUT",
          "PYTEST_THEME", "PYTEST_THEME_MODE", "PYTEST_DEBUG")
# PYTHON* variables that say where the interpreter and its packages are: kept (every other one,
# PYTHONWARNINGS, PYTHONOPTIMIZE, PYTHONDONTWRITEBYTECODE, PYTHONSAFEPATH..., is removed)
_PYTHON_KEPT = ("PYTHONPATH", "PYTHONHOME", "PYTHONPLATLIBDIR", "PYTHONEXECUTABLE", "PYTHONNOUSERSITE",
                "PYTHONUSERBASE")
# pip settings that say where pip finds packages and what it may take from there (the index, its
# certificates, a machine's constraints: tests/test_install.py installs from it): kept, from the
# environment and from pip's configuration files, which the tests' HOME=... would hide; every
# other pip setting (require-virtualenv, user, target, no-build-isolation...) goes
_PIP_INDEX = ("index-url", "extra-index-url", "find-links", "no-index", "trusted-host", "cert",
              "client-cert", "proxy", "timeout", "default-timeout", "retries", "keyring-provider",
              "cache-dir", "no-cache-dir", "disable-pip-version-check", "constraint", "only-binary",
              "prefer-binary", "no-binary")


def _pip_config_files() -> list[Path]:
    """pip's configuration files, lowest precedence first (pip/_internal/configuration.py)."""
    explicit = os.environ.get("PIP_CONFIG_FILE")
    if explicit == os.devnull:
        return []
    home = Path.home()
    system = [Path(d) / "pip" / "pip.conf"
              for d in (os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    user = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip"
    if sys.platform == "darwin":
        system = [Path("/Library/Application Support/pip/pip.conf")]
        if (home / "Library" / "Application Support" / "pip").is_dir():
            user = home / "Library" / "Application Support" / "pip"
    files = [*system, Path("/etc/pip.conf"), home / ".pip" / "pip.conf", user / "pip.conf",
             Path(sys.prefix) / "pip.conf"]
    return files + ([Path(explicit)] if explicit else [])


def _pip_index_settings() -> dict[str, str]:
    """{PIP_X: value} of the index settings in effect, the environment's over the files'."""
    import configparser

    found: dict[str, str] = {}
    for path in _pip_config_files():
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("global", "download", "wheel", "install"):  # a command's own section wins
            for key in _PIP_INDEX:
                if parser.has_option(section, key):
                    found[key] = " ".join(parser.get(section, key).split())
    settings = {"PIP_" + key.upper().replace("-", "_"): value for key, value in found.items()}
    for key in _PIP_INDEX:
        name = "PIP_" + key.upper().replace("-", "_")
        if name in os.environ:
            settings[name] = os.environ[name]
    return settings


def _utf8_locale() -> str | None:
    """A UTF-8 locale this machine has: C.UTF-8 (Linux), else en_US.UTF-8 (macOS)."""
    import locale

    current = locale.setlocale(locale.LC_CTYPE)
    try:
        for name in ("C.UTF-8", "en_US.UTF-8"):
            try:
                locale.setlocale(locale.LC_CTYPE, name)
                return name
            except locale.Error:
                continue
        return None
    finally:
        locale.setlocale(locale.LC_CTYPE, current)


def _hermetic_environment() -> dict[str, str | None]:
    """Fix os.environ for the run (see above); returns the shell's colour/width wishes for
    pytest's own report (`pytest_configure`)."""
    import atexit
    import tempfile
    import time

    env = os.environ
    shell = {k: env.get(k) for k in ("NO_COLOR", "FORCE_COLOR", "PY_COLORS", "TERM", "COLUMNS")}
    pip = _pip_index_settings()
    for name in list(env):
        if (name in _UNSET or name.startswith(("KATA_", "PIP_", "LC_"))
                or (name.startswith("PYTHON") and name not in _PYTHON_KEPT)):
            del env[name]
    env.update(pip)
    env["PIP_CONFIG_FILE"] = os.devnull  # the files' index settings are in the PIP_* above
    env["TERM"] = "xterm-256color"  # a stock terminal's; piped output is plain regardless
    env["TZ"] = "UTC"
    time.tzset()
    utf8 = _utf8_locale()
    if utf8:
        env["LANG"] = env["LC_ALL"] = utf8
    # kata's user state folder (platformdirs) and other per-user data: never the person's own
    home = Path(tempfile.mkdtemp(prefix="kata-tests-xdg-"))
    atexit.register(shutil.rmtree, home, True)
    env["XDG_STATE_HOME"] = str(home / "state")
    env["XDG_DATA_HOME"] = str(home / "data")
    return shell


_SHELL = _hermetic_environment()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """pytest's own report keeps the shell's colour and width wishes (--color=auto), though the
    tests no longer see them."""
    tw = config.get_terminal_writer() if config.pluginmanager.has_plugin("terminalreporter") else None
    if tw is None:
        return
    if config.getoption("color", "auto") == "auto":
        colours = _SHELL["PY_COLORS"]
        if colours in ("0", "1"):
            tw.hasmarkup = colours == "1"
        elif _SHELL["NO_COLOR"]:
            tw.hasmarkup = False
        elif _SHELL["FORCE_COLOR"]:
            tw.hasmarkup = True
        elif _SHELL["TERM"] == "dumb":
            tw.hasmarkup = False
    if (_SHELL["COLUMNS"] or "").isdigit() and int(_SHELL["COLUMNS"]) > 0:
        tw.fullwidth = int(_SHELL["COLUMNS"])


# The tests move kata's clock with $KATA_NOW: only this switch makes kata honour it (a `kata`
# process the tests launch turns it on through tests/kata_test_clock.py).
session_module.TEST_CLOCK = True


@pytest.fixture(autouse=True)
def isolated_state(tmp_path, monkeypatch):
    """Point the workbook's state (workspace/, .kata/) at a tmp dir; plain output. Any deadline
    keeper a test's sessions started under tmp_path is ended with the test."""
    from kata import views

    state = tmp_path / "state"
    monkeypatch.setenv("KATA_STATE_DIR", str(state))
    monkeypatch.setenv("KATA_PLAIN", "1")
    monkeypatch.delenv("KATA_WORKBOOK", raising=False)
    monkeypatch.delenv("KATA_NOW", raising=False)
    views.reset_console()
    yield state
    views.reset_console()
    end_keepers(tmp_path)


def end_keepers(root: Path) -> None:
    """End every deadline keeper whose pid file lies under `root` (kata/keeper.py)."""
    from kata import keeper

    for folder in {p.parent for p in root.rglob("keeper-*.pid")}:
        keeper.stop(folder)


@pytest.fixture
def fixture_workbook(tmp_path, monkeypatch):
    """A private copy of tests/fixtures/workbook (the tiny `adder` kata), selected by env var."""
    root = tmp_path / "wb"
    shutil.copytree(FIXTURES / "workbook", root)
    monkeypatch.setenv("KATA_WORKBOOK", str(root))
    return root


# --- the whole workbook's validation, in the background ----------------------------------------
# tests/test_katas.py's test_kata_validates needs `kata validate --all`: the suite's heaviest
# setup, mostly child processes on two cores. Started in its own process as soon as the suite is
# collected, it runs beside the other tests (which mostly wait on one child at a time), and its
# tests run last; the suite's wall time shrinks by about half of the rest's.

VALIDATES = "test_kata_validates"


def pytest_collection_modifyitems(session, config, items):
    validating = [item for item in items if getattr(item, "originalname", None) == VALIDATES]
    if not validating:
        return
    items[:] = [item for item in items if item not in validating] + validating
    _start_validation(config)


def _start_validation(config) -> None:
    import os
    import subprocess
    import sys
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kata-tests-validate-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_"))}
    env["KATA_STATE_DIR"] = str(folder / "state")
    out = (folder / "report.json").open("wb")
    err = (folder / "stderr.txt").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "kata", "--workbook", str(REPO), "validate", "--all",
                             "--json"], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                            cwd=folder)
    out.close()
    err.close()
    config.stash[_VALIDATION] = (proc, folder)


_VALIDATION = pytest.StashKey[tuple]()


def validation_report(config) -> dict:
    """The background `kata validate --all --json`'s report, once it has finished."""
    import json

    if _VALIDATION not in config.stash:  # collected without the hook (a plugin reordered?)
        _start_validation(config)
    proc, folder = config.stash[_VALIDATION]
    proc.wait()
    text = (folder / "report.json").read_text()
    try:
        return json.loads(text)
    except ValueError:
        stderr = (folder / "stderr.txt").read_text()[-3000:]
        raise AssertionError(f"kata validate --all exited {proc.returncode} without a report:\n{stderr}") from None


def pytest_unconfigure(config):
    """A run stopped early (Ctrl-C, -x) stops the validation too, and its folder goes."""
    import shutil
    import signal

    if _VALIDATION not in config.stash:
        return
    proc, folder = config.stash[_VALIDATION]
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # kata unwinds: its children and folders go with it
        try:
            proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - still running: kill it
            proc.kill()
            proc.wait()
    shutil.rmtree(folder, ignore_errors=True)
