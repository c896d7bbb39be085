"""The pytest plugin behind every grade: `--kata-impl`, the `impl` fixture, markers, event stream.

Registered by kata/pytest_entry.py (the `pytest11` entry point, which owns the `--kata-*` options)
only in runs that are kata's: a `--kata-*` option given, or pytest run inside a workbook. It gives a kata's tests (graders/<slug>/ and katas/<slug>/test_visible.py):

* `impl`: the implementation under test, imported from `--kata-impl PATH` under a stable module
  name (the learner's module name, or `--kata-impl-module`). Without `--kata-impl` it is the
  reference solution solutions/<slug>.py, so a plain `pytest` checks every grader.
* markers `level(n)`, `points(p)`, `edge("what this case is about")`, copied into JUnit XML as
  properties.
* `--kata-events PATH`: one JSON line per event (collected tests, test start, test report), written
  with a single os.write each, so a child that dies mid-run still leaves every finished result and
  the name of the test it died in. The grading harness passes `fd:N`, an inherited pipe, and reads
  the other end (kata/child.py): nothing on disk that the learner's code could replace.
* a derandomized hypothesis profile with no example database, loaded unless
  `--hypothesis-profile` is given: the same code gets the same score every run.

When the harness grades (kata/grading.py), it also hands the plugin a secret through an inherited
pipe ($KATA_SECRET_FD, read and closed before any learner code runs): a key that signs every event
(with a sequence number, so no line can be forged, replayed or reordered unseen) and the names of
canary tests to insert, which must fail for every implementation. The plugin then imports the
implementation once, between "import" events, before the first test (so a module that hangs or
exits at import gets one verdict, not one per test), and checks that pytest's reporting
machinery, its own functions, the graders' helpers and the tests are the objects, running the
code, it saw before the learner's module was imported: right before and right after each test's
call, in the report of that call, after the test, and at the call itself (the frame pytest calls
must run the test's own code, so a test swapped for a moment and back is seen too); "tampered"
event otherwise.

What it leaves out: process isolation, time and memory bounds are the harness's job. Code running
in the same process can always, with enough effort, read the plugin's memory: see docs/GRADING.md's
"what a determined learner can still do".
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

import _pytest.python
import pytest

from kata import strict as _strict  # the graders' comparisons: their trusted types taken now

# Captured when pytest loads the plugin, before any learner code: events are written with these
# even if the learner's module later replaces os.write or json.dumps.
_os_write, _json_dumps, _hmac_new, _sha256 = os.write, json.dumps, hmac.new, hashlib.sha256
_setprofile, _getprofile, _FunctionType = sys.setprofile, sys.getprofile, types.FunctionType
# the frame a test function's own frame is called from (pytest's pytest_pyfunc_call)
_PYFUNC_CALL = _pytest.python.pytest_pyfunc_call
_PYFUNC_CODE = _PYFUNC_CALL.__code__
SECRET_FD_ENV = "KATA_SECRET_FD"

MESSAGE_CAP = 600  # characters of a failure's one-line message
DETAIL_CAP = 6000  # characters of a failure's full report (for visible checks)
OUTPUT_CAP = 2000  # characters of captured stdout/stderr kept per test

_impl_cache: dict[tuple[str, ...], object] = {}  # (path, module name) -> module or ImplLoadError


class ImplLoadError(Exception):
    """The implementation file could not be imported; every test that needs it errors with this."""


# --- options and configuration ---------------------------------------------


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
    config._kata_events_fd = _events_fd(config.getoption("kata_events"))
    secret = _read_secret()
    config._kata_key = secret.get("key", "").encode()
    config._kata_canaries = list(secret.get("canaries", []))  # [(name, position in 0..1)]
    config._kata_seq = 0
    config._kata_watch = None  # tamper watch, armed before the implementation is imported
    config._kata_tampered = False


def _events_fd(path: str | None) -> int | None:
    """`--kata-events fd:N` writes to an inherited pipe (the harness's way: nothing on disk the
    learner's code could replace); any other value is a file appended to."""
    if not path:
        return None
    if path.startswith("fd:") and path[3:].isdigit():
        return int(path[3:])
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def _read_secret() -> dict:
    """The harness's secret, from the pipe named by $KATA_SECRET_FD; the fd is closed and the
    variable removed, so nothing the learner runs later can read it again."""
    fd = os.environ.pop(SECRET_FD_ENV, None)
    if fd is None:
        return {}
    try:
        chunks = []
        while True:
            chunk = os.read(int(fd), 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(int(fd))
        return json.loads(b"".join(chunks) or b"{}")
    except (OSError, ValueError):
        return {}


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
    """Append one event line. Under the harness each line carries a sequence number and a
    signature over its body: {"n": 7, ..., "sig": hmac(key, body)}."""
    fd = getattr(config, "_kata_events_fd", None)
    if fd is None:
        return
    key = getattr(config, "_kata_key", b"")
    if key:
        config._kata_seq += 1
        body = _json_dumps({"n": config._kata_seq, **event}, sort_keys=True)
        sig = _hmac_new(key, body.encode(), _sha256).hexdigest()
        line = _json_dumps({"body": body, "sig": sig})
    else:
        line = _json_dumps(event)
    _os_write(fd, (line + "\n").encode())


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
    _select_levels(config, items)
    _insert_canaries(config, items)
    for item in items:
        for key, value in markers_of(item).items():
            if value is not None:
                item.user_properties.append((key, value))


def _select_levels(config, items) -> None:
    raw = config.getoption("kata_levels")
    if not raw:
        return
    wanted = {int(x) for x in raw.split(",") if x.strip()}
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if markers_of(item)["level"] in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# --- canaries: tests that must fail, whatever the implementation -------------

_CANARY_SOURCE = "def {name}():\n    assert sum(range(3)) == 4, 'this test must fail'\n"


def _insert_canaries(config, items) -> None:
    """Insert the harness's canary tests among the real ones, at the positions it chose.

    Each canary is compiled under its neighbour's file name, takes its neighbour's markers and
    fails with a plain assert: nothing but its name (random, known only to the harness) sets it
    apart. If a canary is reported passed, the reports were forged.
    """
    canaries = getattr(config, "_kata_canaries", None)
    if not canaries or not items or _sweep_paths(config):
        return
    for name, position in canaries:
        index = min(len(items) - 1, max(0, int(float(position) * len(items))))
        neighbour = items[index]
        module = neighbour.getparent(pytest.Module) or neighbour.parent
        namespace: dict = {}
        exec(compile(_CANARY_SOURCE.format(name=name), str(neighbour.path), "exec"), namespace)
        canary = pytest.Function.from_parent(module, name=name, callobj=namespace[name])
        for marker in neighbour.iter_markers():
            if marker.name in ("level", "points", "edge"):
                canary.add_marker(getattr(pytest.mark, marker.name)(*marker.args, **marker.kwargs))
        items.insert(index, canary)


def pytest_collection_finish(session):
    tests = []
    for item in session.items:
        entry = {"id": item.nodeid, **markers_of(item)}
        swept = _swept_impl(item)
        if swept is not None:
            entry["impl"] = swept
        tests.append(entry)
    config = session.config
    config._kata_items_seen = list(session.items)
    _emit(config, {"event": "collected", "tests": tests})
    # Arm the tamper watch now, with every grader module imported and no learner code yet.
    config._kata_watch = _TamperWatch(config)
    explicit = config.getoption("kata_impl")
    if explicit and not _sweep_paths(config) and session.items:
        # Import the implementation once, now, so that a module that hangs, crashes or exits at
        # import is seen as such, once (the harness bounds this phase), not once per test.
        _emit(config, {"event": "import", "state": "start"})
        module_name = config.getoption("kata_impl_module") or Path(explicit).stem
        error, module = None, None
        apart = _boundary(config, session.items[0].path)
        try:
            if apart:
                from kata import boundary

                boundary.MODE["one_cpu"] = str(config.getoption("kata_events") or "").startswith("fd:")
                load_remote(config, Path(explicit).resolve(), module_name)
            else:
                module = load_impl(Path(explicit).resolve(), module_name)
        except ImplLoadError as exc:
            error = str(exc)
        _emit(config, {"event": "import", "state": "done", "error": error})
        _check_tampering(config, "importing the implementation")
        if module is not None and not config._kata_tampered:
            forged = equal_to_anything(module)
            if forged:
                config._kata_tampered = True
                _emit(config, {"event": "tampered", "when": "importing the implementation",
                               "what": [f"{forged} compares equal to anything"]})


# --- the tamper watch -------------------------------------------------------


def equal_to_anything(module) -> str | None:
    """The name of a class in `module` whose instances compare equal to a fresh object(), if any.

    No honest value equals an object it has never seen; a value that does would pass every
    `got == expected` a grader writes. Checks every class in the module's namespace, the class of
    every top-level value, and what a module-level __getattr__ hands out: imported or not (a
    class can name any module as its own), none of them may.
    """
    sentinel = object()
    candidates = []
    for name, value in list(vars(module).items()):
        if isinstance(value, type):
            candidates.append((name, None, value))
        elif not isinstance(value, types.ModuleType):
            candidates.append((name, value, type(value)))
    hook = vars(module).get("__getattr__")
    if callable(hook):
        try:
            value = hook("kata_probe_attribute")
            candidates.append(("__getattr__", value, type(value)))
        except Exception:  # noqa: BLE001 - an AttributeError is what an honest hook raises
            pass
    for name, value, cls in candidates:
        if "__eq__" not in {k for klass in cls.__mro__[:-1] for k in vars(klass)}:
            continue
        try:
            probe = value if value is not None else cls.__new__(cls)  # type: ignore[call-overload]  # any class: its own __new__, no __init__
            if (probe == sentinel) is True:
                return name if value is None else f"{name} ({cls.__name__})"
        except Exception:  # noqa: BLE001 - a class that needs its __init__ is not the trick
            continue
    return None


class _TamperWatch:
    """Identities of the objects that decide and report a verdict, taken before learner code runs.

    Covers pytest's runner, reports and test-function machinery, pytest.raises/approx/fail, the
    registered plugins and their makereport/logreport hooks, this plugin's own functions, and every
    function and class of the graders' own modules (their comparison helpers).

    Two reads: `changed` (everything, after each test) and `quick` (the code of every watched
    function, the graders' helpers by name, the cells of the tests' closures), cheap enough for
    right before and right after each test's call and in the call's report: code swapped in while
    a test is set up, or left swapped after its call, is seen before the call is scored. And the
    call itself is seen: the frame pytest calls must run the test's own code (`expect_call`), so
    a test swapped for a moment and back (by a thread, or by a trace function) is seen too.
    """

    def __init__(self, config):
        self.config = config
        self.grader_dirs = {str(Path(str(item.path)).parent) for item in config._kata_items_seen} \
            if getattr(config, "_kata_items_seen", None) else set()
        self.grader_modules = [name for name, module in list(sys.modules.items())
                               if str(Path(getattr(module, "__file__", None) or "/").parent)
                               in self.grader_dirs]
        self.functions = self._functions()
        self.baseline = self.snapshot()
        # held, so that an id in the baseline can never be reused by a new object
        self.keep = [code for _, code in self.code_of_tests()]
        self.pinned, self.names, self.cells = self._pins()
        # what each test's call must run: (code, globals) of the function pytest calls
        self.calls = {}
        for item in getattr(config, "_kata_items_seen", None) or []:
            fn = getattr(item, "obj", None)
            fn = getattr(fn, "__func__", fn)
            if type(fn) is _FunctionType:
                self.calls[id(item)] = (fn.__code__, fn.__globals__)
        # only where pytest's own pytest_pyfunc_call is the one that makes the call
        impls = [i.function for i in config.hook.pytest_pyfunc_call.get_hookimpls()
                 if not (i.hookwrapper or getattr(i, "wrapper", False))]
        self.watch_calls = impls == [_PYFUNC_CALL]

    def snapshot(self) -> dict[str, int]:
        import _pytest.python as py
        import _pytest.reports as rep
        import _pytest.runner as runner

        seen: dict[str, int] = {}

        def take(prefix, namespace):
            for key, value in list(vars(namespace).items()):
                if callable(value) or isinstance(value, (property, staticmethod, classmethod)):
                    seen[f"{prefix}.{key}"] = id(value)

        for prefix, ns in (("runner", runner), ("reports", rep), ("python", py),
                           ("TestReport", rep.TestReport), ("BaseReport", rep.BaseReport),
                           ("CallInfo", runner.CallInfo), ("Function", py.Function),
                           ("plugin", sys.modules[__name__])):
            take(prefix, ns)
        take("strict", _strict)  # the graders' comparisons
        for name in ("raises", "approx", "fail", "skip", "warns"):
            seen[f"pytest.{name}"] = id(getattr(pytest, name, None))
        for name in ("write", "_exit"):
            seen[f"os.{name}"] = id(getattr(os, name))
        pm = self.config.pluginmanager
        seen["plugins"] = hash(frozenset(id(p) for p in pm.get_plugins()))
        for hook in ("pytest_runtest_makereport", "pytest_runtest_logreport",
                     "pytest_runtest_protocol", "pytest_runtest_call", "pytest_pyfunc_call"):
            impls = getattr(self.config.hook, hook).get_hookimpls()
            seen[f"hook.{hook}"] = hash(tuple(id(i.function) for i in impls))
        for mod_name in self.grader_modules:
            module = sys.modules.get(mod_name)
            seen[f"grader:{mod_name}"] = id(module)
            if module is not None:
                take(f"grader:{mod_name}", module)
        for name, code in self.code_of_tests():
            seen[f"code:{name}"] = id(code)
        # the function each item calls (one cheap pass; an item's obj replaced shows here)
        items = getattr(self.config, "_kata_items_seen", None) or []
        seen["items"] = hash(tuple(id(getattr(i, "obj", None)) for i in items))
        return seen

    def _functions(self) -> list[tuple[str, object]]:
        """(name, function) of every collected test function and of the fixtures it uses, each
        function once: the items of a sweep (one per implementation) share their functions, and
        the watch is read after every test, so it must not grow with the number of items."""
        found: dict[int, tuple[str, object]] = {}
        for item in getattr(self.config, "_kata_items_seen", None) or []:
            fn = getattr(item, "obj", None)
            fn = getattr(fn, "__func__", fn)
            if fn is not None and id(fn) not in found:
                found[id(fn)] = (item.nodeid, fn)
            # what a decorated test calls: hypothesis's inner test, a functools.wraps chain
            inner = getattr(getattr(fn, "hypothesis", None), "inner_test", None)
            while inner is not None and id(inner) not in found:
                found[id(inner)] = (f"{item.nodeid}[inner]", inner)
                inner = getattr(inner, "__wrapped__", None)
            info = getattr(item, "_fixtureinfo", None)
            for fixture, defs in (getattr(info, "name2fixturedefs", None) or {}).items():
                for d in defs:
                    f = getattr(d, "func", None)
                    f = getattr(f, "__func__", f)
                    if f is not None and id(f) not in found:
                        found[id(f)] = (f"{item.nodeid}[{fixture}]", f)
        return list(found.values())

    def code_of_tests(self):
        """(name, code object) of every collected test function and of the fixtures it uses:
        rewriting one in memory (fn.__code__ = ...) changes what a test checks."""
        for name, fn in self.functions:
            code = getattr(fn, "__code__", None)
            if code is not None:
                yield name, code

    def changed(self) -> list[str]:
        now = self.snapshot()
        return sorted(k for k in self.baseline.keys() | now.keys() if self.baseline.get(k) != now.get(k))

    def _pins(self) -> tuple[list, list, list]:
        """What `quick` reads, gathered once: (label, function, code, defaults, kwdefaults) of every
        function the verdict runs through, (label, namespace, name, value) of the graders'
        helpers and pytest's raises/approx/fail/skip/warns, (label, cell, contents) of the
        tests' closures (a hypothesis test reaches its inner test through one)."""
        import _pytest.reports as rep
        import _pytest.runner as runner

        functions: dict[int, tuple[str, types.FunctionType]] = {}

        def pin(label, value):
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                for part in (value.fget, value.fset, value.fdel):
                    pin(label, part)
            elif type(value) is _FunctionType and id(value) not in functions:
                functions[id(value)] = (label, value)

        names = []
        namespaces = [("runner", runner), ("reports", rep), ("python", _pytest.python),
                      ("TestReport", rep.TestReport), ("BaseReport", rep.BaseReport),
                      ("CallInfo", runner.CallInfo), ("Function", _pytest.python.Function),
                      ("plugin", sys.modules[__name__]), ("strict", _strict)]
        helpers = [("strict", _strict), ("pytest", pytest)]
        checks = sys.modules.get("kata.checks")
        if checks is not None:
            namespaces.append(("checks", checks))
            helpers.append(("checks", checks))
        for mod_name in self.grader_modules:
            module = sys.modules.get(mod_name)
            if module is not None:
                namespaces.append((f"grader:{mod_name}", module))
                helpers.append((f"grader:{mod_name}", module))
                # the classes a grader defines (its models and oracles): their methods too
                namespaces += [(f"grader:{mod_name}.{k}", v) for k, v in list(vars(module).items())
                               if isinstance(v, type) and v.__module__ == mod_name]
        for name, fn in self.functions:
            pin(f"code:{name}", fn)
        for prefix, namespace in namespaces:
            for key, value in list(vars(namespace).items()):
                pin(f"{prefix}.{key}", value)
        for prefix, module in helpers:
            space = vars(module)
            wanted = ("raises", "approx", "fail", "skip", "warns") if module is pytest else list(space)
            names += [(f"{prefix}.{key}", space, key, space[key]) for key in wanted
                      if key in space and callable(space[key])]
        cells = []
        for name, fn in self.functions:
            for cell in getattr(fn, "__closure__", None) or ():
                try:
                    cells.append((f"closure:{name}", cell, cell.cell_contents))
                except ValueError:  # a cell not filled yet: nothing to compare with
                    continue
        pinned = [(label, fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__)
                  for label, fn in functions.values()]
        return pinned, names, cells

    def quick(self) -> list[str]:
        """What changed among the pins (see _pins), compared by identity: an object that says it
        equals the one it replaced is not asked. About 40 microseconds for 600 pins."""
        changed = [label for label, fn, code, defaults, kwdefaults in self.pinned
                   if fn.__code__ is not code or fn.__defaults__ is not defaults
                   or fn.__kwdefaults__ is not kwdefaults]
        changed += [label for label, space, key, value in self.names
                    if space.get(key, _GONE) is not value]
        for label, cell, value in self.cells:
            try:
                if cell.cell_contents is not value:
                    changed.append(label)
            except ValueError:
                changed.append(label)
        return changed

    def expect_call(self, item, before) -> tuple:
        """A profile function to set right before pytest calls `item`'s function, and the list it
        fills: [True] once a frame pytest called runs the test's own code in its own module, []
        if only other code ran in its place. It hands back to `before` (the profile function it
        replaces, None as a rule) at that frame, so the test itself runs unobserved, or when
        pytest's call returns. (None, []) if `item` is not one watched so."""
        seen: list[bool] = []
        want = self.calls.get(id(item)) if self.watch_calls else None
        if want is None:
            return None, seen
        code, namespace = want

        def profile(frame, event, arg):
            if event == "call":
                caller = frame.f_back
                if caller is not None and caller.f_code is _PYFUNC_CODE and \
                        frame.f_code is code and frame.f_globals is namespace:
                    seen.append(True)
                    _setprofile(before)
            elif event == "return" and frame.f_code is _PYFUNC_CODE:
                _setprofile(before)
        return profile, seen


_GONE = object()


def _check_tampering(config, when: str, quick: bool = False) -> None:
    watch = getattr(config, "_kata_watch", None)
    if watch is None or config._kata_tampered:
        return
    changed = watch.quick() if quick else watch.changed()
    if changed:
        _tampered(config, when, changed)


def _tampered(config, when: str, what: list[str]) -> None:
    config._kata_tampered = True
    _emit(config, {"event": "tampered", "when": when, "what": what[:5]})


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """The tamper watch at the call itself: read right before pytest calls the test function and
    right after, and the call seen running the test's own code (see _TamperWatch.expect_call)."""
    config = pyfuncitem.config
    watch = getattr(config, "_kata_watch", None)
    if watch is None or config._kata_tampered:
        yield
        return
    _check_tampering(config, f"before {pyfuncitem.nodeid}", quick=True)
    before = _getprofile()
    profile, seen = watch.expect_call(pyfuncitem, before)
    if profile is not None:
        _setprofile(profile)
    try:
        outcome = yield
    finally:
        if profile is not None and _getprofile() is profile:
            _setprofile(before)
    if profile is not None and not seen and outcome.excinfo is None and not config._kata_tampered:
        _tampered(config, f"calling {pyfuncitem.nodeid}", [f"code:{pyfuncitem.nodeid} (another "
                                                          "function ran in the test's place)"])
    _check_tampering(config, f"after {pyfuncitem.nodeid}", quick=True)


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
    if call.when == "call":  # the report that scores: nothing swapped since the call was read
        _check_tampering(item.config, f"reporting {item.nodeid}", quick=True)
    report = outcome.get_result()
    swept = _swept_impl(item)
    if swept is not None and report.failed:
        item.config._kata_caught.add(swept)


# --- time limits ---------------------------------------------------------------------


class TestTimedOut(BaseException):
    """A test ran past its time limit. Raised by the alarm; a BaseException that is neither an
    Exception nor pytest's Failed, so hypothesis does not take it for a failing example and
    replay it (a replay of a loop that never ends would hold the process until it is killed)."""

    __test__ = False  # not a test class, whatever its name


_TIMED_OUT = [0]  # tests that timed out in this process


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item, settings):
    """pytest-timeout's signal method, with kata's rules: the alarm raises TestTimedOut, and once
    two tests of the run have timed out (`--kata-timed-out` counts those of earlier processes)
    the limit is `--kata-strike`'s: a submission that hangs everywhere is over in seconds."""
    import signal
    import threading

    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own way
    strike = item.config.getoption("kata_strike")
    timed_out = item.config.getoption("kata_timed_out") + _TIMED_OUT[0]
    seconds = strike if strike is not None and timed_out >= 2 else settings.timeout

    def on_alarm(signum, frame):
        __tracebackhide__ = True  # the report ends in the learner's code, not here
        _TIMED_OUT[0] += 1
        raise TestTimedOut(f"timed out after {seconds:g}s")

    def cancel():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.cancel_timeout = cancel
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return True


# logstart/logreport hooks get no config argument: keep the session's here
_CONFIG: list = [None]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG[0] = session.config
    # A session imports the implementation afresh. One process can hold several sessions
    # (mutation testing runs the clean suite, then forks a session per mutant); a module kept
    # from an earlier one would carry its state over, e.g. a memo table filled by the clean run
    # that hides every mutant of the code that fills it.
    _stop_remotes()
    _impl_cache.clear()


def _stop_remotes() -> None:
    """End every process this run started to run an implementation in (kata/boundary.py)."""
    from kata import boundary

    boundary.stop_all()
    boundary.MODE["apart"] = boundary.MODE["one_cpu"] = False


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
    # "assert False\n +  where False = same(2, 3)" (an assert with no message of its own)
    if text.startswith("assert False") and "where False = same(" in text:
        text = "values differ (or differ in type): " + text.split("where False = ", 1)[1].split("\n")[0]
    # "AssertionError: Called f(1). Returned 2, expected 3.\nassert 2 == 3" -> keep the author's part
    text = text.split("\nassert ")[0]
    for prefix in ("AssertionError: ", "Failed: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text.partition(": ")[0].endswith("TestTimedOut"):
        text = text.partition(": ")[2]
    elif text.startswith("Timeout (>") and "pytest-timeout" in text:
        text = "timed out after " + text[len("Timeout (>"):].split(")")[0]
    elif text.startswith("SystemExit"):
        text = f"the code called sys.exit() ({text})"
    return capped(text)


def capped(text: str, cap: int = MESSAGE_CAP) -> str:
    """`text` in at most `cap` characters: a longer one keeps its start and its end (where a
    message often says what went wrong first: "First wrong answer: query 12, ...") with " … "
    between, never cut off silently.

    Example: capped("a" * 10 + "END", 9) -> "aaa … END" """
    if len(text) <= cap:
        return text
    tail = cap * 2 // 5
    return text[:cap - 3 - tail] + " … " + text[len(text) - tail:]


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
    if report.when == "teardown":
        _check_tampering(cfg, f"after {report.nodeid}")
    _emit(cfg, event)


def pytest_sessionfinish(session, exitstatus):
    _check_tampering(session.config, "at the end of the run")
    _stop_remotes()
    _emit(session.config, {"event": "finish", "exitstatus": int(exitstatus)})


# --- the impl fixture -------------------------------------------------------


def _resolve_impl(request) -> tuple[Path, str]:
    """(file to import, module name) for the test requesting `impl`."""
    from kata.catalog import CatalogError, find_kata_for_test_file, find_workspace_test, load_kata

    config = request.config
    explicit = config.getoption("kata_impl")
    module_name = config.getoption("kata_impl_module")
    found = find_kata_for_test_file(Path(str(request.node.path)))
    kata, beside = None, None
    try:
        if found is not None:
            root, slug = found
            kata = load_kata(root, slug)
        else:  # workspace/test_<module>.py: the learner's file beside it
            mine = find_workspace_test(Path(str(request.node.path)))
            if mine is not None:
                kata, beside = mine
    except CatalogError as exc:
        raise ImplLoadError(str(exc)) from None
    if explicit:
        path = Path(explicit)
    elif beside is not None:
        path = beside
    elif kata is not None:
        path = kata.solution
    else:
        raise ImplLoadError(
            "the impl fixture needs --kata-impl PATH outside graders/<slug>/ and katas/<slug>/"
        )
    if module_name is None:
        module_name = kata.module_name if kata is not None else path.stem.replace("-", "_")
    return path.resolve(), module_name


def _boundary(config, test_path) -> bool:
    """Whether the implementation runs apart (kata/boundary.py) for the tests of `test_path`."""
    mode = config.getoption("kata_boundary", "off") if config is not None else "off"
    if mode != "auto":
        return mode == "on"
    from kata.catalog import CatalogError, find_kata_for_test_file, find_workspace_test, load_kata

    try:
        found = find_kata_for_test_file(Path(str(test_path)))
        if found is not None:
            return load_kata(*found).process_boundary
        mine = find_workspace_test(Path(str(test_path)))
        return mine is not None and mine[0].process_boundary
    except CatalogError:
        return False


def load_remote(config, path: Path, module_name: str):
    """`path` as module `module_name` in a process of its own (kata/boundary.py), started once per
    run (and again after it dies): the RemoteModule the tests use. Failures become ImplLoadError."""
    from kata import boundary

    key = ("remote", str(path), module_name)
    cached = _impl_cache.get(key)
    if isinstance(cached, ImplLoadError):
        raise cached
    if cached is None:
        wrap = None
        if config.getoption("kata_boundary_sandbox", False):
            from kata import sandbox

            wrap = sandbox.inner_wrap([], [path, Path(boundary.__file__).resolve()])
        cached = boundary.RemoteModule(boundary.Client(str(path), module_name, wrap))
        _impl_cache[key] = cached
    try:
        object.__getattribute__(cached, "_client").module()
    except boundary.BoundaryError as exc:
        error = ImplLoadError(str(exc))
        _impl_cache[key] = error
        raise error from None
    return cached


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
        if spec is None or spec.loader is None:
            raise ImplLoadError(f"{path}: not an importable Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit and friends included: report, never exit
            sys.modules.pop(module_name, None)
            if isinstance(exc, KeyboardInterrupt):
                raise
            where, said = "", str(exc)
            if isinstance(exc, SyntaxError) and exc.lineno:
                where = f" at line {exc.lineno}"
                said = exc.msg or said  # "'(' was never closed", without "(file.py, line 72)" again
            raise ImplLoadError(
                f"importing {path.name} raised {type(exc).__name__}{where}: {said}"
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
        if _boundary(request.config, request.node.path):
            from kata import boundary

            boundary.MODE["apart"] = True
            boundary.MODE["one_cpu"] = str(request.config.getoption("kata_events") or "").startswith("fd:")
            return load_remote(request.config, path, module_name)
        return load_impl(path, module_name)
    except ImplLoadError as exc:
        pytest.fail(str(exc), pytrace=False)
