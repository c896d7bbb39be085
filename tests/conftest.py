"""Shared fixtures: every test gets its own state folder and plain, fixed-width output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def isolated_state(tmp_path, monkeypatch):
    """Point the workbook's state (workspace/, .kata/) at a tmp dir; plain output."""
    from kata import views

    state = tmp_path / "state"
    monkeypatch.setenv("KATA_STATE_DIR", str(state))
    monkeypatch.setenv("KATA_PLAIN", "1")
    monkeypatch.delenv("KATA_WORKBOOK", raising=False)
    monkeypatch.delenv("KATA_NOW", raising=False)
    views.reset_console()
    yield state
    views.reset_console()


@pytest.fixture
def fixture_workbook(tmp_path, monkeypatch):
    """A private copy of tests/fixtures/workbook (the tiny `adder` kata), selected by env var."""
    root = tmp_path / "wb"
    shutil.copytree(FIXTURES / "workbook", root)
    monkeypatch.setenv("KATA_WORKBOOK", str(root))
    return root
