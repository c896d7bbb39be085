"""Loads the suite's shared helpers, safety_interceptor_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "safety_interceptor_oracle")
