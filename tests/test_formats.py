"""JUnit XML (`--junit-xml` on check, submit and grade-batch, and the copy in .kata/junit/): by
default valid under the Jenkins xunit plugin's junit-10.xsd (tests/fixtures/junit-10.xsd encodes its
rules), with each test's file and line kept where that schema allows; `--junit-rich` adds the
file/line attributes and per-test properties that schema rejects. A live session's file names no
hidden test."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lxml import etree  # the test extra (README: pip install -e '.[test,mutants]'); never skipped
from typer.testing import CliRunner

from kata.cli import app
from tests.conftest import FIXTURES

CASES = FIXTURES / "runner"


@pytest.fixture(scope="module")
def schema():
    return etree.XMLSchema(etree.parse(str(FIXTURES / "junit-10.xsd")))


def errors(schema, path: Path) -> list[str]:
    """The schema's complaints about the file (none: valid)."""
    ok = schema.validate(etree.parse(str(path)))
    return [] if ok else [f"{e.line}: {e.message}" for e in schema.error_log]


def system_out(case: ET.Element) -> list[str]:
    node = case.find("system-out")
    return (node.text or "").splitlines() if node is not None else []


def def_line(path: Path, func: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.startswith(f"def {func}("))


def test_the_schema_rejects_what_junit_10_does_not_allow(schema, tmp_path):
    """The fixture itself can fail: file/line attributes and per-case properties are refused, a
    suite without `failures` is refused, a plain suite passes."""
    good = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="1,234.5">'
            '<properties><property name="a" value="b"/></properties>'
            '<testcase name="t" classname="c" time="0.1"><failure message="m">x</failure>'
            '<system-out>o</system-out></testcase></testsuite></testsuites>')
    (tmp_path / "good.xml").write_text(good)
    assert errors(schema, tmp_path / "good.xml") == []
    for bad in (good.replace('<testcase name="t"', '<testcase name="t" file="f.py" line="3"'),
                good.replace('<failure message="m">x</failure>',
                             '<properties><property name="level" value="1"/></properties>'),
                good.replace(' failures="0"', ''),
                good.replace('time="1,234.5"', 'time="1.2s"')):
        (tmp_path / "bad.xml").write_text(bad)
        assert errors(schema, tmp_path / "bad.xml"), bad


