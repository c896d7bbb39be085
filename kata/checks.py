"""Assertion helpers for hidden suites, built on kata.strict.same: each failure is one message that
states the call, what came back and what was expected.

    check(cache.keys(), ["b", "a"], "keys() after put a, put b")
    check_fraction(impl.step_time(cost, dev), Fraction(4), "step_time(Cost(80, 32), ...)")
    check_raises(lambda: impl.f(-1), "n", "f(-1)")          # ValueError whose message begins "n"
    PROPERTY = property_settings()                           # at a test module's import
    got, want = compare_speed("f(10,000 items)", lambda: impl.f(xs), lambda: ref.f(xs),
                              hint="is the list rescanned per item?")  # within 10x the reference

Graders import these (the grading child has the kata package); they hold no state.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib.util
import json
import os
import resource
import signal
import sys
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from kata.strict import same


def property_settings(max_examples: int = 60) -> settings:
    """Settings of a suite's property tests. Call it at a test module's import, not earlier: a
    settings object copies the profile current when it is built, and the grading profile
    (derandomized, no database) is loaded before any grader is imported. No shrinking: a wrong
    solution's failing example is already small, and shrinking costs it seconds."""
    return settings(max_examples=max_examples, phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


def check(got, expected, call: str) -> None:
    __tracebackhide__ = True  # report the test's line, not this helper's
    assert same(got, expected), f"Called {call}. Returned {got!r}, expected {expected!r}."


def check_fraction(got, expected, call: str) -> None:
    """A Fraction equal to `expected` (an int or a float result is a mistake even when equal)."""
    __tracebackhide__ = True
    ok = type(got) is Fraction and got == expected
    assert ok, f"Called {call}. Returned {got!r} ({type(got).__name__}), expected Fraction({expected})."


def check_raises(fn, name: str, call: str) -> None:
    """fn() must raise ValueError whose message begins with `name`."""
    __tracebackhide__ = True
    try:
        result = fn()
    except ValueError as exc:
        assert str(exc).startswith(name), (
            f"Called {call}. Raised ValueError({str(exc)!r}), expected a message beginning with {name!r}.")
        return
    except Exception as exc:  # noqa: BLE001 - any other type is the learner's mistake to see
        pytest.fail(f"Called {call}. Raised {type(exc).__name__}({exc}), expected ValueError beginning "
                    f"with {name!r}.", pytrace=False)
    pytest.fail(f"Called {call}. Returned {result!r}, expected ValueError beginning with {name!r}.",
                pytrace=False)


# --- what a grader needs from the reference: in process, or measured apart ---------------------
#
# A grader that times the learner's code against the reference, or scores it against the
# reference's result, asks for each thing it needs through `baseline(key, measure)`: a time, a
# count, or an answer reduced by `digest`. Where the reference runs (KATA_REFERENCE):
#   unset           in this process: measure() runs the reference here (a learner's own machine);
#   record:FILE     measure() runs, and its value is added to FILE (the reference's own run);
#   apart:FILE      the value recorded for the key: measure() never runs and the reference is
#                   never loaded, so no code graded in this process can read it (grade-batch).

REFERENCE_ENV = "KATA_REFERENCE"


class ReferenceApart(Exception):
    """A grader asked for the reference itself where it runs apart (only baselines are here)."""


def reference_mode() -> tuple[str, Path | None]:
    """("in-process" | "record" | "apart", the baseline file or None)."""
    mode, _, path = os.environ.get(REFERENCE_ENV, "").partition(":")
    if mode in ("record", "apart") and path:
        return mode, Path(path)
    return "in-process", None


def _test_key(key: str) -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    nodeid = current.rsplit(" (", 1)[0] if current.endswith(")") else current
    return f"{nodeid}::{key}"


_RECORDED: dict[str, dict] = {}


def _recorded(path: Path) -> dict:
    if str(path) not in _RECORDED:
        _RECORDED[str(path)] = json.loads(path.read_text(encoding="utf-8"))
    return _RECORDED[str(path)]


def baseline(key: str, measure):
    """The value `measure()` gives on the reference, under `key` (unique within the calling test):
    a JSON value (a number, a string, a digest, lists of them). See the note above."""
    __tracebackhide__ = True
    mode, path = reference_mode()
    if mode == "apart":
        assert path is not None
        values = _recorded(path)
        full = _test_key(key)
        if full not in values:
            pytest.fail(f"No baseline of the reference for {key!r}: the reference's own run did not "
                        "record it (run `kata validate` on the kata).", pytrace=False)
        return values[full]
    value = json.loads(json.dumps(measure()))  # the same value in every mode (tuples become lists)
    if mode == "record":
        assert path is not None
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": _test_key(key), "value": value}) + "\n")
    return value


def read_baselines(path: Path) -> dict:
    """The values a recording run wrote to `path` (one JSON line each), by key."""
    values: dict = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            values[entry["key"]] = entry["value"]
    return values


def digest(value) -> str:
    """A short hash of `value` that tells kinds apart as `same` does (True is not 1, a tuple is not
    a list; a dataclass is its class's name and its fields): two answers match when their digests
    do. Reads the value's fields, never calls its methods."""
    return hashlib.sha256(repr(_canonical(value, 0)).encode()).hexdigest()[:32]


def _canonical(value, depth: int):
    if depth > 50:
        return ("too deep",)
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return (kind.__name__, value)
    if kind is float:
        return ("float", value.hex())
    if kind is Fraction:
        return ("Fraction", value.numerator, value.denominator)
    if kind in (list, tuple):
        return (kind.__name__, [_canonical(v, depth + 1) for v in value])
    if kind is dict:
        return ("dict", sorted((repr(_canonical(k, depth + 1)), _canonical(v, depth + 1)) for k, v in value.items()))
    if kind in (set, frozenset):
        return (kind.__name__, sorted(repr(_canonical(v, depth + 1)) for v in value))
    if isinstance(value, enum.Enum):
        return ("enum", kind.__name__, value.name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("dataclass", kind.__name__,
                [(f.name, _canonical(object.__getattribute__(value, f.name), depth + 1))
                 for f in dataclasses.fields(value)])
    return ("other", kind.__qualname__, id(value))  # matches no answer the reference gives


def load_reference(path: Path, name: str):
    """The reference solution at `path`, imported once under `name` (never the learner's module
    name), for a side-by-side test: call it only inside a `baseline` measure."""
    if reference_mode()[0] == "apart":
        raise ReferenceApart(f"the reference {path.name} runs apart in this grading: "
                             "ask for what is needed through kata.checks.baseline")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None, path  # a .py file always has both
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while being built
        spec.loader.exec_module(module)
    return sys.modules[name]


class TooSlow(BaseException):
    """Raised inside the implementation once it runs past its CPU budget (a BaseException, so a
    bare `except Exception` in the implementation cannot swallow it)."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def cpu_budget(seconds: float):
    """Raise TooSlow in this process once it has used `seconds` more CPU time."""
    def on_prof(signum, frame):
        raise TooSlow()

    old = signal.signal(signal.SIGPROF, on_prof)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, hint: str = "",
                  answer=digest, ref_setup=None):
    """Time the reference's `ref_fn` (through `baseline`: in process, or recorded apart), then run
    the implementation's `impl_fn` with a CPU budget of factor x the reference's CPU time (at least
    `floor` seconds); `hint` names the likely slow path for the message. Returns (the
    implementation's result, `answer` of the reference's result): compare it with `answer` of the
    first (`answer` maps a result to a JSON value; the default is its digest). With `ref_setup`,
    the reference runs `ref_fn(ref_setup())`, the setup untimed (it may load the reference: it
    runs only where the reference does)."""
    __tracebackhide__ = True

    def measure():
        args = () if ref_setup is None else (ref_setup(),)
        start = _cpu()
        result = ref_fn(*args)
        return {"cpu": _cpu() - start, "answer": answer(result)}

    ref = baseline(f"compare_speed {call}", measure)
    budget = max(factor * ref["cpu"], floor)
    start = _cpu()
    try:
        with cpu_budget(budget):
            result = impl_fn()
    except TooSlow:
        raise AssertionError(f"Called {call}. Still running after {budget:.2f} s of CPU time, expected "
                             f"it within {factor:g}x the reference's time" + (f": {hint}" if hint else ".")) from None
    used = _cpu() - start
    assert used <= budget, f"Called {call}. Took {used:.2f} s of CPU time, expected at most {budget:.2f} s."
    return result, ref["answer"]
