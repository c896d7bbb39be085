"""kata.checks' timing helper: a solution within the factor passes with its result and the
reference's answer; one past its CPU budget is stopped by the budget (not waited for) and the
message names the likely slow path."""

from __future__ import annotations

import time

import pytest

from kata.checks import compare_speed, digest, load_reference
from tests.conftest import REPO


def _work(n: int) -> int:
    return sum(i * i for i in range(n))


def test_a_solution_within_the_factor_returns_its_result_and_the_references_answer():
    got, want = compare_speed("f(n)", lambda: _work(20_000), lambda: _work(20_000))
    assert got == _work(20_000) and want == digest(_work(20_000))
    _, counted = compare_speed("f(n)", lambda: [1], lambda: [1, 2], answer=len)
    assert counted == 2


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
