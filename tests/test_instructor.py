"""The instructor workflow: scaffold, validate, mutants, student bundle, cohort grading."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from kata.cli import app
from kata.catalog import Workbook, load_kata
from kata.cohort import bundle_leaks, grade_batch, merge
from kata.grading import Limits
from kata.validate import validate_kata
from tests.conftest import FIXTURES

runner = CliRunner()
# no shorter bound after two timeouts: on a loaded machine it could cut a slow correct test short
FAST = Limits(test_timeout=2, hard_test_grace=2, wall_timeout=120, strike_timeout=2)


def kata(*args, code=0):
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def empty_workbook(tmp_path, monkeypatch):
    root = tmp_path / "private"
    (root / "katas").mkdir(parents=True)
    monkeypatch.setenv("KATA_WORKBOOK", str(root))
    return root


def checks(report):
    return {c.name: (c.ok, c.detail) for c in report.checks}


def test_scaffold_then_validate_is_green(empty_workbook):
    out = kata("new", "token-budget").output
    assert "katas/token-budget/token_budget.py" in out
    report = validate_kata(Workbook.find(), "token-budget")
    assert report.ok, report.checks
    assert report.bugs == 1 and report.hidden_tests >= 6
    assert "already exists" in kata("new", "token-budget", code=2).output
    assert "not valid" in kata("new", "Token_Budget", code=2).output


def test_api_drift_between_stub_and_reference_is_caught(empty_workbook):
    kata("new", "drift")
    stub = empty_workbook / "katas" / "drift" / "drift.py"
    stub.write_text(stub.read_text().replace("budget: int) -> int:", "budget: int, strict=False) -> int:"))
    ok, detail = checks(validate_kata(Workbook.find(), "drift"))["api"]
    assert not ok and "count_admitted: stub has count_admitted(sizes, budget, strict=...)" in detail


def test_a_markerless_grader_test_is_caught(empty_workbook):
    kata("new", "marks")
    grader = empty_workbook / "graders" / "marks" / "test_marks.py"
    grader.write_text(grader.read_text() + "\n\ndef test_unmarked(impl):\n    assert impl.count_admitted([], 1) == 0\n")
    ok, detail = checks(validate_kata(Workbook.find(), "marks"))["markers"]
    assert not ok and "test_unmarked: level marker missing" in detail and "edge marker missing" in detail


def test_a_surviving_bug_is_caught(empty_workbook):
    from kata.zoo import make_patch

    kata("new", "zoo")
    ref = (empty_workbook / "solutions" / "zoo.py").read_text()
    harmless = ref.replace("total = 0", "total = 0  # a comment changes nothing", 1)
    (empty_workbook / "tests" / "bugs" / "zoo" / "harmless.patch").write_text(
        make_patch(ref, harmless, "zoo", "harmless", {"Bug": "none at all"}))
    ok, detail = checks(validate_kata(Workbook.find(), "zoo"))["bug-zoo"]
    assert not ok and "not caught: harmless.patch" in detail


def test_a_patch_that_no_longer_applies_fails_validate_naming_it(empty_workbook):
    kata("new", "zoo")
    solution = empty_workbook / "solutions" / "zoo.py"
    solution.write_text(solution.read_text().replace("if total > budget:", "if budget < total:"))
    ok, detail = checks(validate_kata(Workbook.find(), "zoo"))["bug-zoo"]
    assert not ok
    assert "equal_budget_rejected.patch: hunk 1 (reference line" in detail and "no longer applies" in detail


def test_a_patch_that_changes_nothing_is_refused(empty_workbook):
    kata("new", "zoo")
    ref = (empty_workbook / "solutions" / "zoo.py").read_text()
    patch = empty_workbook / "tests" / "bugs" / "zoo" / "empty.patch"
    patch.write_text("Bug: none\n--- a/x\n+++ b/y\n@@ -1,1 +1,1 @@\n " + ref.splitlines()[0] + "\n")
    ok, detail = checks(validate_kata(Workbook.find(), "zoo"))["bug-zoo"]
    assert not ok and "empty.patch: applies but changes nothing" in detail


def test_mutation_score_is_reported_and_a_weak_suite_scores_low(empty_workbook):
    pytest.importorskip("mutmut")
    from kata.mutants import run_mutants

    kata("new", "strong")
    strong = run_mutants(Workbook.find().kata("strong"))
    assert strong.score is not None and strong.score >= 0.8, strong.to_json()
    kata("new", "weak")
    grader = empty_workbook / "graders" / "weak" / "test_weak.py"
    grader.write_text(
        "import pytest\n\n\n@pytest.mark.level(1)\n@pytest.mark.points(1)\n@pytest.mark.edge('empty')\n"
        "def test_empty(impl):\n    assert impl.count_admitted([], 5) == 0\n"
    )
    weak = json.loads(kata("validate", "weak", "--mutants", "--json").output)["katas"][0]
    assert weak["score"] is not None and weak["score"] < 0.5, weak
    assert weak["survived"] > 0 and all(m["diff"].startswith("---") for m in weak["survivors"])


def test_equivalent_marks_leave_the_score_and_stale_marks_are_reported():
    from kata.mutants import classify

    codes = {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 0, "m.x_f__mutmut_3": 0, "m.x_f__mutmut_4": 33}
    plain = classify("k", codes, {}, diff_of=lambda name: f"--- {name}")
    assert (plain.count("killed"), plain.count("survived"), plain.scored, plain.score) == (1, 2, 4, 0.25)
    assert [m.diff for m in plain.mutants if m.status == "survived"] == ["--- m.x_f__mutmut_2", "--- m.x_f__mutmut_3"]
    marks = {"m.x_f__mutmut_2": "only the message", "m.x_f__mutmut_1": "wrongly marked", "m.x_g__mutmut_9": "renamed"}
    marked = classify("k", codes, marks)
    assert [(m.name, m.status) for m in marked.mutants if m.status in ("equivalent", "killed")] == [
        ("m.x_f__mutmut_1", "killed"), ("m.x_f__mutmut_2", "equivalent")]
    assert (marked.scored, marked.score) == (3, 0.3333)
    assert marked.stale_marks == ["m.x_f__mutmut_1 is marked equivalent but the hidden suite kills it",
                                  "m.x_g__mutmut_9 is marked equivalent but mutmut made no such mutant"]
    assert marked.to_json()["equivalent"] == 1 and marked.to_json()["stale_marks"] == marked.stale_marks


def test_bug_zoo_runs_the_cheapest_test_files_first(fixture_workbook):
    from types import SimpleNamespace

    from kata.validate import cheapest_files_first

    adder = load_kata(fixture_workbook, "adder")
    (adder.grader / "test_slow.py").write_text((adder.grader / "test_adder.py").read_text())
    (adder.grader / "test_unrun.py").write_text("")

    def ref(*timed):
        return SimpleNamespace(tests=[SimpleNamespace(name=f"graders/adder/{f}::test_{n}", duration=d)
                                      for n, (f, d) in enumerate(timed)])

    got = cheapest_files_first(adder, ref(("test_slow.py", 2.0), ("test_adder.py", 0.5),
                                          ("test_adder.py", 0.25)))
    assert [p.name for p in got] == ["test_adder.py", "test_slow.py", "test_unrun.py"]
    assert cheapest_files_first(adder, ref()) is None  # nothing to order by: the folder's order
    assert cheapest_files_first(adder, ref(("elsewhere/test_x.py", 1.0))) is None


def test_student_bundle_has_no_solution_or_hidden_test(tmp_path):
    out = tmp_path / "bundle"
    text = kata("bundle", "--student", str(out)).output
    assert "no reference solutions and no hidden tests" in text
    wb = Workbook.find()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and not bundle_leaks(wb, out)
    names = {p.relative_to(out).parts[0] for p in files}
    assert not names & {"solutions", "graders", "tests"}
    for slug in wb.slugs():
        assert (out / "katas" / slug / "PROMPT.md").is_file()
    assert "not empty" in kata("bundle", "--student", str(out), code=2).output


def test_student_bundle_works_for_a_student(tmp_path, monkeypatch):
    out = tmp_path / "bundle"
    kata("bundle", "--student", str(out))
    monkeypatch.setenv("KATA_WORKBOOK", str(out))
    slug = Workbook.find().slugs()[0]
    kata("start", slug)
    assert "not submitted" in kata("status").output
    assert "NotImplementedError" in kata("check", slug, code=1).output  # visible tests run
    assert "grading happens on your instructor's side" in kata("submit", slug, code=2).output


def test_a_bundles_own_cli_works_as_its_readme_says(tmp_path):
    """The bundle's commands, run by the bundle's own copy of the tool from inside it."""
    import subprocess
    import sys

    out = tmp_path / "bundle"
    kata("bundle", "--student", str(out))
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("KATA_WORKBOOK",)}
    env["KATA_STATE_DIR"] = str(tmp_path / "state")

    def run(*args, code=0):
        done = subprocess.run([sys.executable, "-m", "kata", *args], cwd=out, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done.stdout + done.stderr

    readme = (out / "README.md").read_text()
    assert ".venv/bin/kata start" in readme
    started = run("start", "--yes") if "--yes" in run("start", "--help") else run("start")
    assert "Session 1 started: llm-infra-oa" in started
    assert "kata submit" not in started and "Hand in your workspace/" in started
    helptext = run("--help")
    for command in ("validate", "new", "bundle", "grade-batch", "gradebook", "solution", "submit"):
        assert f" {command} " not in helptext, command
    for command in ("start", "show", "check", "status", "hint"):
        assert f" {command} " in helptext, command
    assert "no such command" in run("solution", "lru-kv-cache", code=2)
    # hints: not in plain text anywhere in the bundle, shown (and recorded) by `kata hint`
    hint = Workbook.find().kata("lru-kv-cache").hints[0][1]
    for f in out.rglob("*"):
        if f.is_file() and f.suffix in (".toml", ".md", ".py", ".txt"):
            assert hint[:40] not in f.read_text(encoding="utf-8"), f
    assert hint in run("hint", "lru-kv-cache")
    assert "Hint 2 of" in run("hint", "lru-kv-cache")


def _cohort(tmp_path):
    cohort = tmp_path / "cohort"
    shutil.copytree(FIXTURES / "cohort", cohort)
    return cohort


def test_grade_batch_survives_crashing_and_hanging_submissions(fixture_workbook, tmp_path):
    book = grade_batch(Workbook.find(), _cohort(tmp_path), workers=2, limits=FAST)
    rows = {r["student"]: r for r in book["rows"]}
    assert set(rows) == {"alice", "bob", "carol", "dave", "erin", "frank"}
    assert rows["alice"]["points_earned"] == 30 and rows["alice"]["status"] == "pass"
    assert rows["bob"]["points_earned"] == 0
    assert rows["carol"]["points_earned"] == 25  # os._exit in one test costs only that test
    assert rows["dave"]["points_earned"] == 25  # a hang inside C code likewise
    assert rows["erin"]["status"] == "error" and "SyntaxError" in rows["erin"]["message"]
    assert rows["frank"]["status"] == "missing"
    top = book["most_failed"][0]
    assert top["test"].endswith("test_mul") and top["students_failed"] == 4


def test_shards_merge_to_the_same_gradebook_as_one_run(fixture_workbook, tmp_path):
    cohort = _cohort(tmp_path)
    whole = grade_batch(Workbook.find(), cohort, workers=2, limits=FAST)
    shards = [grade_batch(Workbook.find(), cohort, workers=2, shard=f"{k}/3", limits=FAST) for k in (1, 2, 3)]
    assert sorted(s for b in shards for s in b["students"]) == whole["students"]
    merged = merge(shards)
    assert merged == whole


def test_grade_batch_and_merge_commands_write_csv_and_json(fixture_workbook, tmp_path):
    cohort = tmp_path / "two"
    for name in ("alice", "bob"):
        shutil.copytree(FIXTURES / "cohort" / name, cohort / name)
    kata("grade-batch", str(cohort), "--out", str(tmp_path / "g1"), "--shard", "1/2", "--workers", "2")
    kata("grade-batch", str(cohort), "--out", str(tmp_path / "g2"), "--shard", "2/2",
         "--junit-xml", str(tmp_path / "g2.xml"))
    import xml.etree.ElementTree as ET

    (suite,) = ET.parse(tmp_path / "g2.xml").getroot().findall("testsuite")
    assert suite.get("name") == "bob/adder" and suite.get("tests") == "5"
    # each case's place is the first line of its <system-out> (the schema CI importers check
    # allows no file or line attribute; --junit-rich adds them)
    assert all(c.find("system-out").text.startswith("graders/adder/test_adder.py:")
               for c in suite.findall("testcase"))
    kata("gradebook", "merge", str(tmp_path / "g1" / "gradebook.json"), str(tmp_path / "g2" / "gradebook.json"),
         "--out", str(tmp_path / "all"))
    csv_text = (tmp_path / "all" / "gradebook.csv").read_text().splitlines()
    assert csv_text[0].startswith("student,kata,status,points_earned,points_possible,level_1,level_2")
    assert csv_text[1].startswith("alice,adder,pass,30.0,30")
    assert csv_text[2].startswith("bob,adder,fail,0.0,30")
    assert json.loads((tmp_path / "all" / "gradebook.json").read_text())["students"] == ["alice", "bob"]
    # a row per student, a column per kata (what Canvas and Gradescope import)
    wide = (tmp_path / "all" / "gradebook-wide.csv").read_text().splitlines()
    assert wide == ["student,adder,total,possible", "alice,30.0,30.0,30", "bob,0.0,0.0,30"]
    assert "K/N" in kata("grade-batch", str(cohort), "--shard", "3/2", code=2).output


def test_grade_batch_from_another_folder_with_a_relative_path(fixture_workbook, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    for name in ("alice", "frank"):
        shutil.copytree(FIXTURES / "cohort" / name, elsewhere / "subs" / name)
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("KATA_WORKBOOK")
    out = kata("--workbook", str(fixture_workbook), "grade-batch", "subs", "--out", "gb").output
    book = json.loads((elsewhere / "gb" / "gradebook.json").read_text())
    rows = {r["student"]: r for r in book["rows"]}
    assert rows["alice"]["status"] == "pass" and rows["alice"]["points_earned"] == 30
    assert rows["frank"]["status"] == "missing"
    assert "Missing (no file handed in, 0 points): 1 student(s)" in out and "frank: adder" in out


def test_grade_batch_over_a_folder_with_no_kata_file_is_an_error(fixture_workbook, tmp_path, monkeypatch):
    (tmp_path / "subs" / "frank").mkdir(parents=True)
    (tmp_path / "subs" / "frank" / "notes.txt").write_text("hi")
    monkeypatch.chdir(tmp_path)
    result = kata("grade-batch", "subs", code=2)
    assert "no student folder holds a kata file (adder.py)" in result.output
    assert "SUBMISSIONS/<student>/<module>.py" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_one_students_code_cannot_change_anothers_result(fixture_workbook, tmp_path, monkeypatch):
    from tests.test_grading import hostile

    cohort = tmp_path / "subs"
    for name in ("mallory", "zed"):
        (cohort / name).mkdir(parents=True)
    shutil.copyfile(hostile("rewrite_graders", tmp_path, target=fixture_workbook),
                    cohort / "mallory" / "adder.py")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", cohort / "zed" / "adder.py")
    monkeypatch.setenv("KATA_SANDBOX", "off")  # the unsandboxed path: the workbook is in reach
    book = grade_batch(Workbook.find(), cohort, workers=1, limits=FAST)
    rows = {r["student"]: r for r in book["rows"]}
    assert rows["mallory"]["points_earned"] == 0
    assert rows["zed"]["status"] == "pass" and rows["zed"]["points_earned"] == 30
    assert "assert True or" in (fixture_workbook / "graders" / "adder" / "test_adder.py").read_text()
