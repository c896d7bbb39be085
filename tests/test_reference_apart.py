"""The reference apart: what a grader needs from the reference (a time, a count, an answer's digest)
is measured in the reference's own run and handed to the student's, which never holds it.

A submission that reads the reference out of its own process scores with the reference in process
(a learner's own machine) and earns nothing where it runs apart (grade-batch's default)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kata import checks
from kata.catalog import Workbook
from kata.checks import ReferenceApart, baseline, digest, load_reference, read_baselines
from kata.grading import Limits, grade, record_baselines
from kata.manifest import needs_reference, private_copy

ROOT = Path(__file__).resolve().parents[1]
LIMITS = Limits(test_timeout=20, hard_test_grace=5, wall_timeout=300, strike_timeout=20)

# Reads the reference wherever a grader left it: a module in sys.modules with the kata's function
# (every name the tests ask of this module is the reference's), or the file on disk.
THIEF = '''
import importlib.util, pathlib, sys

def _reference():
    for name, module in list(sys.modules.items()):
        if name != __name__ and hasattr(module, "schedule_drr") and hasattr(module, "Request"):
            return module
    here = pathlib.Path(__file__).resolve().parents
    for folder in [*here, *(up / "wb" for up in here)]:
        path = folder / "solutions" / "drr-tenant-scheduler.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("stolen", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["stolen"] = module
            spec.loader.exec_module(module)
            return module
    return None

def __getattr__(name):
    ref = _reference()
    if ref is None:
        raise AttributeError(name)
    return getattr(ref, name)
'''


@dataclass
class Plan:
    ids: list
    waste: dict


def test_a_digest_tells_kinds_apart_as_same_does():
    assert digest([1, 2]) == digest([1, 2])
    assert digest([1, 2]) != digest((1, 2))
    assert digest(True) != digest(1) and digest(1.0) != digest(1)
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})
    assert digest(Plan(["a"], {1: 2})) == digest(Plan(["a"], {1: 2}))
    assert digest(Plan(["a"], {1: 2})) != digest(Plan(["a"], {1: 3}))
    assert digest(Plan(["a"], {1: 2})) != digest((["a"], {1: 2}))

    class Anything:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    assert digest(Anything()) != digest(Plan(["a"], {1: 2}))
    assert digest(Anything()) != digest(Anything())  # an unknown kind matches no answer


def test_a_value_recorded_in_one_run_is_read_in_the_next_without_measuring(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "graders/x/test_x.py::test_y (call)")
    recording = tmp_path / "baselines.jsonl"
    monkeypatch.setenv(checks.REFERENCE_ENV, f"record:{recording}")
    assert baseline("time", lambda: (0.25, "abc")) == [0.25, "abc"]  # one value in every mode
    values = read_baselines(recording)
    assert values == {"graders/x/test_x.py::test_y::time": [0.25, "abc"]}

    apart = tmp_path / "baselines.json"
    apart.write_text(json.dumps(values))
    monkeypatch.setenv(checks.REFERENCE_ENV, f"apart:{apart}")

    def never():
        raise AssertionError("measured where the reference runs apart")

    assert baseline("time", never) == [0.25, "abc"]
    with pytest.raises(pytest.fail.Exception, match="No baseline of the reference for 'other'"):
        baseline("other", never)
    with pytest.raises(ReferenceApart):
        load_reference(ROOT / "solutions" / "edf-admission.py", "edf_admission_reference_apart")


def test_a_private_copy_for_a_run_apart_holds_no_reference(tmp_path):
    kata = Workbook.find(ROOT).kata("drr-tenant-scheduler")
    assert needs_reference(kata)
    assert (private_copy(kata, tmp_path / "in", "hidden") / "solutions").is_dir()
    assert not (private_copy(kata, tmp_path / "apart", "hidden", reference=False) / "solutions").exists()


def test_code_that_reads_the_reference_scores_only_where_it_is_in_process(tmp_path):
    kata = Workbook.find(ROOT).kata("drr-tenant-scheduler")
    thief = tmp_path / "alice" / kata.module
    thief.parent.mkdir()
    thief.write_text(THIEF)
    in_process = grade(kata, thief, "hidden", LIMITS)
    # where the reference is in the run, the trick takes nearly everything
    assert in_process.points_earned >= 20, [t.message for t in in_process.tests if t.status != "pass"][:3]
    baselines = record_baselines(kata, LIMITS)
    assert baselines and all(key.startswith("graders/drr-tenant-scheduler/") for key in baselines)
    apart = grade(kata, thief, "hidden", LIMITS, baselines=baselines)
    assert apart.points_earned == 0.0, [t.name for t in apart.tests if t.status == "pass"]
    honest = grade(kata, kata.solution, "hidden", LIMITS, baselines=baselines)
    assert honest.points_earned == honest.points_possible, [t.message for t in honest.tests if t.status != "pass"]
