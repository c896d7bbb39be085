"""Per-child control groups (kata/cgroups.py): a fork bomb stops at its own limit, a daemon that
escaped the process group dies with the run, and no group is left behind. These need a system that
lets kata make control groups (root, as CI runs); elsewhere they skip."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kata import cgroups
from kata.catalog import load_kata
from kata.grading import PASS, grade
from tests.test_grading import ADDER_REST, FAST, by_name, hostile
from tests.test_sandbox import _alive

needs_groups = pytest.mark.skipif(cgroups.status() is not None,
                                  reason=f"no control groups here ({cgroups.status()})")


@pytest.fixture
def adder(fixture_workbook):
    return load_kata(fixture_workbook, "adder")


def _groups() -> set[str]:
    """The groups this process made and has not removed (other processes grade beside it: the
    suite's background validation, say)."""
    import os

    found = set()
    for root in (cgroups.ROOT, *(cgroups.ROOT / c for c in ("pids", "cpu", "memory"))):
        if root.is_dir():
            found |= {str(p) for p in root.rglob(f"kata-{os.getpid()}-*") if p.is_dir()}
    return found


FORK_BOMB = '''
def add(a, b):
    """The right sum only if forking stopped short of 1000 live processes (the group's limit)."""
    import os
    import time

    children = []
    try:
        for _ in range(1000):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError:  # EAGAIN: the group's process limit
        return a + b
    finally:
        for pid in children:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
    return a + b + 1
''' + ADDER_REST


@needs_groups
@pytest.mark.parametrize("sandboxed", [True, False])
def test_a_fork_bomb_stops_at_its_own_limit(adder, tmp_path, monkeypatch, sandboxed):
    if not sandboxed:
        monkeypatch.setenv("KATA_SANDBOX", "off")
    bomb = tmp_path / "adder.py"
    bomb.write_text(FORK_BOMB)
    assert _groups() == set()
    result = grade(adder, bomb, limits=FAST)
    assert by_name(result)["test_add"].status == PASS, by_name(result)["test_add"]
    assert _groups() == set()  # every group the run made is gone


@needs_groups
def test_a_daemon_that_escaped_the_process_group_dies_with_the_run_unsandboxed(adder, tmp_path,
                                                                                 monkeypatch):
    """Without the sandbox's PID namespace, a double fork and setsid outlived the run; the
    run's control group still holds it, and the end of the run kills it."""
    import tempfile

    monkeypatch.setenv("KATA_SANDBOX", "off")
    marker = tmp_path / "runs"
    marker.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(marker))  # every private copy lives under it
    result = grade(adder, hostile("escape", tmp_path), limits=FAST)
    assert result.status == PASS, result
    time.sleep(1)
    assert _alive(str(marker)) == []


def test_groups_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(cgroups, "_STATUS", {})
    monkeypatch.setenv("KATA_CGROUPS", "off")
    assert cgroups.status() == "turned off (KATA_CGROUPS=off)"
    assert cgroups.create(1 << 30) is None
    assert isinstance(cgroups.ROOT, Path)
