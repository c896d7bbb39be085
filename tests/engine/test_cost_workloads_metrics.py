"""Cost model (roofline), workloads (seeded traces) and metrics (percentiles, waste)."""

from __future__ import annotations

import math

import pytest

from kata.engine.config import MODEL_PRESETS
from kata.engine.cost_model import HARDWARE, CostModel, num_blocks_that_fit
from kata.engine.metrics import MetricsRecorder, summarize
from kata.engine.scheduler import ScheduledBatch
from kata.engine.sequence import SamplingParams, Sequence
from kata.engine.workloads import WORKLOADS, make_workload

LLAMA = MODEL_PRESETS["llama-3-8b"]


def decode_batch(n, ctx):
    return ScheduledBatch(step=0, num_decode_seqs=n, num_decode_context_tokens=n * ctx,
                          num_sampled=n)


def prefill_batch(n):
    return ScheduledBatch(step=0, prefill_tokens=n, prefill_attention_pairs=n * (n + 1) // 2,
                          num_sampled=1)


def test_llama_shape_and_memory_sizing():
    assert 7.9e9 < LLAMA.num_params < 8.1e9
    assert LLAMA.kv_bytes_per_token == 128 * 1024
    assert 28_000 < num_blocks_that_fit(HARDWARE["H100"], LLAMA, 16) < 30_000


def test_the_1b_preset_is_llama_3_2_1b_shaped():
    m = MODEL_PRESETS["llama-3.2-1b"]
    assert (m.hidden_size, m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim,
            m.intermediate_size, m.vocab_size) == (2048, 16, 32, 8, 64, 8192, 128256)
    # an untied LM head: the released model's 1,235,814,400 parameters plus a second embedding
    assert m.num_params == 1_235_814_400 + 128256 * 2048
    assert m.kv_bytes_per_token == 32 * 1024


def test_nvlink_runs_at_each_cards_own_figure():
    """NVLink 3 on the A100 carries 300 GB/s each way, NVLink 4 450 (the interconnect table's
    convention: one direction); other links are the same everywhere."""
    from kata.engine.cost_model import link_on

    assert link_on(HARDWARE["A100"], "nvlink").bandwidth == 300e9
    assert link_on(HARDWARE["H100"], "nvlink").bandwidth == link_on(HARDWARE["H200"], "nvlink").bandwidth == 450e9
    assert link_on(HARDWARE["A100"], "network") == link_on(HARDWARE["H100"], "network")
    assert CostModel(HARDWARE["A100"], LLAMA, tp_size=2).interconnect.bandwidth == 300e9
    a100 = CostModel(HARDWARE["A100"], LLAMA, tp_size=8).comm_time(64)
    a100_at_h100_link = CostModel(HARDWARE["A100"], LLAMA, tp_size=8,
                                  interconnect=link_on(HARDWARE["H100"], "nvlink")).comm_time(64)
    assert a100 > a100_at_h100_link


def test_memory_is_what_the_driver_reports():
    assert [int(HARDWARE[h].memory_bytes) for h in ("A100", "H100", "H200")] == [
        81_920 * 2**20, 81_559 * 2**20, 143_771 * 2**20]


def test_decode_is_memory_bound_and_prefill_compute_bound():
    cm = CostModel(HARDWARE["A100"], LLAMA)
    flops, moved = cm.step_flops_bytes(decode_batch(8, 512))
    hw = HARDWARE["A100"]
    assert moved / hw.hbm_bandwidth > flops / hw.peak_flops  # decode: bytes dominate
    flops, moved = cm.step_flops_bytes(prefill_batch(4096))
    assert flops / hw.peak_flops > moved / hw.hbm_bandwidth  # prefill: FLOPs dominate
    # One decode step of a small batch costs about one read of the weights (the input
    # embedding aside: only a few of its rows are read): 7.5e9 params * 2 bytes.
    weights = (LLAMA.num_params - LLAMA.vocab_size * LLAMA.hidden_size) * 2
    t = cm.step_time(decode_batch(1, 100))
    assert t == pytest.approx(weights / (2.039e12 * 0.7), rel=0.01)


def test_batching_decode_is_nearly_free_until_compute_bound():
    cm = CostModel(HARDWARE["H100"], LLAMA)
    one, many = cm.step_time(decode_batch(1, 256)), cm.step_time(decode_batch(64, 256))
    assert many < 3 * one  # 64x the tokens for < 3x the time
    assert cm.step_time(ScheduledBatch(step=0)) == 0.0


