"""Visible checks: the prompt's examples and a few more. The hidden suite has many more edge cases."""

from fractions import Fraction as F

import pytest


def llama8b(impl):
    return impl.Model("llama-3-8b", 8_030_000_000, 16_060_000_000, 131_072)


def draft1b(impl):
    return impl.Model("draft-1b", 1_240_000_000, 2_480_000_000, 32_768)


# --- level 1 ----------------------------------------------------------------


@pytest.mark.level(1)
def test_prefill_is_compute_bound(impl):
    h100 = impl.DEVICES["H100"]
    cost = impl.prefill_cost(llama8b(impl), 2000)
    assert cost == impl.Cost(32_120_000_000_000, 16_322_144_000), f"prefill_cost(llama-3-8b, 2000) returned {cost!r}."
    t = impl.step_time(cost, h100)
    assert type(t) is F and t == F(803, 24725), f"step_time returned {t!r}, expected Fraction(803, 24725)."
    assert impl.bound(cost, h100) == "compute"


@pytest.mark.level(1)
def test_decode_is_memory_bound(impl):
    h100 = impl.DEVICES["H100"]
    cost = impl.decode_cost(llama8b(impl), 1, 1000)
    assert cost == impl.Cost(16_060_000_000, 16_191_203_072), f"decode_cost(llama-3-8b, 1, 1000) returned {cost!r}."
    assert impl.bound(cost, h100) == "memory"
    assert impl.bound(impl.decode_cost(llama8b(impl), 64, 1000), h100) == "memory"


@pytest.mark.level(1)
def test_crossover_batch(impl):
    h100 = impl.DEVICES["H100"]
    got = [impl.decode_crossover_batch(llama8b(impl), h100, c) for c in (0, 100, 1000)]
    assert got == [296, 391, None], f"decode_crossover_batch at contexts 0, 100, 1000 returned {got!r}."


@pytest.mark.level(1)
def test_invalid_batch(impl):
    with pytest.raises(ValueError, match="^batch"):
        impl.decode_cost(llama8b(impl), 0, 10)


# --- level 2 ----------------------------------------------------------------


@pytest.mark.level(2)
def test_expected_tokens(impl):
    assert impl.expected_tokens(F(1, 2), 2) == F(7, 4)
    got = impl.expected_tokens(1, 3)
    assert type(got) is F and got == 4, f"expected_tokens(1, 3) returned {got!r}, expected Fraction(4, 1)."


@pytest.mark.level(2)
def test_speedup_and_best_g(impl):
    assert impl.speedup(F(4, 5), 4, F(1, 10)) == F(2101, 875)
    assert impl.best_draft_length(F(4, 5), F(1, 10), 10) == 6
    assert impl.best_draft_length(F(1, 5), F(1, 2), 10) == 0


@pytest.mark.level(2)
def test_speedup_falls_at_large_batch(impl):
    h100 = impl.DEVICES["H100"]
    small = impl.speedup_at_batch(llama8b(impl), draft1b(impl), h100, 1, 100, F(4, 5), 4)
    large = impl.speedup_at_batch(llama8b(impl), draft1b(impl), h100, 1024, 100, F(4, 5), 4)
    assert round(float(small), 2) == 2.08 and round(float(large), 2) == 0.60, f"speedup_at_batch: {float(small)} at batch 1, {float(large)} at 1024."


@pytest.mark.level(2)
def test_breakeven_batch(impl):
    h100 = impl.DEVICES["H100"]
    assert impl.breakeven_batch(llama8b(impl), draft1b(impl), h100, 100, F(4, 5), 4) == 182
    assert impl.breakeven_batch(llama8b(impl), draft1b(impl), h100, 100, F(4, 5), 1) == 299
    assert impl.breakeven_batch(llama8b(impl), draft1b(impl), h100, 1000, F(4, 5), 4) is None
    assert impl.breakeven_batch(llama8b(impl), draft1b(impl), h100, 100, F(4, 5), 0) == 0


@pytest.mark.level(2)
def test_float_rate_rejected(impl):
    with pytest.raises(ValueError, match="^a"):
        impl.expected_tokens(0.5, 2)


# --- level 3 ----------------------------------------------------------------

P = [[F(1, 2), F(1, 2), 0], [F(1, 3), F(1, 3), F(1, 3)]]
Q = [[F(1, 4), F(1, 4), F(1, 2)]]


@pytest.mark.level(3)
def test_acceptance_rate_and_sample(impl):
    assert impl.acceptance_rate(P[0], Q[0]) == F(1, 2)
    assert impl.sample([F(1, 4), F(1, 4), 0], F(1, 2)) == 1


@pytest.mark.level(3)
def test_verify_examples(impl):
    assert impl.verify(P, Q, [0], [F(9, 10), F(1, 2)]) == [0, 1]
    assert impl.verify(P, Q, [2], [F(0), F(1, 2)]) == [1]


@pytest.mark.level(3)
def test_verify_no_draft(impl):
    assert impl.verify([[F(1, 2), F(1, 2)]], [], [], [F(1, 2)]) == [1]


RATES = [F(9, 10), F(1, 2), F(0), F(1), F(3, 4)]


@pytest.mark.level(4)
def test_allocate_drafts_example(impl):
    assert impl.allocate_drafts(RATES, 16, 4) == [4, 1, 0, 4, 2]
    assert impl.batch_expected_tokens(RATES, [4, 1, 0, 4, 2]) == F(34769, 2500)


@pytest.mark.level(4)
def test_no_spare_tokens(impl):
    assert impl.allocate_drafts(RATES, 5, 4) == [0, 0, 0, 0, 0]
