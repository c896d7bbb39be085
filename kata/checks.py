"""Assertion helpers for hidden suites, built on kata.strict.same: each failure is one message that
states the call, what came back and what was expected.

    check(cache.keys(), ["b", "a"], "keys() after put a, put b")
    check_fraction(impl.step_time(cost, dev), Fraction(4), "step_time(Cost(80, 32), ...)")
    check_raises(lambda: impl.f(-1), "n", "f(-1)")          # ValueError whose message begins "n"
    PROPERTY = property_settings()                           # at a test module's import

Graders import these (the grading child has the kata package); they hold no state.
"""

from __future__ import annotations

from fractions import Fraction

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
