"""Tensor parallelism in the cost model (kata/engine/parallel.py): the ring all-reduce formula, exact
with Fractions, shared with the tp-placement kata, and what TP does to simulated step time."""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kata.engine.config import MODEL_PRESETS, EngineConfig
from kata.engine.cost_model import HARDWARE, CostModel, num_blocks_that_fit
from kata.engine.parallel import INTERCONNECTS, ring_allreduce_time, tp_layer_comm_time
from kata.engine.scheduler import ScheduledBatch

LLAMA = MODEL_PRESETS["llama-3-8b"]
REFERENCE = Path(__file__).resolve().parents[2] / "solutions" / "tp-placement.py"


def _tp_reference():
    spec = importlib.util.spec_from_file_location("tp_placement_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def decode_batch(n, ctx):
    return ScheduledBatch(step=0, num_decode_seqs=n, num_decode_context_tokens=n * ctx,
                          num_sampled=n)


def test_ring_allreduce_is_exact_with_fractions_and_matches_the_kata_prompt():
    nbytes = 64 * 2**20
    assert ring_allreduce_time(8, nbytes, 450 * 10**9, Fraction(1, 10**6)) == \
        Fraction(3866891, 14062500000)
    assert ring_allreduce_time(1, nbytes, 450 * 10**9, Fraction(1, 10**6)) == 0
    assert ring_allreduce_time(2, 1000, 10, Fraction(1, 2)) == 2 * 500 / 10 + 2 * Fraction(1, 2)
    with pytest.raises(ValueError, match="n must be"):
        ring_allreduce_time(0, 1, 1, 0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), nbytes=st.integers(0, 2**40), nvlink=st.booleans())
def test_the_kata_reference_and_the_engine_charge_the_same_ring(n, nbytes, nvlink):
    tp = _tp_reference()
    cluster = tp.Cluster(2, 8)
    links = tp.Links(450 * 10**9, 50 * 10**9, Fraction(1, 10**6), Fraction(5, 10**6))
    group = list(range(n)) if nvlink else list(range(8 - n // 2, 8 - n // 2 + n))
    crosses = len({g // 8 for g in group}) > 1
    bw, lat = ((links.network_bandwidth, links.network_latency) if crosses
               else (links.nvlink_bandwidth, links.nvlink_latency))
    assert tp.allreduce_time(cluster, links, group, nbytes) == \
        ring_allreduce_time(n, nbytes, bw, lat)


def test_tp_one_is_the_single_gpu_model():
    one, default = CostModel(HARDWARE["H100"], LLAMA, tp_size=1), CostModel(HARDWARE["H100"], LLAMA)
    for batch in (decode_batch(1, 100), decode_batch(64, 2048)):
        assert one.step_time(batch) == default.step_time(batch)
    assert one.comm_time(64) == 0.0


def test_tp_splits_the_roofline_and_adds_two_allreduces_per_layer():
    single = CostModel(HARDWARE["H100"], LLAMA)
    nvlink = CostModel(HARDWARE["H100"], LLAMA, tp_size=2)
    batch = decode_batch(32, 1024)
    comm = LLAMA.num_layers * tp_layer_comm_time(2, 32, LLAMA.hidden_size, LLAMA.dtype_bytes,
                                                 INTERCONNECTS["nvlink"])
    assert nvlink.comm_time(32) == pytest.approx(comm)
    assert nvlink.step_time(batch) == pytest.approx(single.step_time(batch) / 2 + comm)
    # Over NVLink, 8-way TP makes a decode step ~4x faster; a ring with a network hop loses
    # most of that.
    t1 = single.step_time(batch)
    t8 = CostModel(HARDWARE["H100"], LLAMA, tp_size=8).step_time(batch)
    t8_net = CostModel(HARDWARE["H100"], LLAMA, tp_size=8,
                       interconnect=INTERCONNECTS["network"]).step_time(batch)
    assert t8 < t1 / 3 and t8_net > 3 * t8


def test_tp_pools_memory_for_the_cache():
    one = num_blocks_that_fit(HARDWARE["H100"], LLAMA, 16)
    two = num_blocks_that_fit(HARDWARE["H100"], LLAMA, 16, tp_size=2)
    assert two > 2 * one  # the weights are held once across the group


@pytest.mark.parametrize("kwargs, field", [
    (dict(tensor_parallel_size=3), "tensor_parallel_size"),
    (dict(tensor_parallel_size=0), "tensor_parallel_size"),
    (dict(tensor_parallel_size=True), "tensor_parallel_size"),
    (dict(interconnect="infiniband"), "interconnect"),
])
def test_engine_config_rejects_bad_tp(kwargs, field):
    with pytest.raises(ValueError, match=field):
        EngineConfig(**kwargs)
