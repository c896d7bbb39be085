"""The grading sandbox (kata/sandbox.py): decided by a trial run, and what the child can reach in it.

Tests that need bubblewrap skip where it does not work here (CI installs it); the unsandboxed path
is tested everywhere with KATA_SANDBOX=off.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from kata import sandbox
from kata.catalog import load_kata
from kata.grading import PASS, grade
from tests.test_grading import ADDER_REST, FAST, by_name, hostile

needs_bwrap = pytest.mark.skipif(sandbox.status() is not None,
                                 reason=f"no working bubblewrap here ({sandbox.status()})")


@pytest.fixture
def adder(fixture_workbook):
    return load_kata(fixture_workbook, "adder")


@pytest.fixture
def fresh_status(monkeypatch):
    """Forget the cached trial, and restore it afterwards."""
    monkeypatch.setattr(sandbox, "_STATUS", {})


def test_an_installed_bwrap_that_refuses_to_run_is_not_used(fresh_status, monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("KATA_SANDBOX", raising=False)
    reason = sandbox.status()
    assert reason is not None and "installed but refused" in reason and "Permission denied" in reason
    line = sandbox.status_line()
    assert line.startswith("grading is not sandboxed") and "apt-get install bubblewrap" in line
    assert "\n" not in line
    assert sandbox.wrap(["python"], []) == ["python"]  # grading runs as before
    fake.unlink()
    assert sandbox.status() == reason  # decided once per process


def test_no_bwrap_on_path_is_said_in_one_line(fresh_status, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KATA_SANDBOX", raising=False)
    assert "bwrap is not on PATH" in sandbox.status_line()


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv("KATA_SANDBOX", "off")
    assert not sandbox.available() and sandbox.status_line() == "grading is not sandboxed (KATA_SANDBOX=off)"


SPY = '''
import pathlib
import kata

_tried = [pathlib.Path(kata.__file__).resolve().parents[1] / "solutions",  # beside an editable kata/
          pathlib.Path(kata.__file__).resolve().parent / "solutions",       # inside a wheel's kata/
          pathlib.Path("__ROOT__") / "solutions" / "adder.py",               # the workbook itself
          pathlib.Path("__ROOT__") / "graders" / "adder" / "test_adder.py",
          pathlib.Path(__file__).resolve().parents[1] / "wb" / "solutions" / "adder.py",
          *([pathlib.Path(__file__).resolve().parents[1] / "wb" / "graders"] if __VISIBLE__ else [])]


def _readable():
    seen = []
    for path in _tried:
        files = [p for p in path.rglob("*.py")] if path.is_dir() else [path]
        for f in files:
            try:
                f.read_bytes()
                seen.append(str(f))
            except OSError:
                pass
    return seen


def add(a, b):
    seen = _readable()
    print("READABLE:", seen)
    return a + b if not seen else -1

''' + ADDER_REST


@needs_bwrap
@pytest.mark.parametrize("suite", ["visible", "hidden"])
def test_the_child_cannot_read_the_reference_or_the_graders_sources(adder, tmp_path, suite):
    """Not through the workbook, nor beside or inside the installed package, nor in its private
    copy: `kata check` sees no hidden test at all; a hidden run sees only the suite it runs (which
    is in its memory anyway) and no reference (this suite does not load it in-process)."""
    spy = tmp_path / "adder.py"
    spy.write_text(SPY.replace("__ROOT__", str(adder.root))
                   .replace("__VISIBLE__", str(suite == "visible")))
    result = grade(adder, spy, suite=suite, limits=FAST)
    test_add = by_name(result)["test_add"]
    assert test_add.status == PASS, (test_add.message, test_add.output)


def test_without_the_sandbox_the_same_spy_reads_them(adder, tmp_path, monkeypatch):
    """The spy's probe works: unsandboxed, the workbook is in reach (the README says so)."""
    monkeypatch.setenv("KATA_SANDBOX", "off")
    spy = tmp_path / "adder.py"
    spy.write_text(SPY.replace("__ROOT__", str(adder.root)).replace("__VISIBLE__", "False"))
    result = grade(adder, spy, suite="hidden", limits=FAST)
    assert by_name(result)["test_add"].status != PASS


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and \
                        (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@needs_bwrap
def test_a_process_left_behind_dies_with_the_run(adder, tmp_path, monkeypatch):
    import tempfile

    marker = tmp_path / "runs"
    marker.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(marker))  # every private copy lives under it
    result = grade(adder, hostile("escape", tmp_path), limits=FAST)
    assert result.status == PASS, result
    time.sleep(3)
    assert _alive(str(marker)) == []


