"""The README stays true: CI runs its quick start's test command verbatim, and its example
score table shows the real suite's figures."""

from __future__ import annotations

import io
import re

from tests.conftest import REPO

# `kata status` in the README: "  Q1. lru-kv-cache   L1-3   visible 0/9    hidden 100/100 pts"
STATUS_LINE = re.compile(r"  Q1\. lru-kv-cache +L1-3 +visible (\d+)/(\d+) +hidden ([\d.]+)/(\d+) pts$")


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
    assert "pip install -e '.[test,mutants]'" in test, "the test extra brings what the tests need (lxml)"
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


def test_the_example_score_table_is_what_kata_submit_prints_for_the_reference():
    """The README's `kata submit` table and `kata status` line for lru-kv-cache are the real suite's
    figures: the reference graded on the hidden suite, drawn by the same table code; the stub
    graded on the visible tests. Adding or removing a hidden test fails here until the README
    follows (copy the expected table from the failure)."""
    from rich.console import Console

    from kata.catalog import load_kata
    from kata.grading import grade
    from kata.views import level_table

    kata = load_kata(REPO, "lru-kv-cache")
    hidden = grade(kata, None)
    assert hidden.status == "pass", hidden.message
    console = Console(file=io.StringIO(), width=100, no_color=True, force_terminal=False, record=True)
    console.print(level_table(hidden, "lru-kv-cache: hidden suite"))
    want = [line.rstrip() for line in console.export_text().splitlines()]
    lines = (REPO / "README.md").read_text().splitlines()
    start = lines.index(want[0])
    assert lines[start:start + len(want)] == want, "\n".join(want)

    visible = grade(kata, kata.stub, suite="visible")
    (shown,) = [m.groups() for m in map(STATUS_LINE.match, lines) if m]
    assert shown == (str(visible.passed), str(len(visible.tests)), f"{hidden.points_earned:g}",
                     str(hidden.points_possible))
