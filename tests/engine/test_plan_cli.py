"""`kata engine plan FILE --level N`: a serving plan judged beside the reference, in 80 columns."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytest.importorskip("typer", reason="typer is not installed")
from typer.testing import CliRunner  # noqa: E402

from kata.judges.cli import engine_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "serving-plan.py"
runner = CliRunner()


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    monkeypatch.setenv("KATA_PLAIN", "1")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(ROOT)  # the workbook (for the reference plan)


def zoo_plan(tmp_path: Path, bug: str) -> Path:
    target = tmp_path / bug / "serving_plan.py"
    target.parent.mkdir()
    target.write_text(REFERENCE.read_text())
    patch = (ROOT / "tests" / "bugs" / "serving-plan" / f"{bug}.patch").read_text()
    diff = patch[patch.index("--- "):]
    subprocess.run(["patch", "-s", str(target)], input=diff, text=True, check=True)
    return target


def test_the_reference_passes_every_check_in_80_columns():
    result = runner.invoke(engine_app, ["plan", str(REFERENCE), "--level", "3"])
    assert result.exit_code == 0, result.output
    table = [line for line in result.output.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 80 for line in table)
    assert "$ per million output tokens" in result.output and "passes every check" in result.output
    assert result.output.count("KV blocks in use") == 2


@pytest.mark.parametrize("name, gpus", [("few-users", "1 (1 x 1)"), ("prefill-heavy", "7 (1 x 7)")])
def test_a_workload_the_prompt_names_runs_by_name(name, gpus):
    result = runner.invoke(engine_app, ["plan", str(REFERENCE), "--workload", name])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Workload {name}: ")
    row = next(line for line in result.output.splitlines() if "GPUs (TP x replicas)" in line)
    assert gpus in row and f"passes every check on the {name} workload" in _words(result.output)


def test_a_zoo_plan_fails_and_the_table_shows_why(tmp_path):
    result = runner.invoke(engine_app, ["plan", str(zoo_plan(tmp_path, "plan_ten_times_the_gpus")),
                                        "--level", "3"])
    assert result.exit_code == 1, result.output
    gpus = next(line for line in result.output.splitlines() if "GPUs (TP x replicas)" in line)
    assert "40 (4 x 10)" in gpus and gpus.rstrip("│ ").endswith("4")
    assert "FAIL cost" in result.output and "ok   SLO" in result.output


@pytest.mark.parametrize("args, message", [
    (["plan", "nowhere.py"], "no such file"),
    (["plan", str(REFERENCE), "--level", "5"], "--level 5"),
    (["plan", str(REFERENCE), "--workload", "nope"], "--workload nope: choose one of few-users, prefill-heavy"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = runner.invoke(engine_app, args)
    assert result.exit_code == 2 and message in _words(result.output), result.output
    first, *rest = result.output.strip().splitlines()  # one error, wrapped at spaces if long
    assert first.startswith("error: ") and all(line.startswith("       ") for line in rest), result.output


def _words(output: str) -> str:
    """The output with its wrapping undone (an error wraps at spaces where its path is long)."""
    return " ".join(output.split())


def test_a_plan_that_raises_is_one_line(tmp_path):
    bad = tmp_path / "serving_plan.py"
    bad.write_text("def plan(workload, constraints):\n    raise KeyError('users')\n")
    result = runner.invoke(engine_app, ["plan", str(bad), "--level", "1"])
    assert result.exit_code == 2 and "plan() raised KeyError" in _words(result.output), result.output


def test_the_stub_as_handed_out_says_to_write_plan_first():
    stub = ROOT / "katas" / "serving-plan" / "serving_plan.py"
    result = runner.invoke(engine_app, ["plan", str(stub), "--level", "1"])
    assert result.exit_code == 2 and "plan() is not written yet" in _words(result.output), result.output
    assert not result.output.rstrip().endswith(":")
