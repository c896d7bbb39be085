"""Shared fixtures of the token-batcher hidden suite.

`reference`: the reference solution, loaded under its own module name so it can run side by side
with the implementation under test (complexity tests, goodput and TPOT against the reference).
Helpers (building requests, caching expensive runs) live in token_batcher_support.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:  # the helper modules next to this file
    sys.path.insert(0, str(HERE))

REFERENCE_MODULE = "token_batcher_reference"


@pytest.fixture(scope="session")
def reference():
    from kata.pytest_plugin import load_impl

    return load_impl(ROOT / "solutions" / "token-batcher.py", REFERENCE_MODULE)
