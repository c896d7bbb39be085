"""Hidden suite of `speculative-decoding`, level 1: the roofline.

Expected figures come from the prompt's examples, from hand computations in the comments, or from
the oracle in spec_decode_oracle.py (loaded by conftest.py).
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from spec_decode_oracle import (
    ENGINE_TABLE,
    H100,
    LLAMA8B,
    o_compute_bound,
    o_crossover,
    o_decode,
    o_prefill,
    o_time,
)

from kata.checks import check, check_fraction, check_raises, graded, property_settings

PROPERTY = property_settings()


def model(impl, m=LLAMA8B):
    return impl.Model(*m)


def device(impl, d=H100):
    return impl.Device(*d)


def cost_tuple(c):
    return (c.flops, c.bytes)


# --- costs ---------------------------------------------------------------------------


@graded(1, 2, "the prompt's prefill: Llama-3-8B, 2000 tokens on the H100 is compute-bound, 803/24725 s")
def test_prefill_example(impl):
    cost = impl.prefill_cost(model(impl), 2000)
    check(cost_tuple(cost), (32_120_000_000_000, 16_322_144_000), "prefill_cost(llama-3-8b, 2000)")
    check_fraction(impl.step_time(cost, device(impl)), F(803, 24725), "step_time(prefill 2000, H100)")
    check(impl.bound(cost, device(impl)), "compute", "bound(prefill 2000, H100)")


@graded(1, 2, "the prompt's decode: batch 1 and batch 64 at context 1000 are memory-bound")
def test_decode_example(impl):
    cost = impl.decode_cost(model(impl), 1, 1000)
    check(cost_tuple(cost), (16_060_000_000, 16_191_203_072), "decode_cost(llama-3-8b, 1, 1000)")
    check(impl.bound(cost, device(impl)), "memory", "bound(decode 1 x 1000, H100)")
    cost = impl.decode_cost(model(impl), 64, 1000)
    check(impl.bound(cost, device(impl)), "memory", "bound(decode 64 x 1000, H100)")


@graded(1, 1, "prefill of one token: 2P FLOPs, weights plus one token's K/V")
def test_prefill_one_token(impl):
    check(cost_tuple(impl.prefill_cost(impl.Model("m", 10, 20, 3), 1)), (20, 23), "prefill_cost(Model(m, 10, 20, 3), 1)")


@graded(1, 1, "decode at context 0 still writes the new token's K/V (context + 1 per sequence)")
def test_decode_context_zero(impl):
    # 2 * 10 * 3 FLOPs; 20 + 3 * (0 + 1) * 7 bytes
    check(cost_tuple(impl.decode_cost(impl.Model("m", 10, 20, 7), 3, 0)), (60, 41), "decode_cost(Model(m, 10, 20, 7), 3, 0)")


@graded(1, 1, "weights are read once per step, not once per sequence or per token")
def test_weights_read_once(impl):
    m = impl.Model("m", 5, 1000, 0)
    check(cost_tuple(impl.decode_cost(m, 8, 9)), (80, 1000), "decode_cost(Model(m, 5, 1000, 0), 8, 9)")
    check(cost_tuple(impl.prefill_cost(m, 8)), (80, 1000), "prefill_cost(Model(m, 5, 1000, 0), 8)")


@graded(1, 1, "a model with kv_bytes_per_token 0 is valid")
def test_zero_kv_is_valid(impl):
    check(cost_tuple(impl.decode_cost(impl.Model("m", 1, 1, 0), 1, 0)), (2, 1), "decode_cost(Model(m, 1, 1, 0), 1, 0)")


@graded(1, 3, "prefill_cost and decode_cost match the oracle on generated models, past 2**53")
@PROPERTY
@given(params=st.integers(1, 10**12), weights=st.integers(1, 10**13), kv=st.integers(0, 10**6),
       n=st.integers(1, 10**6), b=st.integers(1, 4096), c=st.integers(0, 10**6))
@example(params=2**53 + 1, weights=2**54 + 1, kv=3, n=10**6 + 1, b=4095, c=10**6)
def test_costs_match_oracle(impl, params, weights, kv, n, b, c):
    m = ("m", params, weights, kv)
    check(cost_tuple(impl.prefill_cost(model(impl, m), n)), o_prefill(m, n), f"prefill_cost(Model{m}, {n})")
    check(cost_tuple(impl.decode_cost(model(impl, m), b, c)), o_decode(m, b, c), f"decode_cost(Model{m}, {b}, {c})")


# --- time and bound ------------------------------------------------------------------


@graded(1, 1, "step_time is a Fraction even when whole, and takes the larger side")
def test_step_time_fraction(impl):
    d = impl.Device("d", 40, 8)
    check_fraction(impl.step_time(impl.Cost(80, 32), d), F(4), "step_time(Cost(80, 32), Device(d, 40, 8))")
    check_fraction(impl.step_time(impl.Cost(400, 8), d), F(10), "step_time(Cost(400, 8), Device(d, 40, 8))")
    check_fraction(impl.step_time(impl.Cost(0, 0), d), F(0), "step_time(Cost(0, 0), Device(d, 40, 8))")


@graded(1, 2, "an exact tie between FLOP time and byte time is compute-bound")
def test_bound_tie_is_compute(impl):
    d = impl.Device("d", 40, 8)
    check(impl.bound(impl.Cost(80, 16), d), "compute", "bound(Cost(80, 16), Device(d, 40, 8)) (2 s each)")
    check(impl.bound(impl.Cost(79, 16), d), "memory", "bound(Cost(79, 16), Device(d, 40, 8))")
    check(impl.bound(impl.Cost(0, 0), d), "compute", "bound(Cost(0, 0), Device(d, 40, 8)) (0 s each)")


@graded(1, 2, "bound and step_time are exact past 2**53: one FLOP under a tie is memory-bound")
def test_bound_exact_beyond_2_53(impl):
    d = impl.Device("d", 3, 1)
    flops, moved = 3 * 2**60 - 1, 2**60  # flops / 3 as a float rounds to 2**60: a false tie
    check(impl.bound(impl.Cost(flops, moved), d), "memory", f"bound(Cost({flops}, {moved}), Device(d, 3, 1))")
    check_fraction(impl.step_time(impl.Cost(flops, moved), d), F(2**60), f"step_time(Cost({flops}, {moved}), Device(d, 3, 1))")
    check_fraction(impl.step_time(impl.Cost(flops + 2, moved), d), F(flops + 2, 3),
                   f"step_time(Cost({flops + 2}, {moved}), Device(d, 3, 1))")


@graded(1, 2, "step_time and bound match the oracle on generated costs and devices")
@PROPERTY
@given(flops=st.integers(0, 10**18), moved=st.integers(0, 10**18), peak=st.integers(1, 10**15),
       bw=st.integers(1, 10**13))
@example(flops=6, moved=2, peak=3, bw=1)
def test_time_and_bound_match_oracle(impl, flops, moved, peak, bw):
    d = ("d", peak, bw)
    call = f"Cost({flops}, {moved}), Device{d}"
    check_fraction(impl.step_time(impl.Cost(flops, moved), device(impl, d)), o_time((flops, moved), d), f"step_time({call})")
    want = "compute" if o_compute_bound((flops, moved), d) else "memory"
    check(impl.bound(impl.Cost(flops, moved), device(impl, d)), want, f"bound({call})")


# --- the crossover batch ----------------------------------------------------------------


@graded(1, 2, "the prompt's crossover: 296 at context 0, 391 at 100, None at 1000")
def test_crossover_examples(impl):
    got = [impl.decode_crossover_batch(model(impl), device(impl), c) for c in (0, 100, 1000)]
    check(got, [296, 391, None], "decode_crossover_batch(llama-3-8b, H100, c) for c = 0, 100, 1000")


@graded(1, 2, "a crossover that lands exactly on a whole batch is that batch, not one more")
def test_crossover_exact_tie(impl):
    # Device(1, 1): compute iff 2 P b >= W + b (c + 1) kv. P = 3, kv = 2, c = 0: 6b >= W + 2b, b >= W / 4.
    m = impl.Model("m", 3, 40, 2)
    check(impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 0), 10, "decode_crossover_batch(Model(m, 3, 40, 2), Device(d, 1, 1), 0)")
    m = impl.Model("m", 3, 41, 2)
    check(impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 0), 11, "decode_crossover_batch(Model(m, 3, 41, 2), Device(d, 1, 1), 0)")


@graded(1, 2, "when a sequence's own bytes exactly balance its FLOPs, no batch is compute-bound: None")
def test_crossover_balanced_sequence_is_none(impl):
    # 2 P bw == (c + 1) kv peak: 2 * 3 * 1 == (2 + 1) * 2 * 1; the weights keep every batch memory-bound
    m = impl.Model("m", 3, 5, 2)
    check(impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 2), None, "decode_crossover_batch(Model(m, 3, 5, 2), Device(d, 1, 1), 2)")
    # context 1: 6b >= 5 + 4b, so b >= 5/2: batch 3
    check(impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 1), 3, "decode_crossover_batch(Model(m, 3, 5, 2), Device(d, 1, 1), 1)")


@graded(1, 1, "when batch 1 is already compute-bound the answer is 1, never 0")
def test_crossover_at_least_one(impl):
    m = impl.Model("m", 10**6, 1, 0)
    check(impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 0), 1, "decode_crossover_batch(Model(m, 10**6, 1, 0), Device(d, 1, 1), 0)")


@graded(1, 2, "a crossover in the trillions is computed, not searched batch by batch, and exactly past 2**53")
def test_crossover_huge(impl):
    # per sequence: 2 * 1 * 10**12 FLOP-bytes vs (0 + 1) * (2 * 10**12 - 1) * 1: a margin of 1
    m = impl.Model("m", 1, 10**12, 2 * 10**12 - 1)
    got = impl.decode_crossover_batch(m, impl.Device("d", 1, 10**12), 0)
    check(got, 10**12, "decode_crossover_batch(Model(m, 1, 10**12, 2 * 10**12 - 1), Device(d, 1, 10**12), 0)")
    # W * peak / per-sequence margin = (3 * 2**60 + 1) / 3: a float division rounds to 2**60
    m = impl.Model("m", 2, 3 * 2**60 + 1, 1)
    got = impl.decode_crossover_batch(m, impl.Device("d", 1, 1), 0)
    check(got, 2**60 + 1, "decode_crossover_batch(Model(m, 2, 3 * 2**60 + 1, 1), Device(d, 1, 1), 0)")


@graded(1, 3, "the crossover matches a bisection on the exact predicate; the batch before it is memory-bound")
@PROPERTY
@given(params=st.integers(1, 10**4), weights=st.integers(1, 10**6), kv=st.integers(0, 200),
       peak=st.integers(1, 10**4), bw=st.integers(1, 10**4), c=st.integers(0, 50))
@example(params=3, weights=40, kv=2, peak=1, bw=1, c=0)
@example(params=3, weights=5, kv=2, peak=1, bw=1, c=2)
def test_crossover_matches_oracle(impl, params, weights, kv, peak, bw, c):
    m, d = ("m", params, weights, kv), ("d", peak, bw)
    got = impl.decode_crossover_batch(model(impl, m), device(impl, d), c)
    check(got, o_crossover(m, d, c), f"decode_crossover_batch(Model{m}, Device{d}, {c})")


# --- the table -----------------------------------------------------------------------


@graded(1, 1, "DEVICES is the prompt's table, the reference engine's datasheet figures")
def test_devices_table(impl):
    got = {name: (d.name, d.peak_flops, d.hbm_bandwidth) for name, d in impl.DEVICES.items()}
    check(got, {name: (name, *v) for name, v in ENGINE_TABLE.items()}, "DEVICES")


# --- invalid input -----------------------------------------------------------------------

INT_BAD = (True, 2.0, None, "2")


@graded(1, 2, "every int field and argument rejects True, 2.0, None, '2' and values below its minimum, naming it")
@pytest.mark.parametrize("field,index,minimum", [("num_params", 1, 1), ("weight_bytes", 2, 1), ("kv_bytes_per_token", 3, 0)])
def test_invalid_model_fields(impl, field, index, minimum):
    for bad in INT_BAD + (minimum - 1,):
        fields = list(LLAMA8B)
        fields[index] = bad
        check_raises(lambda: impl.decode_cost(impl.Model(*fields), 1, 0), field, f"decode_cost(Model{tuple(fields)}, 1, 0)")
        check_raises(lambda: impl.prefill_cost(impl.Model(*fields), 1), field, f"prefill_cost(Model{tuple(fields)}, 1)")


@graded(1, 2, "num_tokens, batch, context, and the Device and Cost fields are checked the same way")
def test_invalid_arguments(impl):
    m, d = model(impl), device(impl)
    for bad in INT_BAD + (0,):
        check_raises(lambda: impl.prefill_cost(m, bad), "num_tokens", f"prefill_cost(m, {bad!r})")
        check_raises(lambda: impl.decode_cost(m, bad, 0), "batch", f"decode_cost(m, {bad!r}, 0)")
        check_raises(lambda: impl.step_time(impl.Cost(1, 1), impl.Device("d", bad, 1)), "peak_flops",
                     f"step_time(Cost(1, 1), Device(d, {bad!r}, 1))")
        check_raises(lambda: impl.bound(impl.Cost(1, 1), impl.Device("d", 1, bad)), "hbm_bandwidth",
                     f"bound(Cost(1, 1), Device(d, 1, {bad!r}))")
    for bad in INT_BAD + (-1,):
        check_raises(lambda: impl.decode_cost(m, 1, bad), "context", f"decode_cost(m, 1, {bad!r})")
        check_raises(lambda: impl.decode_crossover_batch(m, d, bad), "context", f"decode_crossover_batch(m, H100, {bad!r})")
        check_raises(lambda: impl.step_time(impl.Cost(bad, 1), d), "flops", f"step_time(Cost({bad!r}, 1), H100)")
        check_raises(lambda: impl.bound(impl.Cost(1, bad), d), "bytes", f"bound(Cost(1, {bad!r}), H100)")


@graded(1, 1, "several invalid arguments: the first in signature order is named (cost before device, model before batch)")
def test_invalid_order(impl):
    check_raises(lambda: impl.decode_cost(impl.Model("m", 0, 0, -1), 0, -1), "num_params", "decode_cost(Model(m, 0, 0, -1), 0, -1)")
    check_raises(lambda: impl.decode_cost(impl.Model("m", 1, 0, -1), 0, -1), "weight_bytes", "decode_cost(Model(m, 1, 0, -1), 0, -1)")
    check_raises(lambda: impl.decode_cost(model(impl), 0, -1), "batch", "decode_cost(m, 0, -1)")
    check_raises(lambda: impl.step_time(impl.Cost(-1, 1), impl.Device("d", 0, 0)), "flops", "step_time(Cost(-1, 1), Device(d, 0, 0))")
    check_raises(lambda: impl.bound(impl.Cost(1, 1), impl.Device("d", 0, 0)), "peak_flops", "bound(Cost(1, 1), Device(d, 0, 0))")
    check_raises(lambda: impl.decode_crossover_batch(impl.Model("m", 1, 1, -1), impl.Device("d", 0, 1), -1),
                 "kv_bytes_per_token", "decode_crossover_batch(Model(m, 1, 1, -1), Device(d, 0, 1), -1)")
    check_raises(lambda: impl.decode_crossover_batch(model(impl), impl.Device("d", 0, 1), -1),
                 "peak_flops", "decode_crossover_batch(m, Device(d, 0, 1), -1)")


@graded(1, 1, "a Cost with both fields invalid names flops, the field declared first")
def test_cost_two_bad_fields(impl):
    for bad in ((-1, -1), (True, 1.0), (None, "2"), (2.0, -1)):
        check_raises(lambda: impl.step_time(impl.Cost(*bad), impl.Device("d", 1, 1)), "flops",
                     f"step_time(Cost{bad}, Device(d, 1, 1)) (both fields bad: flops is declared first)")
        check_raises(lambda: impl.bound(impl.Cost(*bad), impl.Device("d", 1, 1)), "flops",
                     f"bound(Cost{bad}, Device(d, 1, 1)) (both fields bad: flops is declared first)")
