"""Loads the suite's shared helpers, serving_plan_oracle.py, under that module name, and holds the
engine's verdicts on the plans in a fixture (never at module level: a mutation run forks after the
clean run, and a module-level cache would carry the clean run's verdicts over)."""

import pytest

from kata.checks import load_helpers

(ORACLE,) = load_helpers(__file__, "serving_plan_oracle")


@pytest.fixture(scope="module")
def verdicts(impl):
    """level -> the engine's Judgement of impl.plan on that level (computed once per module)."""
    return ORACLE.Verdicts(impl)