def test_faster_hardware_is_faster_and_swaps_cost_host_bandwidth():
    times = [CostModel(HARDWARE[h], LLAMA).step_time(decode_batch(32, 1024))
             for h in ("A10G", "A100", "H100", "H200")]
    assert times == sorted(times, reverse=True)
    cm = CostModel(HARDWARE["A100"], LLAMA, block_size=16)
    swap = ScheduledBatch(step=0, swap_out=[(0, 0)] * 10)
    assert cm.step_time(swap) == pytest.approx(10 * 16 * 131072 / 25e9)
    with pytest.raises(ValueError):
        CostModel(HARDWARE["A100"], LLAMA, mfu=0)


@pytest.mark.parametrize("name", WORKLOADS)
def test_workloads_are_seeded_and_fit(name):
    a = make_workload(name, 50, seed=3, rate=10.0, max_model_len=1024)
    assert a == make_workload(name, 50, seed=3, rate=10.0, max_model_len=1024)
    assert a != make_workload(name, 50, seed=4, rate=10.0, max_model_len=1024)
    assert [r.arrival_time for r in a] == sorted(r.arrival_time for r in a)
    for r in a:
        assert len(r.prompt_token_ids) == r.num_prompt_tokens >= 1 and r.output_len >= 1
        assert r.num_prompt_tokens + r.output_len <= 1024
    bare = make_workload(name, 50, seed=3, rate=10.0, max_model_len=1024, with_token_ids=False)
    assert [(r.num_prompt_tokens, r.output_len) for r in bare] == \
        [(r.num_prompt_tokens, r.output_len) for r in a]


def test_shared_prefix_trace_shares_its_system_prompts():
    trace = make_workload("shared-prefix", 20, seed=0, max_model_len=4096)
    heads = {r.prompt_token_ids[:512] for r in trace}
    assert len(heads) <= 4 < len({r.prompt_token_ids for r in trace})


def test_chat_lengths_look_like_chat():
    trace = make_workload("chat", 4000, seed=0, max_model_len=8192, with_token_ids=False)
    prompts = sorted(r.num_prompt_tokens for r in trace)
    outputs = sorted(r.output_len for r in trace)
    assert 100 < prompts[2000] < 160 and 170 < outputs[2000] < 230  # medians
    assert prompts[3960] > 5 * prompts[2000]  # a long right tail
    with pytest.raises(ValueError, match="unknown workload"):
        make_workload("nope", 3)


def test_summarize_computes_percentiles_and_time_weighted_memory():
    seqs = []
    for i, (arrive, first, finish, n) in enumerate([(0, 1, 3, 5), (1, 2, 6, 9)]):
        s = Sequence(i, f"r{i}", None, 10, SamplingParams(), max_tokens=n, arrival_time=arrive)
        s.first_token_time, s.finish_time, s.num_output_tokens = first, finish, n
        seqs.append(s)
    rec = MetricsRecorder()
    rec.record_step(1.0, 1.0, used_blocks=2, tokens=16, reserved=32)  # waste 0.5 for 1 s
    rec.record_step(4.0, 3.0, used_blocks=4, tokens=64, reserved=64)  # waste 0 for 3 s
    m = summarize(seqs, rec, num_blocks=4, num_preemptions=1, cache_hit_tokens=5,
                  cache_query_tokens=20)
    assert m.ttft_p50 == 1.0 and m.e2e_p99 == pytest.approx(4.98)
    assert m.tpot_p50 == pytest.approx((0.5 + 0.5) / 2)
    assert m.makespan_s == 6 and m.output_tokens_per_s == pytest.approx(14 / 6)
    assert m.kv_utilization_mean == pytest.approx((0.5 * 1 + 1.0 * 3) / 4)
    assert m.kv_utilization_peak == 1.0 and m.kv_waste == pytest.approx(0.5 / 4)
    assert m.prefix_cache_hit_rate == 0.25 and m.num_preemptions == 1
    assert math.isnan(summarize([], MetricsRecorder(), num_blocks=1, num_preemptions=0,
                                cache_hit_tokens=0, cache_query_tokens=0).ttft_p50)
