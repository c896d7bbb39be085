"""Every kata in this workbook passes `kata validate`: its reference passes its visible tests and
hidden suite, its stub fails every level, its tests carry their markers, its stub and reference share
one API, two runs agree, and its hidden suite catches every bug patch in tests/bugs/<slug>/."""

from __future__ import annotations

from pathlib import Path

import pytest

from kata.catalog import Workbook
from kata.grading import grade

WB = Workbook.find()

# Validating every kata is the suite's heaviest setup (7-10 minutes of two cores): it runs as
# `kata validate --all --json` in a child process that tests/conftest.py starts as soon as the
# suite is collected, beside the other tests, and these tests (moved to the end) read its report.
# On a busy machine it takes several times longer, so it gets its own bound.
pytestmark = pytest.mark.timeout(2400)


@pytest.fixture(scope="module")
def reports(request):
    """slug -> its validation report (a dict, as `kata validate --json` prints it)."""
    from tests.conftest import validation_report

    return {r["slug"]: r for r in validation_report(request.config)["katas"]}


@pytest.mark.parametrize("slug", WB.slugs())
def test_kata_validates(slug, reports):
    report = reports[slug]
    failed = [f"{c['name']}: {c['detail']}" for c in report["checks"] if not c["ok"]]
    assert not failed, f"{slug}: " + " | ".join(failed)


@pytest.mark.parametrize("slug", WB.slugs())
def test_kata_has_a_bug_zoo_of_twelve(slug):
    from kata.zoo import ZooPatch, entries

    bugs = entries(WB.kata(slug).bugs)
    assert len(bugs) >= 12, f"{slug}: {len(bugs)} bug patches in tests/bugs/{slug}/, docs/KATA_STANDARD.md asks for 12"
    for bug in bugs:  # each says what it breaks, and at which level
        header = ZooPatch.parse(bug).header
        assert header.get("Bug") and header.get("Level", "").isdigit(), bug.name


def test_default_exam_is_calibrated_like_the_real_assessment():
    """Four Easy-Medium questions in 90 minutes, none over 25; each shows at most 1,000 words of
    prose (4,000 for the exam), like the real round's ~22 minutes a question including reading."""
    from kata.prompt import Prompt, level_note, prose_words

    exam = WB.exam("llm-infra-oa")
    assert exam.minutes == 90 and sum(q.minutes for q in exam.questions) == 90
    assert exam.katas == ("token-batcher", "priority-scheduler", "streaming-token-counter", "lora-memory-math")
    total = 0
    for q in exam.questions:
        assert q.minutes <= 25, q
        kata = WB.kata(q.kata)
        note = level_note(list(q.levels), list(q.levels), len(kata.levels), q.reveal == "progressive")
        words = prose_words(Prompt.parse(kata.prompt.read_text()).render(q.levels, note))  # as shown
        assert words <= 1000, (q.kata, words)
        total += words
    assert total <= 4000, total


@pytest.mark.parametrize("slug", ["token-batcher", "priority-scheduler", "streaming-token-counter",
                                  "lora-memory-math"])
def test_the_reference_scores_full_marks_on_its_default_exam_question(slug):
    (q,) = [q for q in WB.exam("llm-infra-oa").questions if q.kata == slug]
    result = grade(WB.kata(slug), None, levels=list(q.levels))
    assert result.status == "pass" and result.points_earned == result.points_possible
    assert {t.task_id for t in result.tests} == set(q.levels)
    assert [lv.level for lv in result.levels] == list(q.levels)


def test_the_full_exam_holds_every_level_of_the_four_katas():
    exam = WB.exam("llm-infra-full")
    assert exam.katas == WB.exam("llm-infra-oa").katas
    for q in exam.questions:
        assert q.levels == tuple(lv.number for lv in WB.kata(q.kata).levels)
        assert q.reveal == "progressive"


HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile"


@pytest.mark.parametrize("hostile", ["forge_reports", "forge_events", "always_equal"])
@pytest.mark.parametrize("slug", WB.slugs())
def test_forged_verdicts_earn_zero_on_every_kata(slug, hostile):
    """In one process with the tests, the forgery is seen and the run scores 0 as tampered; across
    the process boundary (kata/boundary.py) it patches a process no verdict comes from: 0 points,
    every test failed on its merits (level 1's tests there: every level's fail alike, no function
    being there to call)."""
    apart = WB.kata(slug).process_boundary
    result = grade(WB.kata(slug), HOSTILE / f"{hostile}.py", levels=[1] if apart else None)
    assert result.points_earned == 0, (slug, hostile, result.message)
    if apart:
        assert not result.tampered and result.tests and all(t.status != "pass" for t in result.tests)
        return
    assert result.tampered, (slug, hostile, result.message)
    assert result.status == "error" and result.message.startswith("tampered:")


@pytest.mark.parametrize("slug", WB.slugs())
def test_an_always_equal_object_no_scan_sees_still_earns_zero(slug):
    """The type-strict comparisons (kata.strict.same) hold without the import-time scan."""
    result = grade(WB.kata(slug), HOSTILE / "always_equal_hidden.py")
    assert result.points_earned == 0, [t.name for t in result.tests if t.status == "pass"]


def test_token_batcher_alone_opens_level_two_after_the_reference_passes_level_one(isolated_state):
    import json
    import shutil

    from typer.testing import CliRunner

    from kata.cli import app

    def run(*args, code=0):
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == code, result.output
        return result.output

    run("start", "token-batcher", "--yes")
    assert json.loads(run("show", "--json"))["levels"] == [1]
    shutil.copyfile(WB.kata("token-batcher").solution, isolated_state / "workspace" / "token_batcher.py")
    submitted = run("submit")
    assert "Level 2 is open" in submitted
    # the table shows level 1's points; the line says what they are of the question's whole
    assert "25 of the question's 100 points so far" in " ".join(submitted.split())
    assert json.loads(run("show", "--json"))["levels"] == [1, 2]
    run("start", "token-batcher", "--yes", "--reveal", "all", "--abandon")
    assert json.loads(run("show", "--json"))["levels"] == [1, 2, 3, 4]
