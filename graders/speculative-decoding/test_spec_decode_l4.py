"""Hidden suite of `speculative-decoding`, level 4: drafts for a batch."""

from __future__ import annotations

import copy
import random
from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st
from spec_decode_oracle import o_allocate, o_allocate_fast, o_best_total, o_expected

from kata.checks import check, check_fraction, check_raises, compare_speed, graded, property_settings

PROPERTY = property_settings(50)
RATES = [F(9, 10), F(1, 2), F(0), F(1), F(3, 4)]


@graded(4, 2, "the prompt's example: rate 1 first, then the gains in order; rate 0 never drafts")
def test_prompt_example(impl):
    check(impl.allocate_drafts(list(RATES), 16, 4), [4, 1, 0, 4, 2], "allocate_drafts(the prompt's rates, 16, 4)")
    check_fraction(impl.batch_expected_tokens(list(RATES), [4, 1, 0, 4, 2]), F(34769, 2500),
                   "batch_expected_tokens(the prompt's rates, [4, 1, 0, 4, 2])")


@graded(4, 1, "a budget of exactly one token per sequence leaves nothing to draft")
def test_no_spare(impl):
    check(impl.allocate_drafts(list(RATES), 5, 4), [0, 0, 0, 0, 0], "allocate_drafts(.., budget=5, 4)")
    check_fraction(impl.batch_expected_tokens(list(RATES), [0] * 5), F(5), "batch_expected_tokens(.., all 0)")


@graded(4, 1, "a tie in gain goes to the lowest index, including a later draft of one sequence against a first of another")
def test_ties_lowest_index(impl):
    check(impl.allocate_drafts([F(1, 2), F(1, 4)], 4, 5), [2, 0], "allocate_drafts([1/2, 1/4], 4, 5)")
    check(impl.allocate_drafts([F(1, 4), F(1, 2)], 4, 5), [1, 1], "allocate_drafts([1/4, 1/2], 4, 5)")
    check(impl.allocate_drafts([F(1, 2), F(1, 2), F(1, 2)], 5, 5), [1, 1, 0], "allocate_drafts([1/2] * 3, 5, 5)")


@graded(4, 1, "rate 1 gains 1 per token up to max_g (lowest index first); then the budget moves on")
def test_certain_drafts(impl):
    check(impl.allocate_drafts([F(1, 2), F(1), F(1)], 3 + 7, 4), [0, 4, 3], "allocate_drafts([1/2, 1, 1], 10, 4)")
    check(impl.allocate_drafts([F(1, 2), 1, 1], 3 + 9, 4), [1, 4, 4], "allocate_drafts([1/2, 1, 1], 12, 4) with int rates")


@graded(4, 1, "when every sequence is at max_g or at rate 0, the rest of the budget is left unused")
def test_budget_left_over(impl):
    check(impl.allocate_drafts([F(9, 10), F(0), F(1, 3)], 1000, 3), [3, 0, 3], "allocate_drafts(.., budget=1000, max_g=3)")
    check(impl.allocate_drafts([F(0), F(0)], 50, 10), [0, 0], "allocate_drafts([0, 0], 50, 10)")
    check(impl.allocate_drafts([F(1, 2)], 50, 0), [0], "allocate_drafts([1/2], 50, max_g=0)")


@graded(4, 1, "gains are compared exactly: (1/2)^2 = 1/4 ties a first draft at 1/4, and 0.9^7 < 0.5")
def test_exact_gains(impl):
    check(impl.allocate_drafts([F(9, 10), F(1, 2)], 2 + 7, 10), [6, 1], "allocate_drafts([9/10, 1/2], 9, 10)")
    rates = [F(999_999, 1_000_000), F(999_998, 1_000_000)]
    check(impl.allocate_drafts(rates, 2 + 40, 100), o_allocate(rates, 42, 100), "allocate_drafts(two rates a millionth apart)")


@graded(4, 1, "arguments are left unchanged")
def test_arguments_unchanged(impl):
    rates = list(RATES)
    drafts = [4, 1, 0, 4, 2]
    got = impl.allocate_drafts(rates, 16, 4)
    impl.batch_expected_tokens(rates, drafts)
    check(got, [4, 1, 0, 4, 2], "allocate_drafts(the prompt's rates, 16, 4)")
    check(rates, RATES, "rates after the calls")
    check(drafts, [4, 1, 0, 4, 2], "drafts after batch_expected_tokens")


