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


def hostile(name: str, dest: Path, **fill) -> Path:
    """A copy of hostile/<name>.py in `dest` with each __KEY__ replaced by fill[key]."""
    text = (HOSTILE / f"{name}.py").read_text()
    for key, value in fill.items():
        text = text.replace(f"__{key.upper()}__", str(value))
    out = dest / f"{name}.py"
    out.write_text(text)
    return out


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
        ("py_loop", FAIL, "timed out after 2s"),
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


def test_the_budget_stops_a_runaway_test_and_the_rest_are_still_graded(adder):
    limits = Limits(test_timeout=60, hard_test_grace=60, strike_timeout=3, wall_timeout=20)
    result = grade(adder, HOSTILE / "c_loop.py", limits=limits)
    tests = by_name(result)
    assert tests["test_mul"].status == ERROR
    assert "grading budget" in (tests["test_mul"].message or "")
    assert tests["test_add"].status == PASS
    # the tests after the runaway one get the rescue run: an honest hang costs only its own test
    assert all(tests[n].status == PASS for n in ("test_neg", "test_div_by_zero")), result.tests


def test_visible_suite_runs_the_kata_examples(adder):
    result = grade(adder, adder.stub, suite="visible", limits=FAST)
    assert [t.status for t in result.tests] == [FAIL, FAIL]
    assert "NotImplementedError" in result.tests[0].detail


def test_junit_xml_carries_each_tests_place_and_markers_and_the_scored_points(adder, tmp_path):
    """grade() writes through the one JUnit writer (kata/formats.py), after scoring: each case's
    <system-out> names its file:line and markers; the suite's properties hold the points."""
    import xml.etree.ElementTree as ET

    xml = tmp_path / "junit.xml"
    grade(adder, None, limits=FAST, junit_xml=xml)
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite.get("name") == "adder"
    add = suite.find("testcase[@name='test_add']")
    lines = add.find("system-out").text.splitlines()
    assert lines[0].startswith("graders/adder/test_adder.py:") and int(lines[0].rsplit(":", 1)[1]) > 0
    assert lines[1:] == ["level: 1", "points: 1", "edge: adds two numbers"]
    assert {p.get("name"): p.get("value") for p in suite.find("properties")} == {
        "points_earned": "30", "points_possible": "30"}
    # a failure's report names the suite's files relative to the workbook, never the private copy
    learner = HOSTILE.parent / "runner" / "fail" / "input" / "adder.py"
    grade(adder, learner, limits=FAST, junit_xml=xml)
    text = xml.read_text()
    assert "kata-run-" not in text and "submission/" not in text
    assert ET.parse(xml).getroot().find("testsuite/testcase[@name='test_sub']/failure").text.startswith(
        "graders/adder/test_adder.py:")


def test_junit_xml_is_complete_after_a_restart(adder, tmp_path):
    import xml.etree.ElementTree as ET

    xml = tmp_path / "junit.xml"
    result = grade(adder, HOSTILE / "os_exit.py", limits=FAST, junit_xml=xml)
    assert result.restarts >= 1
    suite = ET.parse(xml).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 5 == int(suite.get("tests"))
    assert int(suite.get("errors")) == 1 and int(suite.get("failures")) == 0
    assert {c.get("name") for c in cases} == {"test_add", "test_sub", "test_mul", "test_neg",
                                              "test_div_by_zero"}


# --- fast verdicts ----------------------------------------------------------


@pytest.mark.parametrize("name, what", [("import_c_loop", "did not finish within 3s"),
                                        ("import_os_exit", "exited with code 0 while importing")])
def test_a_module_that_hangs_or_exits_at_import_gets_one_verdict(adder, name, what):
    limits = Limits(test_timeout=20, hard_test_grace=5, import_timeout=3, wall_timeout=60)
    result = grade(adder, HOSTILE / f"{name}.py", limits=limits)
    assert result.status == ERROR and len(result.tests) == 5
    assert all(t.status == ERROR and what in t.message for t in result.tests), result.tests
    assert result.restarts == 0
    assert result.duration < 20, result.duration  # one bound, not one per test
    assert result.points_earned == 0


def test_a_thread_left_running_does_not_hold_the_verdict(adder):
    result = grade(adder, HOSTILE / "thread_left_running.py", limits=FAST)
    assert result.status == PASS, result
    assert result.duration < 15, result.duration


def test_timeouts_in_a_row_shorten_the_bound_and_the_budget_ends_the_run(adder):
    limits = Limits(test_timeout=2, hard_test_grace=1, strike_timeout=0.5, wall_timeout=60)
    result = grade(adder, HOSTILE / "all_c_loops.py", limits=limits)
    assert all(t.status == ERROR for t in result.tests)
    assert [t.message.split(":")[0] for t in result.tests] == ["timed out"] * 5
    bounds = [t.message for t in result.tests]
    assert "after 3s" in bounds[0] and "after 3s" in bounds[1]
    assert all("after 2s" in b for b in bounds[2:]), bounds  # 0.5 + 1 s of grace, rounded
    budget = Limits(test_timeout=3, hard_test_grace=1, strike_timeout=0.5, wall_timeout=5,
                    import_timeout=1)
    result = grade(adder, HOSTILE / "all_c_loops.py", limits=budget)
    # the rescue run has a budget of its own (import bound + short bound per test left): a run
    # that hangs everywhere still ends, each test an error, never a pass
    assert all(t.status == ERROR for t in result.tests), result.tests
    assert result.duration < 40


