"""Hidden suite of `speculative-decoding`, level 2: when speculation pays."""

from __future__ import annotations

from fractions import Fraction as F

from hypothesis import example, given
from hypothesis import strategies as st
from spec_decode_oracle import (
    DRAFT1B,
    H100,
    LLAMA8B,
    o_best,
    o_expected,
    o_speedup,
    o_speedup_at_batch,
    o_verify_cost,
    rationals,
)

from kata.checks import check, check_fraction, check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings()


def models(impl):
    return impl.Model(*LLAMA8B), impl.Model(*DRAFT1B), impl.Device(*H100)


# --- expected tokens -------------------------------------------------------------------


@graded(2, 2, "expected_tokens: the prompt's 7/4, and exactly g + 1 when a == 1 (the closed form divides by zero)")
def test_expected_tokens_examples(impl):
    check_fraction(impl.expected_tokens(F(1, 2), 2), F(7, 4), "expected_tokens(1/2, 2)")
    check_fraction(impl.expected_tokens(1, 3), F(4), "expected_tokens(1, 3)")
    check_fraction(impl.expected_tokens(F(1), 5), F(6), "expected_tokens(Fraction(1), 5)")


@graded(2, 1, "expected_tokens with a == 0 or g == 0 is one token, as a Fraction")
def test_expected_tokens_degenerate(impl):
    check_fraction(impl.expected_tokens(0, 7), F(1), "expected_tokens(0, 7)")
    check_fraction(impl.expected_tokens(F(3, 4), 0), F(1), "expected_tokens(3/4, 0)")
    check_fraction(impl.expected_tokens(1, 0), F(1), "expected_tokens(1, 0)")


@graded(2, 2, "expected_tokens is the exact geometric sum on generated rates and lengths")
@PROPERTY
@given(a=rationals, g=st.integers(0, 30))
@example(a=F(1), g=30)
@example(a=F(11, 12), g=1)
def test_expected_tokens_matches_oracle(impl, a, g):
    check_fraction(impl.expected_tokens(a, g), o_expected(a, g), f"expected_tokens({a}, {g})")


# --- speedup and the best draft length -----------------------------------------------------


@graded(2, 2, "speedup: the prompt's 2101/875; g = 0 is exactly 1; c = 0 is the expected tokens")
def test_speedup_examples(impl):
    check_fraction(impl.speedup(F(4, 5), 4, F(1, 10)), F(2101, 875), "speedup(4/5, 4, 1/10)")
    check_fraction(impl.speedup(F(1, 3), 0, 5), F(1), "speedup(1/3, 0, 5)")
    check_fraction(impl.speedup(F(1, 2), 2, 0), F(7, 4), "speedup(1/2, 2, 0)")
    check_fraction(impl.speedup(1, 3, F(1, 3)), F(2), "speedup(1, 3, 1/3)")


@graded(2, 2, "speedup matches the oracle on generated a, g, c")
@PROPERTY
@given(a=rationals, g=st.integers(0, 12), c=st.fractions(min_value=0, max_value=3, max_denominator=10))
def test_speedup_matches_oracle(impl, a, g, c):
    check_fraction(impl.speedup(a, g, c), o_speedup(a, g, c), f"speedup({a}, {g}, {c})")


@graded(2, 2, "best_draft_length: the prompt's 6, and 0 when no draft length beats plain decoding")
def test_best_examples(impl):
    check(impl.best_draft_length(F(4, 5), F(1, 10), 10), 6, "best_draft_length(4/5, 1/10, 10)")
    check(impl.best_draft_length(F(1, 5), F(1, 2), 10), 0, "best_draft_length(1/5, 1/2, 10)")


@graded(2, 2, "best_draft_length on a tie takes the smallest g: 1 over 2 at a = 1/2, c = 1/5; 0 when every g ties at 1")
def test_best_tie_smallest(impl):
    # speedup(1/2, 1, 1/5) = (3/2) / (6/5) = 5/4 = (7/4) / (7/5) = speedup(1/2, 2, 1/5)
    check(impl.best_draft_length(F(1, 2), F(1, 5), 5), 1, "best_draft_length(1/2, 1/5, 5)")
    # a = 1, c = 1: (g + 1) / (g + 1) = 1 for every g
    check(impl.best_draft_length(1, 1, 6), 0, "best_draft_length(1, 1, 6)")


