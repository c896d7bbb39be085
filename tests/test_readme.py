"""The README's quick start stays true: CI runs its test command verbatim."""

from __future__ import annotations

import re

from tests.conftest import REPO


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_quick_start_installs_starts_and_ci_runs_the_test_command():
    """Three blocks: install a wheel and make a workbook, start from a clone, run the tests."""
    commands = quick_start_commands()
    assert len(commands) == 3, commands
    install, clone, test = commands
    assert "pip wheel" in install and install.endswith("kata init my-prep && cd my-prep && kata start")
    assert clone.endswith("kata start") and test.endswith("pytest")
    assert test in (REPO / ".ci" / "run").read_text().splitlines()


def test_engine_figures_are_the_kept_benchmark_run():
    """The README's engine figures are written from benchmarks/results/engine.json by
    benchmarks/readme_figures.py; editing one without the other fails here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_figures", REPO / "benchmarks" / "readme_figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    assert figures.main(["--check"]) == 0
    readme = (REPO / "README.md").read_text()
    start, end = figures.block(readme)
    assert "| paged decode attention / one bare read" in readme[start:end]
