"""Loads the suite's shared helpers, kv_block_store_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "kv_block_store_oracle")
