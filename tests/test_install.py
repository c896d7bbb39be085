"""Install anywhere: a wheel built from this tree, installed (not editable) in a fresh venv, makes
a workbook with `kata init` and grades in it, and writes nothing under site-packages.

Slow-ish (a venv and its dependencies from the package index: 15-40 s alone, about a minute on a
busy machine), so one test does the whole flow; it is skipped where no package index can be
reached (pip fails at install). The wheel is built from a private copy of the tree: pip builds a
source folder in place (its build/ and *.egg-info/), so two builds of the repository at once (a
second test run, tests/test_serve.py's wheel) would share and break each other's build folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO


def _run(cmd, cwd, env, check=True):
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert out.returncode == 0, f"{cmd}: {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _files_under(folder: Path) -> set[str]:
    return {str(p) for p in folder.rglob("*")}


# what pytest writes beside every plugin module it loads (its assertion-rewriting cache), in any
# venv, for any project, unless bytecode writing is off: pytest's own, not kata's
_PYTEST_REWRITE_CACHE = re.compile(r"/__pycache__/[^/]+\.cpython-\d+-pytest-[^/]+\.pyc$")


def _source_tree(dest: Path) -> Path:
    """A copy of what a build of this tree reads (its top-level files, the package and the
    content setup.py ships), without caches or an earlier build's leftovers."""
    from kata.catalog import CONTENT

    junk = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "*.egg-info",
                                  "node_modules")
    dest.mkdir()
    for path in REPO.iterdir():
        if path.is_file():
            shutil.copy2(path, dest / path.name)
    for name in ("kata", *CONTENT):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name, ignore=junk)
    return dest


def test_a_wheel_installs_anywhere_and_kata_init_makes_a_working_workbook(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path / "home")
    env["XDG_STATE_HOME"] = str(tmp_path / "home" / "state")
    env["XDG_CACHE_HOME"] = str(tmp_path / "home" / "cache")
    wheels = tmp_path / "wheels"
    source = _source_tree(tmp_path / "source")
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
                 cwd=tmp_path, env=env, check=False)
    if built.returncode != 0:
        pytest.skip(f"could not build a wheel here: {built.stderr.strip().splitlines()[-1:]}")
    (wheel,) = wheels.glob("kata_workbook-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=env)
    installed = _run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], cwd=tmp_path, env=env,
                     check=False)
    if installed.returncode != 0:
        pytest.skip(f"no package index reachable: {installed.stderr.strip().splitlines()[-1:]}")
    site = next((venv / "lib").glob("python3*/site-packages"))
    # one top-level package, with the workbook's content inside it
    assert (site / "kata" / "_content" / "katas" / "lru-kv-cache" / "kata.toml").is_file()
    assert not any((site / name).exists() for name in ("engine", "cli.py", "katas", "graders", "solutions"))
    before = _files_under(site)
    time.sleep(0.01)

    kata = str(venv / "bin" / "kata")
    empty = tmp_path / "empty"
    empty.mkdir()
    _run([kata, "init", "wb"], cwd=empty, env=env)
    wb = empty / "wb"
    start = _run([kata, "start", "lru-kv-cache", "--yes"], cwd=wb, env=env)
    assert "Session 1 started" in start.stdout
    assert not (wb / "solutions").exists()  # a learner's workbook: the references stay in the package
    shutil.copyfile(site / "kata" / "_content" / "solutions" / "lru-kv-cache.py", wb / "workspace" / "lru_kv_cache.py")
    sub = _run([kata, "submit", "--json"], cwd=wb, env=env)
    assert '"points_earned": 40' in sub.stdout, sub.stdout[-2000:]
    assert (wb / ".kata" / "kata.db").is_file()

    # with no workbook around, the packaged katas are used and state goes to the user state folder
    listing = _run([kata, "list"], cwd=empty, env=env)
    assert "lru-kv-cache" in listing.stdout
    _run([str(venv / "bin" / "python"), "-m", "kata", "--version"], cwd=empty, env=env)
    assert _files_under(site) == before, sorted(_files_under(site) - before)[:10]  # kata wrote nothing there

    # an unrelated project in the same venv keeps hypothesis' defaults and has no `impl`
    other = tmp_path / "other"
    other.mkdir()
    (other / "test_other.py").write_text(
        "from hypothesis import settings\n\ndef test_defaults(request):\n"
        "    assert settings.get_current_profile_name() in ('default', 'ci')\n"
        "    assert 'impl' not in request.fixturenames\n")
    _run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=other, env=env)

    added = sorted(p for p in _files_under(site) - before if not _PYTEST_REWRITE_CACHE.search(p))
    assert not added and before <= _files_under(site), added[:10]
