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
import importlib.util
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


# --- timing against the reference, in the same process ------------------------------------------


def same_as_reference(got, want, module) -> bool:
    """`got` is the reference's answer `want`, compared by `same` after rebuilding `want` from
    `module`'s own dataclasses (the reference's classes are other classes with the same names)."""
    return same(got, _rebuilt(want, module))


def _rebuilt(value, module):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = getattr(module, type(value).__name__)
        return cls(**{f.name: _rebuilt(getattr(value, f.name), module) for f in dataclasses.fields(value)})
    if isinstance(value, list):
        return [_rebuilt(v, module) for v in value]
    if isinstance(value, dict):
        return {k: _rebuilt(v, module) for k, v in value.items()}
    return value


def load_reference(path: Path, name: str):
    """The reference solution at `path`, imported once under `name` (never the learner's module
    name), for a side-by-side timing test. Kept in this grading process only."""
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


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, hint: str = ""):
    """Run the reference, then the implementation with a CPU budget of factor x the reference's
    CPU time (at least `floor` seconds); `hint` names the likely slow path for the message.
    Returns (the implementation's result, the reference's)."""
    __tracebackhide__ = True
    start = _cpu()
    ref_result = ref_fn()
    budget = max(factor * (_cpu() - start), floor)
    start = _cpu()
    try:
        with cpu_budget(budget):
            result = impl_fn()
    except TooSlow:
        raise AssertionError(f"Called {call}. Still running after {budget:.2f} s of CPU time, expected "
                             f"it within {factor:g}x the reference's time" + (f": {hint}" if hint else ".")) from None
    used = _cpu() - start
    assert used <= budget, f"Called {call}. Took {used:.2f} s of CPU time, expected at most {budget:.2f} s."
    return result, ref_result