@needs_bwrap
def test_a_rewritten_private_copy_is_out_of_reach_in_the_sandbox(adder):
    from tests.test_grading import HOSTILE

    result = grade(adder, HOSTILE / "rewrite_private_copy.py", limits=FAST)
    tests = by_name(result)
    assert not result.tampered, result.tampered  # the copy is read-only: nothing changed
    assert tests["test_neg"].status != PASS and result.points_earned < 30


TABLES_SPY = '''
import os
import pathlib


def _tables_ok():
    home = pathlib.Path(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"]) / "unicode_data"
    tables = sorted(home.rglob("charmap.json.gz"))
    try:
        (tables[0].parent / "planted.json.gz").write_bytes(b"")
        return False  # a child could change what the next one generates
    except (OSError, IndexError):
        return bool(tables)


def add(a, b):
    return a + b if _tables_ok() else -1

''' + ADDER_REST


@needs_bwrap
def test_hypothesis_unicode_tables_are_built_once_and_read_only_in_the_child(adder, tmp_path, monkeypatch):
    """A child that draws text does not rebuild hypothesis's Unicode tables (0.3-1.5 s per run):
    they are built once, by a child with no learner code, and no child can change them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sandbox, "_TABLES", {})
    tables = sandbox.unicode_tables()
    assert tables is not None and tables.is_relative_to(tmp_path / "cache")
    assert sorted(p.name for p in tables.rglob("*.json.gz")) == ["charmap.json.gz", "codec-v2-utf-8.json.gz"]
    spy = tmp_path / "adder.py"
    spy.write_text(TABLES_SPY)
    result = grade(adder, spy, suite="hidden", limits=FAST)
    assert by_name(result)["test_add"].status == PASS, by_name(result)["test_add"].output
    assert not any(tables.rglob("planted*"))
    monkeypatch.setattr(sandbox, "_TABLES", {})
    assert sandbox.unicode_tables() == tables  # built once: found again by the next process


TMP_FILL = '''
def add(a, b):
    """The right sum only if the sandbox's /tmp filled up before 3 files of 100 MiB were written."""
    import os

    block = b"z" * (1 << 20)
    try:
        for n in range(3):
            with open(f"/tmp/fill-{n}", "wb") as f:
                for _ in range(100):
                    f.write(block)
    except OSError:  # ENOSPC: the tmpfs is capped
        return a + b
    finally:
        for n in range(3):
            try:
                os.unlink(f"/tmp/fill-{n}")
            except OSError:
                pass
    return a + b + 1
''' + ADDER_REST


@needs_bwrap
def test_the_sandbox_tmp_is_capped(adder, tmp_path):
    """The sandbox's /tmp is memory that no limit of the child counts: it is capped, so a child
    cannot fill the machine's memory through it (3 x 100 MiB against a 256 MiB cap)."""
    assert sandbox.TMPFS_BYTES < 300 * 1024**2
    fill = tmp_path / "adder.py"
    fill.write_text(TMP_FILL)
    result = grade(adder, fill, limits=FAST)
    test_add = by_name(result)["test_add"]
    assert test_add.status == PASS, (test_add.message, test_add.output)