@graded(2, 1, "best_draft_length with max_g = 0 is 0; with a = 1 and c = 0 it is max_g")
def test_best_bounds(impl):
    check(impl.best_draft_length(F(9, 10), F(1, 100), 0), 0, "best_draft_length(9/10, 1/100, 0)")
    check(impl.best_draft_length(1, 0, 7), 7, "best_draft_length(1, 0, 7)")


@graded(2, 3, "best_draft_length matches the oracle (argmax, smallest on ties) on generated a, c")
@PROPERTY
@given(a=rationals, c=st.fractions(min_value=0, max_value=1, max_denominator=10), max_g=st.integers(0, 15))
@example(a=F(1, 2), c=F(1, 5), max_g=5)
@example(a=F(1), c=F(1), max_g=3)
def test_best_matches_oracle(impl, a, c, max_g):
    check(impl.best_draft_length(a, c, max_g), o_best(a, c, max_g), f"best_draft_length({a}, {c}, {max_g})")


# --- on the roofline ---------------------------------------------------------------------


@graded(2, 2, "verify_cost: g + 1 tokens per sequence, weights once; with g = 0 it is decode_cost")
def test_verify_cost(impl):
    m = impl.Model("m", 10, 20, 3)
    c = impl.verify_cost(m, 2, 5, 3)
    check((c.flops, c.bytes), o_verify_cost(("m", 10, 20, 3), 2, 5, 3), "verify_cost(Model(m, 10, 20, 3), 2, 5, 3)")
    c0, d = impl.verify_cost(m, 4, 7, 0), impl.decode_cost(m, 4, 7)
    check((c0.flops, c0.bytes), (d.flops, d.bytes), "verify_cost(Model(m, 10, 20, 3), 4, 7, 0) vs decode_cost(.., 4, 7)")


@graded(2, 3, "speedup_at_batch: the prompt's figures, about 2.08 at batch 1 and 0.60 at 1024 (compute-bound verification)")
def test_speedup_at_batch_examples(impl):
    t, dr, d = models(impl)
    for batch, shown in ((1, 2.08), (64, 2.02), (256, 0.79), (1024, 0.60)):
        got = impl.speedup_at_batch(t, dr, d, batch, 100, F(4, 5), 4)
        want = o_speedup_at_batch(LLAMA8B, DRAFT1B, H100, batch, 100, F(4, 5), 4)
        assert same(round(float(want), 2), shown)  # the prompt's rounded figure
        check_fraction(got, want, f"speedup_at_batch(llama-3-8b, draft-1b, H100, {batch}, 100, 4/5, 4)")


@graded(2, 1, "speedup_at_batch with g = 0 is exactly 1")
def test_speedup_at_batch_no_draft(impl):
    t, dr, d = models(impl)
    check_fraction(impl.speedup_at_batch(t, dr, d, 8, 500, F(1, 2), 0), F(1), "speedup_at_batch(.., 8, 500, 1/2, 0)")


@graded(2, 2, "the draft's i-th step sees context + i cached tokens (a draft whose K/V dominates shows it)")
def test_draft_context_grows(impl):
    t, dr = ("t", 100, 1000, 1), ("dr", 1, 1, 1000)  # the draft is all K/V
    d = ("d", 10**6, 1)
    got = impl.speedup_at_batch(impl.Model(*t), impl.Model(*dr), impl.Device(*d), 1, 0, F(1, 2), 3)
    check_fraction(got, o_speedup_at_batch(t, dr, d, 1, 0, F(1, 2), 3), "speedup_at_batch(t, K/V-heavy draft, .., 1, 0, 1/2, 3)")


@graded(2, 3, "speedup_at_batch matches the oracle on generated models, devices and batches")
@PROPERTY
@given(tp=st.integers(1, 10**4), tw=st.integers(1, 10**5), tkv=st.integers(0, 100), dp=st.integers(1, 10**3),
       dw=st.integers(1, 10**4), dkv=st.integers(0, 100), peak=st.integers(1, 10**4), bw=st.integers(1, 10**4),
       batch=st.integers(1, 64), context=st.integers(0, 100), a=rationals, g=st.integers(0, 6))
