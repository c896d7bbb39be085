"""The pytest plugin behind every grade: `--kata-impl`, the `impl` fixture, markers, event stream.

Registered through the `pytest11` entry point, so its options exist whatever folder pytest is
pointed at. It gives a kata's tests (graders/<slug>/ and katas/<slug>/test_visible.py):

* `impl`: the implementation under test, imported from `--kata-impl PATH` under a stable module
  name (the learner's module name, or `--kata-impl-module`). Without `--kata-impl` it is the
  reference solution solutions/<slug>.py, so a plain `pytest` checks every grader.
* markers `level(n)`, `points(p)`, `edge("what this case is about")`, copied into JUnit XML as
  properties.
* `--kata-events PATH`: one JSON line per event (collected tests, test start, test report), written
  with a single os.write each, so a child that dies mid-run still leaves every finished result and
  the name of the test it died in. The grading harness (kata/grading.py) reads this file.
* a derandomized hypothesis profile with no example database, loaded unless
  `--hypothesis-profile` is given: the same code gets the same score every run.

What it leaves out: process isolation, time and memory bounds are the harness's job.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

MESSAGE_CAP = 600  # characters of a failure's one-line message
DETAIL_CAP = 6000  # characters of a failure's full report (for visible checks)
OUTPUT_CAP = 2000  # characters of captured stdout/stderr kept per test

_impl_cache: dict[tuple[str, str], object] = {}  # (path, module name) -> module or ImplLoadError


class ImplLoadError(Exception):
    """The implementation file could not be imported; every test that needs it errors with this."""


# --- options and configuration ---------------------------------------------


def pytest_addoption(parser):
    group = parser.getgroup("kata", "kata workbook grading")
    group.addoption("--kata-impl", default=None, metavar="PATH",
                    help="implementation file to test (default: the kata's reference solution)")
    group.addoption("--kata-impl-module", default=None, metavar="NAME",
                    help="module name to import it under (default: the kata's learner module name)")
    group.addoption("--kata-events", default=None, metavar="PATH",
                    help="append one JSON line per test event to PATH")
    group.addoption("--kata-sweep", default=None, metavar="PATHS",
                    help="run every test once per implementation in PATHS (separated by "
                         f"'{os.pathsep}'); an implementation's remaining tests are skipped once "
                         "one of its tests fails (for bug zoos: one process, not one per bug)")


def pytest_configure(config):
    for line in (
        "level(n): the kata level this test belongs to (1-based)",
        "points(p): the test's weight within its level",
        'edge(text): what this case is about, revealed by "kata review"',
        "complexity: times the implementation against the reference (skipped by mutation runs, "
        "whose instrumented code is slower by design)",
    ):
        config.addinivalue_line("markers", line)
    _load_hypothesis_profile(config)
    config._kata_caught = set()  # sweep mode: implementations that have failed a test
    path = config.getoption("kata_events")
    config._kata_events_fd = (
        os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if path else None
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Load the grading profile before any conftest.py is imported: a `settings(...)` object
    built at import time copies the profile that is current at that moment."""
    if not any(str(a).startswith("--hypothesis-profile") for a in args):
        _register_profile(load=True)