def test_check_submit_and_the_kept_copies_validate_and_keep_file_and_line(
        schema, fixture_workbook, isolated_state, tmp_path):
    runner = CliRunner()
    graders = fixture_workbook / "graders" / "adder" / "test_adder.py"
    visible = fixture_workbook / "katas" / "adder" / "test_visible.py"
    assert runner.invoke(app, ["start", "adder", "--yes", "--reveal", "all"]).exit_code == 0
    shutil.copy(CASES / "fail" / "input" / "adder.py", isolated_state / "workspace" / "adder.py")

    # check: a suite per kata; file:line, level, points in each case's <system-out>
    runner.invoke(app, ["check", "--junit-xml", str(tmp_path / "check.xml")])
    assert errors(schema, tmp_path / "check.xml") == []
    suite = ET.parse(tmp_path / "check.xml").getroot().find("testsuite")
    assert suite.get("name") == "adder"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["test_add", "test_mul"]
    assert all(c.get("classname") == "adder.test_visible" and c.get("file") is None for c in cases)
    assert system_out(cases[0])[:3] == [f"katas/adder/test_visible.py:{def_line(visible, 'test_add')}",
                                        "level: 1", "points: 1"]

    # the rich form: the attributes GitHub annotation actions read, which the schema refuses
    runner.invoke(app, ["check", "--junit-xml", str(tmp_path / "rich.xml"), "--junit-rich"])
    rich = ET.parse(tmp_path / "rich.xml").getroot().find("testsuite").findall("testcase")
    assert all(c.get("file") == "katas/adder/test_visible.py" and int(c.get("line")) > 0 for c in rich)
    assert rich[1].find("properties/property[@name='level']").get("value") == "2"
    assert errors(schema, tmp_path / "rich.xml")

    # during the session: valid, levels and pass/fail only, plain or rich, nothing hidden named
    for name, extra in (("submit.xml", []), ("submit-rich.xml", ["--junit-rich"])):
        runner.invoke(app, ["submit", "--junit-xml", str(tmp_path / name), *extra])
        text = (tmp_path / name).read_text()
        for secret in ("test_sub", "test_adder", "graders", "subtracts", "Called", "sub called", "edge"):
            assert secret not in text, (name, secret)
        suite = ET.parse(tmp_path / name).getroot().find("testsuite")
        assert suite.get("failures") == "2" and suite.get("tests") == "5"
        assert [c.get("name") for c in suite.findall("testcase")][:2] == ["hidden test 1", "hidden test 2"]
        assert system_out(suite.find("testcase")) == ["level: 1", "points: 1"]
    assert errors(schema, tmp_path / "submit.xml") == []
    kept = sorted(isolated_state.rglob("junit/adder-*.xml"))
    assert [p.name for p in kept] == ["adder-hidden.xml", "adder-visible.xml"]
    for path in kept:
        assert errors(schema, path) == [], path
    assert "test_sub" not in kept[0].read_text()

    # after it, the full report: file:line of the hidden test, its edge and failure
    runner.invoke(app, ["finish", "--yes"])
    runner.invoke(app, ["submit", "adder", "--junit-xml", str(tmp_path / "after.xml")])
    assert errors(schema, tmp_path / "after.xml") == []
    after = ET.parse(tmp_path / "after.xml").getroot().find("testsuite")
    (sub,) = [c for c in after.findall("testcase") if c.get("name") == "test_sub"]
    assert sub.get("classname") == "adder.test_adder" and sub.find("failure") is not None
    assert system_out(sub)[:4] == [f"graders/adder/test_adder.py:{def_line(graders, 'test_sub')}",
                                   "level: 1", "points: 3", "edge: subtracts to a negative"]
    assert "sub called; " in system_out(sub)[-1]  # then what the test printed
    props = {p.get("name"): p.get("value") for p in after.find("properties")}
    assert props == {"points_earned": "12.5", "points_possible": "30"}
    assert errors(schema, kept[0]) == [] and "test_sub" in kept[0].read_text()


def test_grade_batch_junit_validates_with_a_suite_per_student_and_kata(schema, fixture_workbook, isolated_state,
                                                                       tmp_path):
    cohort = tmp_path / "cohort"
    for name in ("alice", "bob"):
        shutil.copytree(FIXTURES / "cohort" / name, cohort / name)
    result = CliRunner().invoke(app, ["grade-batch", str(cohort), "--out", str(tmp_path / "g"), "--workers", "1",
                                      "--junit-xml", str(tmp_path / "batch.xml")])
    assert result.exit_code == 0, result.output
    assert errors(schema, tmp_path / "batch.xml") == []
    root = ET.parse(tmp_path / "batch.xml").getroot()
    assert [s.get("name") for s in root.findall("testsuite")] == ["alice/adder", "bob/adder"]
    assert root.get("tests") == "10"
    bob = root.findall("testsuite")[1].findall("testcase")
    assert {c.get("classname") for c in bob} == {"bob/adder.test_adder"}
    assert all(system_out(c)[0].startswith("graders/adder/test_adder.py:") for c in bob)


def test_text_xml_cannot_hold_is_replaced_not_written(schema, fixture_workbook, tmp_path):
    """A test that prints an escape sequence or a NUL must not make the file unreadable."""
    from kata.catalog import Workbook
    from kata.formats import write_junit
    from kata.results import SuiteResult, TestResult

    kata = Workbook.find().kata("adder")
    t = TestResult("graders/adder/test_adder.py::test_add", "fail", message="bad \x00 byte",
                   detail="\x1b[31mred\x1b[0m", output="tick\x07", task_id=1)
    path = write_junit([(kata, SuiteResult("fail", "stopped \x0b", [t]))], tmp_path / "j.xml")
    assert errors(schema, path) == []
    case = ET.parse(path).getroot().find("testsuite/testcase")
    assert case.find("failure").text == "\ufffd[31mred\ufffd[0m" and system_out(case)[-1] == "tick\ufffd"