# --- verdicts the learner cannot forge --------------------------------------


@pytest.mark.parametrize("name", ["forge_reports", "forge_events", "always_equal"])
def test_forged_verdicts_score_zero(adder, name):
    result = grade(adder, HOSTILE / f"{name}.py", limits=FAST)
    assert result.tampered, result
    assert result.points_earned == 0 and result.status == ERROR
    assert result.message.startswith("tampered:")


def test_the_reference_is_never_marked_tampered(adder):
    for _ in range(3):  # canaries land at random places each run
        result = grade(adder, None, limits=FAST)
        assert result.tampered is None and result.status == PASS, result


def test_canaries_are_not_reported_as_tests(adder):
    result = grade(adder, adder.stub, limits=FAST)
    assert len(result.tests) == 5


# --- hidden tests out of reach ----------------------------------------------


def test_the_child_works_in_a_private_copy_without_the_workbook_path(adder, tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_SANDBOX", "off")  # the spy writes what it saw outside its copy
    monkeypatch.setenv("KATA_INSTRUCTOR_TOKEN", "s3cret")
    spy = tmp_path / "spy.py"
    spy.write_text(
        "import os, json, sys\n"
        f"open({str(tmp_path / 'seen.json')!r}, 'w').write(json.dumps("
        "{'cwd': os.getcwd(), 'argv': sys.argv, 'env': dict(os.environ), 'file': __file__}))\n"
        + (adder.root / "solutions" / "adder.py").read_text())
    grade(adder, spy, limits=FAST)
    import json

    seen = json.loads((tmp_path / "seen.json").read_text())
    root = str(adder.root)
    assert root not in seen["cwd"] and root not in " ".join(seen["argv"])
    assert root not in seen["file"] and str(tmp_path) not in seen["file"]
    assert not any(root in str(v) for v in seen["env"].values())
    assert "KATA_SECRET_FD" not in seen["env"]
    # an empty environment plus an allowlist: nothing of the instructor's reaches the child
    assert "KATA_INSTRUCTOR_TOKEN" not in seen["env"] and "s3cret" not in str(seen["env"])


def test_a_submission_that_rewrites_the_graders_scores_zero_and_blocks_the_next_grade(
        adder, monkeypatch, tmp_path):
    from kata.grading import IntegrityError

    monkeypatch.setenv("KATA_SANDBOX", "off")  # in the sandbox the workbook is out of view
    result = grade(adder, hostile("rewrite_graders", tmp_path, target=adder.root), limits=FAST)
    assert result.points_earned == 0 and result.tampered
    assert "changed" in result.message
    with pytest.raises(IntegrityError, match=r"graders/adder/test_adder.py: changed since"):
        grade(adder, adder.stub, limits=FAST)


def test_a_missing_manifest_is_a_clear_error(adder):
    from kata.grading import IntegrityError

    (adder.grader / "MANIFEST.json").unlink()
    with pytest.raises(IntegrityError, match=r"MANIFEST.json: missing: run `kata validate adder`"):
        grade(adder, None, limits=FAST)


def test_the_grade_uses_the_code_snapshot_not_the_file_now(adder, tmp_path):
    impl = tmp_path / "adder.py"
    impl.write_text("raise SystemExit('not this')\n")
    code = (adder.root / "solutions" / "adder.py").read_text()
    result = grade(adder, impl, limits=FAST, code=code)
    assert result.status == PASS


# the adder kata's other functions, correct: a spy module is its own add() plus these
ADDER_REST = """

def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def neg(a):
    return -a


def div(a, b):
    return a / b
"""

PLUGIN_SPY = '''
import gc


def add(a, b):
    """a + b only if no pytest plugin beyond the ones grading names is loaded (this environment
    has anyio's and platformdirs', installed with watchfiles and kata: a plain pytest run loads them)."""
    config = next(o for o in gc.get_objects() if type(o).__name__ == "Config" and hasattr(o, "pluginmanager"))
    names = {getattr(p, "__name__", "") for p in config.pluginmanager.get_plugins()}
    return -1 if any(n.startswith(("anyio", "platformdirs")) for n in names) else a + b
''' + ADDER_REST


@pytest.mark.parametrize("sandbox_switch", ["on", "off"])
def test_a_pytest_plugin_installed_beside_kata_is_not_loaded_by_grading(adder, tmp_path, monkeypatch,
                                                                        sandbox_switch):
    import importlib.metadata

    installed = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
    assert {"anyio", "platformdirs"} <= installed  # the witnesses: a plain pytest run loads them
    if sandbox_switch == "off":
        monkeypatch.setenv("KATA_SANDBOX", "off")
    spy = tmp_path / "adder.py"
    spy.write_text(PLUGIN_SPY)
    result = grade(adder, spy, suite="hidden", limits=FAST)
    test_add = {t.name.split("::")[-1]: t for t in result.tests}["test_add"]
    assert test_add.status == PASS, (test_add.message, test_add.output)