@graded(4, 1, "allocate_drafts checks rates (a non-empty list of rationals in [0, 1]), then budget >= len(rates), then max_g")
def test_allocate_invalid(impl):
    for rates in ([], (F(1, 2),), [0.5], [F(3, 2)], [F(-1, 2)], [True], [F(1, 2), "1"], None):
        check_raises(lambda: impl.allocate_drafts(rates, 10, 2), "rates", f"allocate_drafts({rates!r}, 10, 2)")
    for budget in (2, 0, True, 3.0, None):
        check_raises(lambda: impl.allocate_drafts([F(1, 2)] * 3, budget, 2), "budget", f"allocate_drafts(3 rates, {budget!r}, 2)")
    for max_g in (-1, True, 2.0):
        check_raises(lambda: impl.allocate_drafts([F(1, 2)], 5, max_g), "max_g", f"allocate_drafts([1/2], 5, {max_g!r})")
    check_raises(lambda: impl.allocate_drafts([2], 0, -1), "rates", "allocate_drafts([2], 0, -1)")
    check_raises(lambda: impl.allocate_drafts([F(1, 2)], 0, -1), "budget", "allocate_drafts([1/2], 0, -1)")


@graded(4, 1, "batch_expected_tokens checks rates first, then drafts: a list of ints >= 0, one per rate")
def test_batch_expected_invalid(impl):
    for drafts in ([1], [1, 2, 3], [1, -1], [1, True], [1, 2.0], (1, 2), None):
        check_raises(lambda: impl.batch_expected_tokens([F(1, 2), F(1, 3)], drafts), "drafts",
                     f"batch_expected_tokens([1/2, 1/3], {drafts!r})")
    check_raises(lambda: impl.batch_expected_tokens([F(3, 2)], [-1]), "rates", "batch_expected_tokens([3/2], [-1])")


rates_lists = st.lists(st.fractions(0, 1, max_denominator=12), min_size=1, max_size=6)


@graded(4, 2, "property: the allocation equals a literal reading of the rules (one token at a time, full rescan)")
@PROPERTY
@given(rates=rates_lists, spare=st.integers(0, 30), max_g=st.integers(0, 8))
def test_allocate_matches_oracle(impl, rates, spare, max_g):
    budget = len(rates) + spare
    check(impl.allocate_drafts(list(rates), budget, max_g), o_allocate(rates, budget, max_g),
          f"allocate_drafts({rates!r}, {budget}, {max_g})")


@graded(4, 1, "property: the greedy allocation reaches the most expected tokens any allocation can")
@PROPERTY
@given(rates=st.lists(st.fractions(0, 1, max_denominator=8), min_size=1, max_size=3),
       spare=st.integers(0, 7), max_g=st.integers(0, 3))
def test_allocation_is_optimal(impl, rates, spare, max_g):
    budget = len(rates) + spare
    drafts = impl.allocate_drafts(list(rates), budget, max_g)
    check_fraction(impl.batch_expected_tokens(list(rates), drafts), o_best_total(rates, budget, max_g),
                   f"batch_expected_tokens of allocate_drafts({rates!r}, {budget}, {max_g})")


@graded(4, 1, "property: batch_expected_tokens is the sum of expected_tokens, exactly")
@PROPERTY
@given(data=st.data(), rates=rates_lists)
def test_batch_expected_matches_oracle(impl, data, rates):
    drafts = data.draw(st.lists(st.integers(0, 12), min_size=len(rates), max_size=len(rates)))
    check_fraction(impl.batch_expected_tokens(list(rates), list(drafts)),
                   sum((o_expected(a, g) for a, g in zip(rates, drafts)), F(0)),
                   f"batch_expected_tokens({rates!r}, {drafts!r})")


@graded(4, 2, "a thousand sequences and 20,000 spare tokens: no full rescan per token (timed against a heap, 10x slack)")
@pytest.mark.timeout(10)  # the reference takes well under a second; a rescan takes minutes
def test_large_batch_is_fast(impl):
    rng = random.Random(7)
    rates = [F(rng.randrange(0, 101), 100) for _ in range(1000)]
    budget, max_g = 1000 + 20_000, 40
    # timed against the grader's heap of next gains (its time recorded as a baseline), not the reference
    got, _ = compare_speed("allocate_drafts(1,000 rates, 21,000, 40)",
                           lambda: impl.allocate_drafts(copy.copy(rates), budget, max_g),
                           lambda: o_allocate_fast(rates, budget, max_g), floor=0.0, slack=1.0,
                           hint="timed against a heap of next gains: no rescan of every sequence per token")
    check(got, o_allocate_fast(rates, budget, max_g), "allocate_drafts(1,000 rates, 21,000, 40)")


@graded(4, 1, "allocate_drafts: gains that are exactly equal tie (to the lower index), though in floats 0.1 ** 2 > 0.01")
def test_exact_tie_between_gains(impl):
    rates = [F(1, 100), F(1, 10)]  # after one token, sequence 1's next gain is (1/10)^2 = 1/100 exactly
    check(impl.allocate_drafts(list(rates), 4, 3), [1, 1], "allocate_drafts([1/100, 1/10], 4, 3)")
    check(impl.allocate_drafts(list(rates), 5, 3), [1, 2], "allocate_drafts([1/100, 1/10], 5, 3)")
