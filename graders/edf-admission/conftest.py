"""Loads the suite's shared helpers, edf_admission_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "edf_admission_oracle")
