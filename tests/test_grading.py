"""The grading harness against hostile implementations: each costs only the tests it touches."""

from __future__ import annotations

from pathlib import Path

import pytest

from kata.catalog import load_kata
from kata.grading import ERROR, FAIL, PASS, Limits, grade

HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile"
FAST = Limits(test_timeout=2, hard_test_grace=2, wall_timeout=120)
OTHERS = ("test_add", "test_sub", "test_neg", "test_div_by_zero")


@pytest.fixture
def adder(fixture_workbook):
    return load_kata(fixture_workbook, "adder")


def by_name(result):
    return {t.name.split("::")[-1]: t for t in result.tests}


def test_reference_gets_full_marks(adder):
    result = grade(adder, None, limits=FAST)
    assert result.status == PASS, result
    assert result.points_earned == result.points_possible == 30
    assert [lv.passed for lv in result.levels] == [2, 3]


def test_stub_gets_zero_with_per_level_counts(adder):
    result = grade(adder, adder.stub, limits=FAST)
    assert result.status == FAIL
    assert result.points_earned == 0
    assert [(lv.passed, lv.total) for lv in result.levels] == [(0, 2), (0, 3)]
    assert all(t.message == "NotImplementedError" for t in result.tests)


def test_points_weight_tests_within_a_level(adder, tmp_path):
    impl = tmp_path / "half.py"
    src = (adder.root / "solutions" / "adder.py").read_text()
    impl.write_text(src.replace("return a - b", "return b - a"))  # fails test_sub (3 of 4 points)
    result = grade(adder, impl, limits=FAST)
    assert result.levels[0].points_earned == 2.5  # 10 x 1/4
    assert result.levels[1].points_earned == 20


@pytest.mark.parametrize(
    "name, status, message",
    [
        ("py_loop", FAIL, "timed out after 2.0s"),
        ("c_loop", ERROR, "timed out: still running"),
        ("sys_exit", FAIL, "sys.exit"),
        ("os_exit", ERROR, "exited with code 0 during this test"),
        ("alloc_10gb", FAIL, "MemoryError"),
        ("alloc_forever", None, None),  # MemoryError or a timeout, whichever comes first
        ("print_50mb", FAIL, "Returned -1, expected 12"),
    ],
)
def test_hostile_mul_costs_only_its_own_test(adder, name, status, message):
    result = grade(adder, HOSTILE / f"{name}.py", limits=FAST)
    tests = by_name(result)
    assert len(tests) == 5, result
    mul = tests["test_mul"]
    assert mul.status != PASS
    if status is not None:
        assert mul.status == status, mul
        assert message in (mul.message or ""), mul
    for other in OTHERS:
        assert tests[other].status == PASS, (other, tests[other])
    assert result.points_earned == pytest.approx(30 - 20 * 1 / 4)
    if mul.output:
        assert len(mul.output) <= 4000


@pytest.mark.parametrize("name, what", [("raise_at_import", "RuntimeError: boom at import"),
                                        ("syntax_error", "SyntaxError at line")])
def test_import_failures_error_every_test_with_the_reason(adder, name, what):
    result = grade(adder, HOSTILE / f"{name}.py", limits=FAST)
    assert result.status == ERROR
    assert len(result.tests) == 5
    assert all(t.status == ERROR and what in t.message for t in result.tests)
    assert what in result.message
    assert result.points_earned == 0


def test_missing_impl_is_an_error_not_a_crash(adder, tmp_path):
    result = grade(adder, tmp_path / "nope.py", limits=FAST)
    assert result.status == ERROR and "no such file" in result.message


def test_same_code_scores_the_same_twice(adder):
    one = grade(adder, HOSTILE / "os_exit.py", limits=FAST)
    two = grade(adder, HOSTILE / "os_exit.py", limits=FAST)
    assert one.outcome_key() == two.outcome_key()
    assert one.points_earned == two.points_earned


def test_wall_clock_bound_reports_unrun_tests_as_errors(adder):
    limits = Limits(test_timeout=30, hard_test_grace=30, wall_timeout=4)
    result = grade(adder, HOSTILE / "c_loop.py", limits=limits)
    tests = by_name(result)
    assert tests["test_mul"].status == ERROR
    assert "wall-clock" in (result.message or "")
    assert tests["test_add"].status == PASS
    # the tests after the runaway one never ran: errors, never passes
    assert all(tests[n].status == ERROR for n in ("test_neg", "test_div_by_zero"))


def test_visible_suite_runs_the_kata_examples(adder):
    result = grade(adder, adder.stub, suite="visible", limits=FAST)
    assert [t.status for t in result.tests] == [FAIL, FAIL]
    assert "NotImplementedError" in result.tests[0].detail


def test_junit_xml_is_written_with_marker_properties(adder, tmp_path):
    xml = tmp_path / "junit.xml"
    grade(adder, None, limits=FAST, junit_xml=xml)
    text = xml.read_text()
    assert 'name="level" value="1"' in text and 'name="edge"' in text
