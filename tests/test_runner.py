"""`kata runner SLUG INPUT_DIR OUTPUT_DIR`: Exercism's test-runner interface, golden-file tested
the way Exercism's own runners are (tests/fixtures/runner/<case>/input -> expected_results.json),
and every results.json checked against the v3 fields (docs/FORMATS.md)."""

from __future__ import annotations

import json

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
        assert t["output"] is None or len(t["output"]) <= 500, "at most 500 characters, the notice included"
        # the test's body, dedented: no decorator, no `def` line
        code = t["test_code"]
        assert isinstance(code, str) and code and code == code.strip("\n"), t
        assert not code.startswith(("def ", "@", " ")), t
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
    assert sub["output"].startswith("sub called; ") and sub["output"].endswith("[output truncated to 500 characters]")
    assert len(sub["output"]) == 500  # the notice included: Exercism keeps no more


def test_test_code_is_the_body_of_the_test_function(tmp_path):
    """As Exercism's interface and its Python runner's golden files: the body, dedented, without
    decorators or the `def` line (a signature over several lines, a one-line test, a method)."""
    from kata.formats import locate

    (tmp_path / "test_x.py").write_text(
        "import pytest\n\n\n@pytest.mark.level(1)\ndef test_long(\n    impl,\n) -> None:\n"
        "    # opens with a comment\n\n    x = impl.f(1)\n    assert x\n\n\n"
        "def test_one(impl): assert impl.f(2)\n\n\nclass TestK:\n    @staticmethod\n"
        "    def test_m():\n        if True:\n            pass\n")
    assert locate(tmp_path, "test_x.py::test_long") == (
        "test_x.py", 5, "# opens with a comment\n\nx = impl.f(1)\nassert x")
    assert locate(tmp_path, "test_x.py::test_one[1-2]")[1:] == (14, "assert impl.f(2)")
    assert locate(tmp_path, "test_x.py::TestK::test_m")[2] == "if True:\n    pass"


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
