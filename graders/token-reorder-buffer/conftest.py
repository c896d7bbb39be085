"""Loads the suite's shared helpers, reorder_buffer_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "reorder_buffer_oracle")
