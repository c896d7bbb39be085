"""The pytest11 entry point: kata's options everywhere, its grading plugin only where it belongs.

Installing kata must not change other projects that share its environment. So this module, which
pytest loads in every run, only registers the `--kata-*` options (an option pytest does not know is
an error, and the harness passes them from outside any workbook). The grading plugin itself
(kata/pytest_plugin.py: the `impl` fixture, the level/points/edge markers, the derandomized
hypothesis profile, the event stream) is registered only when

* a `--kata-*` option is on the command line (the grading harness, `kata validate`, mutation runs), or
* pytest runs inside a workbook: the current folder, or a path given on the command line, is a
  workbook's root (a folder with katas/ and graders/) or lies in its katas/, graders/,
  workspace/, solutions/ or tests/ (a learner typing `pytest graders/<slug> --kata-impl
  workspace/x.py`, or this project's own tests).

Example: `pytest` in an unrelated project keeps hypothesis' default settings and sees no `impl`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PLUGIN = "kata.pytest_plugin"


def pytest_addoption(parser):
    group = parser.getgroup("kata", "kata workbook grading")
    group.addoption("--kata-impl", default=None, metavar="PATH",
                    help="implementation file to test (default: the kata's reference solution)")
    group.addoption("--kata-impl-module", default=None, metavar="NAME",
                    help="module name to import it under (default: the kata's learner module name)")
    group.addoption("--kata-events", default=None, metavar="PATH",
                    help="append one JSON line per test event to PATH (fd:N: to inherited file "
                         "descriptor N)")
    group.addoption("--kata-suite", default=None, metavar="SLUG",
                    help="run the kata's hidden suite (the installed catalog's) on your workspace "
                         "file (--kata-impl: another file); refused for a live session's katas")
    group.addoption("--kata-levels", default=None, metavar="N,N",
                    help="run only the tests of these levels (an exam question's, or the levels "
                         "open so far); the others are deselected")
    group.addoption("--kata-sweep", default=None, metavar="PATHS",
                    help="run every test once per implementation in PATHS (separated by "
                         f"'{os.pathsep}'); an implementation's remaining tests are skipped once "
                         "one of its tests fails (for bug zoos: one process, not one per bug)")
    group.addoption("--kata-boundary", default="auto", choices=("auto", "on", "off"),
                    help="run the implementation in a process of its own, the tests talking to it "
                         "(auto: where the kata's kata.toml says process_boundary)")
    group.addoption("--kata-boundary-sandbox", action="store_true", default=False,
                    help="start that process in a sandbox of its own (inside the grading child's)")
    group.addoption("--kata-strike", default=None, type=float, metavar="SECONDS",
                    help="the per-test time limit once two tests of the run have timed out "
                         "(default: --timeout's)")
    group.addoption("--kata-timed-out", default=0, type=int, metavar="N",
                    help="tests of this run that timed out before this process started")


# the folders of a workbook where its pytest runs live (tests/: this project's own suite)
_KATA_FOLDERS = ("katas", "graders", "workspace", "solutions", "tests")


def _in_workbook(path: Path) -> bool:
    """`path` is a workbook's root (a folder with katas/ and graders/, or a learner's with
    workbook.toml) or lies in one of its kata folders; a project that merely sits somewhere below
    a workbook (a temporary folder inside a checkout, say) is left alone."""
    path = path.resolve()
    for root in (path, *path.parents):
        if (root / "katas").is_dir() and (root / "graders").is_dir():
            return path == root or any(path.is_relative_to(root / f) for f in _KATA_FOLDERS)
        if _learner_marker(root / "workbook.toml"):  # a learner's workbook: its tests are in workspace/
            return path == root or path.is_relative_to(root / "workspace")
    return False


def _learner_marker(path: Path) -> bool:
    """`path` is the workbook.toml `kata init` writes for a learner (not another tool's file)."""
    try:
        return path.is_file() and 'layout = "learner"' in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def wanted(args: list[str], cwd: Path) -> bool:
    """Whether this pytest run is kata's: a --kata-* option, or the run is inside a workbook."""
    strs = [str(a) for a in args]
    if any(a.startswith("--kata-") for a in strs):
        return True
    if _in_workbook(cwd):
        return True
    for a in strs:
        if a.startswith("-"):
            continue
        candidate = Path(a.split("::", 1)[0])
        if candidate.exists() and _in_workbook(candidate if candidate.is_dir() else candidate.parent):
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Decide before any conftest.py is imported: the hypothesis profile must be current when a
    conftest builds a `settings(...)` object at import time."""
    if early_config.pluginmanager.has_plugin(PLUGIN):
        return
    if not wanted(list(args) + list(early_config.invocation_params.args), Path.cwd()):
        return
    suite = early_config.known_args_namespace.kata_suite
    if suite:
        args.extend(_suite_args(suite, early_config.known_args_namespace.kata_impl))
    from kata import pytest_plugin

    early_config.pluginmanager.register(pytest_plugin, PLUGIN)
    if not any(str(a).startswith("--hypothesis-profile") for a in args):
        pytest_plugin._register_profile(load=True)


def _suite_args(slug: str, impl: str | None) -> list[str]:
    """`--kata-suite SLUG`: the hidden suite's folder (in the installed catalog) and the learner's
    workspace file as --kata-impl, for the workbook here; a usage error for a kata of a live
    session, whose hidden tests' names and messages stay hidden until it ends."""
    from kata import session
    from kata.catalog import CatalogError, Workbook

    try:
        wb = Workbook.find()
        kata = wb.kata(slug)
        live = session.live_session(wb) if (wb.kata_dir / "kata.db").is_file() else None
    except CatalogError as exc:
        raise pytest.UsageError(f"--kata-suite {slug}: {exc}") from None
    finally:
        session.close_stores()
    if live is not None and kata.slug in live.katas:
        raise pytest.UsageError(f"--kata-suite {slug}: session {live.id} holding it is live, and its "
                                "hidden tests stay hidden until it ends: `kata submit` grades it")
    if not kata.grader.is_dir():
        raise pytest.UsageError(f"--kata-suite {slug}: this installation has no hidden suite for it "
                                "(a student bundle?)")
    return [str(kata.grader)] + ([] if impl else ["--kata-impl", str(wb.workspace_file(kata))])
