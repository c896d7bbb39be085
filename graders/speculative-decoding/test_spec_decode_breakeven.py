"""Hidden suite of `speculative-decoding`, level 2: breakeven_batch, the largest batch at which a
draft length still pays (speedup_at_batch > 1), 0 when none does, None when it pays for ever."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from spec_decode_oracle import DRAFT1B, H100, LLAMA8B, o_breakeven, o_speedup_at_batch

from kata.checks import check, check_raises, graded, property_settings
from kata.strict import same


def call(impl, t, dr, d, c, a, g):
    return impl.breakeven_batch(impl.Model(*t), impl.Model(*dr), impl.Device(*d), c, a, g)


def check_breakeven(impl, t, dr, d, c, a, g, expected):
    got = call(impl, t, dr, d, c, a, g)
    assert same(got, expected), (
        f"Called breakeven_batch(Model{t}, Model{dr}, Device{d}, {c}, {a}, {g}). Returned {got!r}, expected {expected!r}.")


@graded(2, 3, "breakeven_batch: the prompt's Llama-3-8B figures (182 for g = 4, 299 for g = 1, 81 at a = 1/2)")
def test_prompt_examples(impl):
    for a, g, want in ((F(4, 5), 4, 182), (F(4, 5), 1, 299), (F(1, 2), 4, 81)):
        # the oracle's scan is far too long at these sizes; past the answer the target is
        # compute-bound, so the speedup only falls
        assert o_speedup_at_batch(LLAMA8B, DRAFT1B, H100, want, 100, a, g) > 1
        assert o_speedup_at_batch(LLAMA8B, DRAFT1B, H100, want + 1, 100, a, g) < 1
        check_breakeven(impl, LLAMA8B, DRAFT1B, H100, 100, a, g, want)


@graded(2, 2, "breakeven_batch is None when the target is never compute-bound (context 1000): it pays at every batch")
def test_pays_for_ever(impl):
    check_breakeven(impl, LLAMA8B, DRAFT1B, H100, 1000, F(4, 5), 4, None)


@graded(2, 1, "breakeven_batch is 0 when no batch pays: g = 0 (speedup exactly 1), and a = 0")
def test_never_pays(impl):
    check_breakeven(impl, LLAMA8B, DRAFT1B, H100, 100, F(4, 5), 0, 0)
    check_breakeven(impl, LLAMA8B, DRAFT1B, H100, 1000, F(4, 5), 0, 0)  # 0, not None, at any context
    check_breakeven(impl, LLAMA8B, DRAFT1B, H100, 100, 0, 3, 0)


@graded(2, 2, "breakeven_batch: a speedup of exactly 1 does not pay (the batch before it is the answer)")
def test_exact_tie_does_not_pay(impl):
    t, dr, d = ("t", 2, 26, 4), ("d", 5, 5, 2), ("x", 20, 12)
    assert same(o_speedup_at_batch(t, dr, d, 13, 1, 1, 1), F(1))
    check_breakeven(impl, t, dr, d, 1, 1, 1, 12)


@graded(2, 2, "breakeven_batch when batch 1 does not pay but a larger batch does (not monotone: no bisection from 1)")
def test_pays_only_from_a_larger_batch(impl):
    t, dr, d = ("t", 32, 13, 7), ("d", 8, 7, 0), ("x", 43, 6)
    assert o_speedup_at_batch(t, dr, d, 1, 5, F(2, 5), 3) < 1
    check_breakeven(impl, t, dr, d, 5, F(2, 5), 3, 5)
    t, dr, d = ("t", 32, 49, 11), ("d", 7, 17, 0), ("x", 29, 10)
    check_breakeven(impl, t, dr, d, 16, F(1, 5), 3, 10)


@graded(2, 2, "breakeven_batch in the hundreds of billions is computed, not searched one batch at a time")
@pytest.mark.timeout(5)
def test_answer_in_the_billions(impl):
    check_breakeven(impl, ("t", 1, 10**12, 0), ("d", 1, 1, 0), ("x", 1, 1), 0, F(1, 2), 1, 249_999_999_999)
    check_breakeven(impl, ("t", 1_000, 10**15, 1), ("d", 10, 10**9, 0), ("x", 10**6, 10**6), 10, F(9, 10), 2,
                    450_900_886_660)


@graded(2, 1, "breakeven_batch is exact past 2**53: the batch before the one where the speedup falls to 1 is not rounded through a float")
@pytest.mark.timeout(5)
def test_answer_past_2_53_exact(impl):
    t, dr, d = ("t", 1, 4 * (2**53 + 1), 0), ("d", 1, 1, 0), ("x", 1, 1)
    assert same(o_speedup_at_batch(t, dr, d, 2**53 + 1, 0, F(1, 2), 1), F(1))  # exactly 1: does not pay
    assert o_speedup_at_batch(t, dr, d, 2**53, 0, F(1, 2), 1) > 1
    check_breakeven(impl, t, dr, d, 0, F(1, 2), 1, 2**53)
    t = ("t", 1, 4 * 2**53 + 1, 0)  # the speedup reaches 1 a quarter past 2**53
    assert o_speedup_at_batch(t, dr, d, 2**53, 0, F(1, 2), 1) > 1 > o_speedup_at_batch(t, dr, d, 2**53 + 1, 0, F(1, 2), 1)
    check_breakeven(impl, t, dr, d, 0, F(1, 2), 1, 2**53)
    t = ("t", 1, 4 * 10**18 + 4, 0)
    check_breakeven(impl, t, dr, d, 0, F(1, 2), 1, 10**18)


@graded(2, 3, "breakeven_batch matches a scanning oracle on generated small models, devices, rates and lengths")
@property_settings(40)
@given(tp=st.integers(1, 40), tw=st.integers(1, 8), tkv=st.integers(0, 12), dp=st.integers(1, 8),
       dw=st.integers(1, 6), dkv=st.integers(0, 3), peak=st.integers(1, 8), bw=st.integers(1, 12),
       context=st.integers(0, 12), a=st.integers(0, 6).map(lambda n: F(n, 6)), g=st.integers(0, 4))
@example(tp=1, tw=24, tkv=4, dp=3, dw=2, dkv=2, peak=7, bw=5, context=2, a=F(3, 4), g=1)  # tie at 16
@example(tp=1, tw=4, tkv=0, dp=1, dw=1, dkv=0, peak=1, bw=1, context=0, a=F(1, 2), g=1)  # pays up to 0
@example(tp=2, tw=7, tkv=0, dp=3, dw=4, dkv=0, peak=5, bw=2, context=2, a=F(3, 4), g=1)  # a short piece: its slope from its own ends
@example(tp=5, tw=8, tkv=3, dp=4, dw=1, dkv=1, peak=5, bw=1, context=5, a=F(1, 2), g=1)  # flat and positive for ever: None
@example(tp=2, tw=3, tkv=4, dp=2, dw=1, dkv=1, peak=6, bw=2, context=3, a=F(1, 2), g=1)  # flat at a small positive gain: None
@example(tp=3, tw=7, tkv=0, dp=4, dw=3, dkv=0, peak=4, bw=1, context=1, a=F(3, 4), g=2)  # pays only at batch 1, on a rising piece
@example(tp=5, tw=6, tkv=5, dp=4, dw=3, dkv=0, peak=6, bw=4, context=2, a=F(1, 2), g=1)  # pays only at batch 1, which is a piece's left end
@example(tp=12, tw=8, tkv=0, dp=3, dw=1, dkv=0, peak=4, bw=1, context=0, a=F(1), g=1)  # a crossing between batch 1 and 2
def test_matches_oracle(impl, tp, tw, tkv, dp, dw, dkv, peak, bw, context, a, g):
    t, dr, d = ("t", tp, tw, tkv), ("d", dp, dw, dkv), ("x", peak, bw)
    check_breakeven(impl, t, dr, d, context, a, g, o_breakeven(t, dr, d, context, a, g))


# --- invalid input -------------------------------------------------------------------------

# one invalid value per argument, in signature order, with the name its message must begin with
BAD = (("target", ("t", 0, 1, 0), "num_params"), ("draft", ("d", 1, 1, -1), "kv_bytes_per_token"),
       ("device", ("x", 1, 0), "hbm_bandwidth"), ("context", -1, "context"), ("a", F(3, 2), "a"), ("g", -1, "g"))
GOOD = {"target": LLAMA8B, "draft": DRAFT1B, "device": H100, "context": 100, "a": F(4, 5), "g": 4}


def call_with(impl, args):
    return impl.breakeven_batch(impl.Model(*args["target"]), impl.Model(*args["draft"]), impl.Device(*args["device"]),
                                args["context"], args["a"], args["g"])


@graded(2, 2, "breakeven_batch: with two invalid arguments, the earlier one in the signature is named (every pair)")
def test_validation_order_every_pair(impl):
    for i, (first, bad_first, name) in enumerate(BAD):
        for second, bad_second, _ in BAD[i + 1:]:
            args = {**GOOD, first: bad_first, second: bad_second}
            check_raises(lambda: call_with(impl, args), name, f"breakeven_batch with {first} and {second} invalid")


@graded(2, 2, "breakeven_batch: bool, float, None and str for context and g, floats and bools for a, each named")
def test_invalid_types(impl):
    for bad in (True, False, 2.0, None, "2"):
        check_raises(lambda: call_with(impl, {**GOOD, "context": bad}), "context", f"breakeven_batch(.., context={bad!r}, ..)")
        check_raises(lambda: call_with(impl, {**GOOD, "g": bad}), "g", f"breakeven_batch(.., g={bad!r})")
    for bad in (0.5, True, None, "1/2", F(-1, 3)):
        check_raises(lambda: call_with(impl, {**GOOD, "a": bad}), "a", f"breakeven_batch(.., a={bad!r}, ..)")
    check_raises(lambda: call_with(impl, {**GOOD, "target": ("t", 1, True, 0)}), "weight_bytes",
                 "breakeven_batch(Model(t, 1, True, 0), ..)")
    check_raises(lambda: call_with(impl, {**GOOD, "device": ("x", 1.0, 1)}), "peak_flops",
                 "breakeven_batch(.., Device(x, 1.0, 1), ..)")


@graded(2, 1, "breakeven_batch returns an int (not a bool or a Fraction) and does not depend on earlier calls")
def test_result_type(impl):
    got = call(impl, LLAMA8B, DRAFT1B, H100, 100, F(4, 5), 4)
    check(type(got).__name__, "int", "type(breakeven_batch(llama-3-8b, draft-1b, H100, 100, 4/5, 4))")
    again = call(impl, LLAMA8B, DRAFT1B, H100, 100, F(4, 5), 4)
    assert same(again, got), f"A second identical call returned {again!r}, the first {got!r}."
