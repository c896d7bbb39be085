"""kata.checks' timing helper: a solution within the factor passes with both results; one past its
CPU budget is stopped by the budget (not waited for) and the message names the likely slow path."""

from __future__ import annotations

import time

import pytest

from kata.checks import compare_speed, load_reference
from tests.conftest import REPO


def _work(n: int) -> int:
    return sum(i * i for i in range(n))


def test_a_solution_within_the_factor_returns_both_results():
    got, want = compare_speed("f(n)", lambda: _work(20_000), lambda: _work(20_000))
    assert got == want == _work(20_000)


def test_a_solution_past_its_budget_is_stopped_and_told_why():
    def forever():
        while True:
            _work(1000)

    start = time.monotonic()
    with pytest.raises(AssertionError) as caught:
        compare_speed("f(n)", forever, lambda: _work(1000), factor=10, floor=0.2, hint="is it rescanned?")
    assert time.monotonic() - start < 10
    assert "Still running after 0.20 s of CPU time" in str(caught.value)
    assert str(caught.value).endswith("within 10x the reference's time: is it rescanned?")


def test_the_reference_is_loaded_once_under_its_own_name():
    path = REPO / "solutions" / "edf-admission.py"
    first = load_reference(path, "edf_admission_reference_for_test")
    assert load_reference(path, "edf_admission_reference_for_test") is first
    assert first.__name__ == "edf_admission_reference_for_test" and hasattr(first, "schedule")


def test_the_references_answer_is_compared_in_the_learners_own_classes():
    import types
    from dataclasses import dataclass

    from kata.checks import same_as_reference

    def module_with_plan():
        @dataclass
        class Plan:
            ids: list
            waste: dict
        return types.SimpleNamespace(Plan=Plan)

    ref, mine = module_with_plan(), module_with_plan()
    want = ref.Plan(["a"], {1: 2})
    assert same_as_reference(mine.Plan(["a"], {1: 2}), want, mine)
    assert not same_as_reference(mine.Plan(["a"], {1: 3}), want, mine)
    assert not same_as_reference(("a", {1: 2}), want, mine)  # not the learner's Plan

    class Anything:
        def __eq__(self, other):
            return True

    assert not same_as_reference(Anything(), want, mine)
