"""Loads the suite's shared helpers, serving_plan_oracle.py, under that module name, and holds the
engine's verdicts on the plans in a fixture (never at module level: a mutation run forks after the
clean run, and a module-level cache would carry the clean run's verdicts over)."""

import importlib.util
import sys
from pathlib import Path

import pytest

_NAME = "serving_plan_oracle"

if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name(f"{_NAME}.py"))
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)


@pytest.fixture(scope="module")
def verdicts(impl):
    """level -> the engine's Judgement of impl.plan on that level (computed once per module)."""
    return sys.modules[_NAME].Verdicts(impl)
