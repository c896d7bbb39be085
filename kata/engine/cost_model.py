"""Simulated GPU time: each step's FLOPs and bytes moved, on a named hardware profile.

A transformer step is limited either by arithmetic or by memory traffic (the roofline):

    time = max(FLOPs / (peak FLOP/s * mfu), bytes / (HBM bandwidth * mbu)) + swap bytes / host link

mfu = 0.6; mbu = 0.7, the share of its HBM peak a measured 7B-shaped decode reached on an H200
(a memory-bound step never streams at the datasheet's peak).

With tensor parallelism over `tp_size` GPUs each GPU does 1/tp of the FLOPs and moves 1/tp of
the bytes (weights and KV heads are split), and every layer adds two ring all-reduces of the
step's activations over the interconnect (kata/engine/parallel.py), not overlapped with compute.
NVLink runs at the card's own figure (`link_on`: 300 GB/s each way on an A100, 450 on an H100).

FLOPs: 2 per weight per token (the matmuls), plus attention's 4 * num_heads * head_dim per
(query, key) pair per layer, plus the LM head for rows that are sampled.
Bytes: every weight once per step (at `weight_bits`: 4-bit weights move a quarter of the bytes
of 16-bit ones; the FLOPs stay the same, as dequantised matmuls run at 16 bits), the K/V every
attending token reads, the K/V new tokens write.
So a prefill of 2,000 tokens is compute-bound and a decode of 64 sequences is memory-bound; that
is the whole reason batching helps decode. Charging time this way makes TTFT, TPOT and
throughput deterministic and independent of the CPU running the simulation.

    cm = CostModel(HARDWARE["H100"], MODEL_PRESETS["llama-3-8b"])
    cm.step_time(batch)           -> 0.0070   (seconds; one decode step of 32 sequences)

What it leaves out: kernel launch and CPU overheads, pipeline parallelism, activation traffic,
and efficiency that varies with shape (mfu and mbu are constants).
"""

from __future__ import annotations


import dataclasses
from fractions import Fraction

from kata.engine.config import ModelConfig, weight_bytes
from kata.engine.hardware import HARDWARE, HardwareProfile  # noqa: F401 - re-exported
from kata.engine.parallel import INTERCONNECTS, Interconnect, tp_layer_comm_time


def link_on(hardware: HardwareProfile, name: str) -> Interconnect:
    """INTERCONNECTS[name] between two of these GPUs: NVLink at the card's own bandwidth.
    Example: link_on(HARDWARE["A100"], "nvlink").bandwidth -> 300e9; "network" is the same
    everywhere."""
    link = INTERCONNECTS[name]
    if name == "nvlink" and hardware.nvlink_bandwidth is not None:
        return dataclasses.replace(link, bandwidth=hardware.nvlink_bandwidth)
    return link


class CostModel:
    def __init__(self, hardware: HardwareProfile, model: ModelConfig, block_size: int = 16,
                 mfu: float = 0.6, mbu: float = 0.7, tp_size: int = 1,
                 interconnect: Interconnect | None = None,  # default: link_on(hardware, "nvlink")
                 weight_bits: int = 16) -> None:
        if not (0 < mfu <= 1 and 0 < mbu <= 1):
            raise ValueError(f"mfu and mbu must be in (0, 1], got {mfu}, {mbu}")
        if tp_size < 1:
            raise ValueError(f"tp_size must be >= 1, got {tp_size}")
        self.hardware, self.model = hardware, model
        self.tp_size = tp_size
        self.interconnect = link_on(hardware, "nvlink") if interconnect is None else interconnect
        m = model
        embed = m.vocab_size * m.hidden_size
        self.linear_params = m.num_params - 2 * embed  # transformer blocks only
        self.lm_head_params = embed
        self.attn_flops_per_pair = 4 * m.num_layers * m.num_heads * m.head_dim
        self.weight_bytes = (self.linear_params + self.lm_head_params) * weight_bits / 8
        self.kv_bytes_per_token = m.kv_bytes_per_token
        self.block_bytes = block_size * m.kv_bytes_per_token
        self._flops_per_s = hardware.peak_flops * mfu * tp_size  # the group's, split evenly
        self._bytes_per_s = hardware.hbm_bandwidth * mbu * tp_size
        self._host_bandwidth = hardware.host_bandwidth * tp_size  # each GPU swaps its shard

    def comm_time(self, num_tokens: int) -> float:
        """Seconds of TP all-reduces in a step of num_tokens rows (0 without TP)."""
        if self.tp_size == 1 or not num_tokens:
            return 0.0
        m = self.model
        return m.num_layers * tp_layer_comm_time(self.tp_size, num_tokens, m.hidden_size,
                                                 m.dtype_bytes, self.interconnect)

    def step_flops_bytes(self, batch) -> tuple[float, float]:
        """(FLOPs, HBM bytes) of one ScheduledBatch."""
        num_tokens = batch.prefill_tokens + batch.num_decode_seqs
        pairs = batch.prefill_attention_pairs + batch.num_decode_context_tokens
        flops = (2.0 * self.linear_params * num_tokens
                 + 2.0 * self.lm_head_params * batch.num_sampled
                 + self.attn_flops_per_pair * pairs)
        kv_tokens = (batch.prefill_context_tokens + batch.num_decode_context_tokens
                     + batch.prefill_tokens)  # read earlier K/V; write the new
        moved = self.weight_bytes + self.kv_bytes_per_token * kv_tokens
        return flops, moved

    def step_time(self, batch) -> float:
        """Simulated seconds for one ScheduledBatch (0 for an empty one)."""
        swapped = len(batch.swap_in) + len(batch.swap_out)
        swap_time = swapped * self.block_bytes / self._host_bandwidth
        if not (batch.prefill_tokens or batch.num_decode_seqs):
            return swap_time
        flops, moved = self.step_flops_bytes(batch)
        comm = self.comm_time(batch.prefill_tokens + batch.num_decode_seqs)
        return max(flops / self._flops_per_s, moved / self._bytes_per_s) + comm + swap_time


def num_blocks_that_fit(hardware: HardwareProfile, model: ModelConfig, block_size: int,
                        gpu_memory_utilization: float = 0.9, tp_size: int = 1,
                        weight_bits: int = 16) -> int:
    """KV blocks left after the weights, as a serving engine sizes its cache. With TP each GPU
    holds 1/tp of the weights and of every block, so the group holds the blocks of tp GPUs'
    memory less one copy of the weights. Exact integer arithmetic (the utilisation is read as the
    decimal it is written as, 0.9 = 9/10):

        blocks = (floor(memory_bytes * tp * 9 / 10) - weight_bytes) // (block_size * kv_bytes_per_token)

    Example: H100 (85,520,809,984 bytes), llama-3-8b bf16 (16 GB of weights), block 16 ->
    29,043 blocks.
    """
    share = Fraction(repr(gpu_memory_utilization))
    usable = int(hardware.memory_bytes) * tp_size * share.numerator // share.denominator
    free = usable - weight_bytes(model, weight_bits)
    return max(0, free // (block_size * model.kv_bytes_per_token))
