"""Loads the suite's shared helpers, tp_placement_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "tp_placement_oracle")
