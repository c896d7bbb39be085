"""Shared fixtures of the token-batcher hidden suite.

`reference`: a function that loads the reference solution under its own module name, so it can run
side by side with the implementation under test (complexity tests, goodput and TPOT against the
reference); call it only inside a kata.checks.baseline measure (in a batch the reference runs apart).
`runs`: a per-module memo of expensive runs (empty in every session). Helpers (building requests,
caching expensive runs) live in token_batcher_support.py.
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
    from kata.checks import load_reference

    return lambda: load_reference(ROOT / "solutions" / "token-batcher.py", REFERENCE_MODULE)


@pytest.fixture(scope="module")
def runs():
    """Memo of a test module's expensive runs (seeded traces, their replays, bulk inputs), keyed by
    implementation: see token_batcher_support.cached. A fixture, not a module-level dict, so it
    starts empty in every pytest session (mutmut forks its mutant runs from a process that already
    ran the suite once: a module-level memo would hand every mutant the clean run's results)."""
    return {}
