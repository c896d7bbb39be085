"""`kata runner SLUG INPUT_DIR OUTPUT_DIR`: Exercism's test-runner interface, golden-file tested
the way Exercism's own runners are (tests/fixtures/runner/<case>/input -> expected_results.json),
and every results.json checked against the v3 fields (docs/FORMATS.md)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from kata.cli import app
from tests.conftest import FIXTURES

CASES = FIXTURES / "runner"
STATUSES = {"pass", "fail", "error"}


def check_v3(results: dict) -> None:
    """The fields of Exercism's results.json, version 3, and their rules."""
    assert results["version"] == 3
    assert results["status"] in STATUSES
    assert set(results) <= {"version", "status", "message", "tests"}
    if results["status"] == "error":
        assert isinstance(results["message"], str) and results["message"]
    else:
        assert results.get("message") is None
        assert results["tests"], "pass and fail need tests"
    for t in results["tests"]:
        assert set(t) == {"name", "status", "message", "output", "test_code", "task_id"}, t
        assert isinstance(t["name"], str) and "::" not in t["name"] and not t["name"].startswith("test_")
        assert t["status"] in STATUSES
        assert (t["message"] is None) == (t["status"] == "pass"), t
        assert t["output"] is None or len(t["output"]) <= 500 + 80
        assert isinstance(t["test_code"], str) and t["test_code"].startswith("def test")
        assert isinstance(t["task_id"], int) and t["task_id"] >= 1
    if results["status"] == "pass":
        assert all(t["status"] == "pass" for t in results["tests"])
    if results["status"] == "fail":
        assert any(t["status"] != "pass" for t in results["tests"])


@pytest.mark.parametrize("case", ["pass", "fail", "error"])
def test_runner_writes_the_golden_results_json_and_exits_0(case, fixture_workbook, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["runner", "adder", str(CASES / case / "input"), str(out)])
    assert result.exit_code == 0, result.output
    got = json.loads((out / "results.json").read_text())
    check_v3(got)
    assert got == json.loads((CASES / case / "expected_results.json").read_text())
    assert got["status"] == case


def test_runner_output_is_capped_at_500_characters_with_a_notice(fixture_workbook, tmp_path):
    CliRunner().invoke(app, ["runner", "adder", str(CASES / "fail" / "input"), str(tmp_path)])
    (sub,) = [t for t in json.loads((tmp_path / "results.json").read_text())["tests"] if t["name"] == "Sub"]
    assert sub["output"].startswith("sub called; ") and "truncated" in sub["output"]
    assert len(sub["output"].split("\n[")[0]) == 500


def test_a_missing_solution_file_is_an_error_result_and_a_bad_slug_a_usage_error(fixture_workbook, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["runner", "adder", str(empty), str(tmp_path / "out")])
    assert result.exit_code == 0
    got = json.loads((tmp_path / "out" / "results.json").read_text())
    check_v3(got)
    assert got["status"] == "error" and "adder.py" in got["message"]
    bad = CliRunner().invoke(app, ["runner", "addr", str(empty), str(tmp_path / "out")])
    assert bad.exit_code == 2 and "unknown kata 'addr'" in bad.output and "Did you mean 'adder'" in bad.output


def test_junit_xml_has_a_suite_per_kata_with_file_and_line(fixture_workbook, isolated_state, tmp_path):
    import shutil

    runner = CliRunner()
    assert runner.invoke(app, ["start", "adder", "--yes", "--reveal", "all"]).exit_code == 0
    shutil.copy(CASES / "fail" / "input" / "adder.py", isolated_state / "workspace" / "adder.py")
    runner.invoke(app, ["check", "--junit-xml", str(tmp_path / "check.xml")])
    suite = ET.parse(tmp_path / "check.xml").getroot().find("testsuite")
    assert suite.get("name") == "adder"
    cases = suite.findall("testcase")
    assert cases and all(c.get("file") == "katas/adder/test_visible.py" and int(c.get("line")) > 0 for c in cases)
    # during the session a submit's JUnit shows levels and pass/fail only, no hidden names
    runner.invoke(app, ["submit", "--junit-xml", str(tmp_path / "submit.xml")])
    text = (tmp_path / "submit.xml").read_text()
    assert "test_sub" not in text and "subtracts" not in text and "Called" not in text
    assert ET.parse(tmp_path / "submit.xml").getroot().find("testsuite").get("failures") == "2"
    # after it, the full report
    runner.invoke(app, ["finish", "--yes"] if "--yes" in runner.invoke(app, ["finish", "--help"]).output
                  else ["finish"])
    runner.invoke(app, ["submit", "adder", "--junit-xml", str(tmp_path / "after.xml")])
    after = ET.parse(tmp_path / "after.xml").getroot().find("testsuite")
    sub = [c for c in after.findall("testcase") if c.get("name") == "test_sub"]
    assert sub and sub[0].get("file") == "graders/adder/test_adder.py" and sub[0].find("failure") is not None
