"""Loads the suite's shared helpers, block_allocator_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "block_allocator_oracle")