def test_speedup_at_batch_matches_oracle(impl, tp, tw, tkv, dp, dw, dkv, peak, bw, batch, context, a, g):
    t, dr, d = ("t", tp, tw, tkv), ("dr", dp, dw, dkv), ("d", peak, bw)
    got = impl.speedup_at_batch(impl.Model(*t), impl.Model(*dr), impl.Device(*d), batch, context, a, g)
    check_fraction(got, o_speedup_at_batch(t, dr, d, batch, context, a, g),
                   f"speedup_at_batch(Model{t}, Model{dr}, Device{d}, {batch}, {context}, {a}, {g})")


# --- invalid input -------------------------------------------------------------------------

RATE_BAD = (0.5, True, None, "1/2", F(-1, 3), F(4, 3), 2)


@graded(2, 2, "a must be a rational in [0, 1]: floats, bools, None, strings and values outside are rejected naming a")
def test_invalid_rate(impl):
    for bad in RATE_BAD:
        check_raises(lambda: impl.expected_tokens(bad, 2), "a", f"expected_tokens({bad!r}, 2)")
        check_raises(lambda: impl.speedup(bad, 2, 0), "a", f"speedup({bad!r}, 2, 0)")
        check_raises(lambda: impl.best_draft_length(bad, 0, 2), "a", f"best_draft_length({bad!r}, 0, 2)")
        check_raises(lambda: impl.best_draft_length(bad, 0, 0), "a", f"best_draft_length({bad!r}, 0, 0)")


@graded(2, 2, "g, c and max_g: ints / rationals in range, each named; checks run in signature order")
def test_invalid_other_arguments(impl):
    for bad in (True, 2.0, None, "2", -1):
        check_raises(lambda: impl.expected_tokens(F(1, 2), bad), "g", f"expected_tokens(1/2, {bad!r})")
        check_raises(lambda: impl.speedup(F(1, 2), bad, 0), "g", f"speedup(1/2, {bad!r}, 0)")
        check_raises(lambda: impl.best_draft_length(F(1, 2), 0, bad), "max_g", f"best_draft_length(1/2, 0, {bad!r})")
    for bad in (0.1, True, None, "0", F(-1, 2), -1):
        check_raises(lambda: impl.speedup(F(1, 2), 2, bad), "c", f"speedup(1/2, 2, {bad!r})")
        check_raises(lambda: impl.best_draft_length(F(1, 2), bad, 2), "c", f"best_draft_length(1/2, {bad!r}, 2)")
    check_raises(lambda: impl.speedup(2, -1, -1), "a", "speedup(2, -1, -1)")
    check_raises(lambda: impl.speedup(1, -1, -1), "g", "speedup(1, -1, -1)")


@graded(2, 2, "verify_cost and speedup_at_batch check models, device, batch, context, a and g in signature order")
def test_invalid_roofline_arguments(impl):
    t, dr, d = models(impl)
    bad_model = impl.Model("x", 0, 1, 0)
    check_raises(lambda: impl.verify_cost(t, 1, 0, -1), "g", "verify_cost(t, 1, 0, -1)")
    check_raises(lambda: impl.verify_cost(t, 0, -1, -1), "batch", "verify_cost(t, 0, -1, -1)")
    check_raises(lambda: impl.verify_cost(t, 1, True, 1), "context", "verify_cost(t, 1, True, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, bad_model, d, 0, 0, 0.5, 1), "num_params",
                 "speedup_at_batch(t, Model(x, 0, 1, 0), H100, 0, 0, 0.5, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, impl.Device("d", 1, 0), 0, 0, 0.5, 1), "hbm_bandwidth",
                 "speedup_at_batch(t, dr, Device(d, 1, 0), 0, 0, 0.5, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, d, 0, 0, 0.5, 1), "batch", "speedup_at_batch(t, dr, H100, 0, 0, 0.5, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, d, 1, -1, 0.5, 1), "context", "speedup_at_batch(t, dr, H100, 1, -1, 0.5, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, d, 1, 0, 0.5, 1), "a", "speedup_at_batch(t, dr, H100, 1, 0, 0.5, 1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, d, 1, 0, 2, -1), "a", "speedup_at_batch(t, dr, H100, 1, 0, 2, -1)")
    check_raises(lambda: impl.speedup_at_batch(t, dr, d, 1, 0, F(1, 2), 1.0), "g", "speedup_at_batch(t, dr, H100, 1, 0, 1/2, 1.0)")
