"""Loads the suite's shared helpers, spec_decode_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "spec_decode_oracle")