def _register_profile(load: bool) -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is a dependency
        return
    settings.register_profile(
        "kata",
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    if load:
        settings.load_profile("kata")


def _load_hypothesis_profile(config) -> None:
    _register_profile(load=not config.getoption("hypothesis_profile", default=None))


def pytest_unconfigure(config):
    fd = getattr(config, "_kata_events_fd", None)
    if fd is not None:
        os.close(fd)
        config._kata_events_fd = None


# --- events -----------------------------------------------------------------


def _emit(config, event: dict) -> None:
    fd = getattr(config, "_kata_events_fd", None)
    if fd is not None:
        os.write(fd, (json.dumps(event) + "\n").encode())


def markers_of(item) -> dict:
    """level / points / edge of a test item (None where the marker is absent)."""
    level = item.get_closest_marker("level")
    points = item.get_closest_marker("points")
    edge = item.get_closest_marker("edge")
    return {
        "level": level.args[0] if level and level.args else None,
        "points": points.args[0] if points and points.args else None,
        "edge": edge.args[0] if edge and edge.args else None,
    }


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        for key, value in markers_of(item).items():
            if value is not None:
                item.user_properties.append((key, value))


def pytest_collection_finish(session):
    tests = []
    for item in session.items:
        entry = {"id": item.nodeid, **markers_of(item)}
        swept = _swept_impl(item)
        if swept is not None:
            entry["impl"] = swept
        tests.append(entry)
    _emit(session.config, {"event": "collected", "tests": tests})


# --- sweep mode: one process grades many implementations --------------------

SWEEP_SKIP = "already caught by an earlier test"


def _sweep_paths(config) -> list[str]:
    raw = config.getoption("kata_sweep")
    return [p for p in raw.split(os.pathsep) if p] if raw else []


def _swept_impl(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("impl") if callspec is not None else None


def pytest_generate_tests(metafunc):
    paths = _sweep_paths(metafunc.config)
    if paths and "impl" in metafunc.fixturenames:
        metafunc.parametrize("impl", paths, indirect=True, scope="module",
                             ids=[Path(p).stem for p in paths])


def pytest_runtest_setup(item):
    swept = _swept_impl(item)
    if swept is not None and swept in item.config._kata_caught:
        pytest.skip(SWEEP_SKIP)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    swept = _swept_impl(item)
    if swept is not None and report.failed:
        item.config._kata_caught.add(swept)


# logstart/logreport hooks get no config argument: keep the session's here
_CONFIG: list = [None]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG[0] = session.config
    # A session imports the implementation afresh. One process can hold several sessions
    # (mutation testing runs the clean suite, then forks a session per mutant); a module kept
    # from an earlier one would carry its state over, e.g. a memo table filled by the clean run
    # that hides every mutant of the code that fills it.
    _impl_cache.clear()


def pytest_runtest_logstart(nodeid, location):
    cfg = _CONFIG[0]
    if cfg is not None:
        _emit(cfg, {"event": "start", "id": nodeid})


def _one_line_message(report) -> str:
    """The failure's headline: the exception line, without pytest's rewritten 'assert' dump."""
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (file, line, reason)
        text = str(longrepr[2])
    else:
        text = str(longrepr).strip().splitlines()[-1] if longrepr else ""
    # "AssertionError: Called f(1). Returned 2, expected 3.\nassert 2 == 3" -> keep the author's part
    text = text.split("\nassert ")[0]
    for prefix in ("AssertionError: ", "Failed: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text.startswith("Timeout (>") and "pytest-timeout" in text:
        text = "timed out after " + text[len("Timeout (>"):].split(")")[0]
    elif text.startswith("SystemExit"):
        text = f"the code called sys.exit() ({text})"
    return text[:MESSAGE_CAP]


def pytest_runtest_logreport(report):
    cfg = _CONFIG[0]
    if cfg is None:
        return
    event = {
        "event": "report",
        "id": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,  # passed | failed | skipped
        "duration": round(report.duration, 6),
    }
    if report.failed or report.skipped:
        event["message"] = _one_line_message(report)
        if report.failed:
            event["detail"] = report.longreprtext[-DETAIL_CAP:]
    output = (report.capstdout or "") + (report.capstderr or "")
    if output:
        event["output"] = output[:OUTPUT_CAP]
    _emit(cfg, event)


def pytest_sessionfinish(session, exitstatus):
    _emit(session.config, {"event": "finish", "exitstatus": int(exitstatus)})


# --- the impl fixture -------------------------------------------------------


def _resolve_impl(request) -> tuple[Path, str]:
    """(file to import, module name) for the test requesting `impl`."""
    from kata.catalog import CatalogError, find_kata_for_test_file, load_kata

    config = request.config
    explicit = config.getoption("kata_impl")
    module_name = config.getoption("kata_impl_module")
    found = find_kata_for_test_file(Path(str(request.node.path)))
    kata = None
    if found is not None:
        root, slug = found
        try:
            kata = load_kata(root, slug)
        except CatalogError as exc:
            raise ImplLoadError(str(exc)) from None
    if explicit:
        path = Path(explicit)
    elif kata is not None:
        path = kata.solution
    else:
        raise ImplLoadError(
            "the impl fixture needs --kata-impl PATH outside graders/<slug>/ and katas/<slug>/"
        )
    if module_name is None:
        module_name = kata.module_name if kata is not None else path.stem.replace("-", "_")
    return path.resolve(), module_name


def load_impl(path: Path, module_name: str):
    """Import `path` as module `module_name`, once per process. Failures become ImplLoadError."""
    key = (str(path), module_name)
    if key in _impl_cache:
        cached = _impl_cache[key]
        if isinstance(cached, ImplLoadError):
            raise cached
        return cached
    try:
        if not path.is_file():
            raise ImplLoadError(f"{path}: no such file")
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit and friends included: report, never exit
            sys.modules.pop(module_name, None)
            if isinstance(exc, KeyboardInterrupt):
                raise
            where = ""
            if isinstance(exc, SyntaxError) and exc.lineno:
                where = f" at line {exc.lineno}"
            raise ImplLoadError(
                f"importing {path.name} raised {type(exc).__name__}{where}: {exc}"
            ) from None
    except ImplLoadError as exc:
        _impl_cache[key] = exc
        raise
    _impl_cache[key] = module
    return module


@pytest.fixture(scope="module")
def impl(request):
    """The implementation under test, as a module: `impl.SomeClass(...)`.

    Module-scoped: it is the same module object for every test of a file (it is imported once per
    process anyway), which also lets hypothesis's @given tests use it without a health-check error.
    """
    path, module_name = _resolve_impl(request)
    if getattr(request, "param", None) is not None:  # sweep mode
        path = Path(request.param).resolve()
    try:
        return load_impl(path, module_name)
    except ImplLoadError as exc:
        pytest.fail(str(exc), pytrace=False)
