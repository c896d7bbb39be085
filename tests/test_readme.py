"""The README's quick start stays true: CI runs its test command verbatim."""

from __future__ import annotations

import re

from tests.conftest import REPO


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_quick_start_is_two_commands_and_ci_runs_the_test_one():
    commands = quick_start_commands()
    assert len(commands) == 2, commands
    start, test = commands
    assert start.endswith("kata start") and test.endswith("pytest")
    assert test in (REPO / ".ci" / "run").read_text().splitlines()
