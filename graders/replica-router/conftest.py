"""Loads the suite's shared helpers, replica_router_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "replica_router_oracle")
