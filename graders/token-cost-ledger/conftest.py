"""Loads the suite's shared helpers, cost_ledger_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "cost_ledger_oracle")
