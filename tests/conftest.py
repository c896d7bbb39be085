"""Shared fixtures: every test gets its own state folder and plain, fixed-width output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kata import session as session_module

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

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
