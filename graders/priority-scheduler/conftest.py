"""Loads the suite's shared helpers, priority_scheduler_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "priority_scheduler_oracle")
