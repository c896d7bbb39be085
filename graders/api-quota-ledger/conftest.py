"""Loads the suite's shared helpers, api_quota_ledger_oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "api_quota_ledger_oracle")
