"""Serving plan: the memory arithmetic of a deployment, and a plan that holds its SLO.

Read PROMPT.md for the rules. Every byte count is an exact int (no float touches one). Invalid
input raises ValueError whose message begins with the offending argument's name. Standard
library only.

    weight_bytes(model, 16)         level 1 (8 and 4 bits: level 3)
    kv_bytes_per_token(model)       level 1
    memory_math(model, gpu, ...)    level 1 (long sequences: level 2; bits and TP: level 3)
    plan(workload, constraints)     levels 1-4, judged by the engine: `kata engine plan
                                    workspace/serving_plan.py --level N` shows how yours does
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryMath:
    weight_bytes: int
    kv_bytes_per_token: int
    kv_pool_blocks: int  # per replica
    max_concurrent_seqs: int  # sequences of max_seq_len tokens one replica holds at once


@dataclass(frozen=True)
class ServingPlan:
    model: str  # workload["model"]["name"]
    hardware: str  # a key of constraints["hardware"]
    weight_bits: int  # 16, 8 or 4
    tensor_parallel_size: int  # GPUs per replica: 1, 2, 4 or 8, dividing num_kv_heads
    replicas: int
    max_num_seqs: int  # sequences one replica's step may hold
    max_num_batched_tokens: int  # token budget of one step
    enable_chunked_prefill: bool
    block_size: int  # tokens per KV block
    preemption_mode: str  # "recompute"
    router: str  # "round-robin" or "least-outstanding-tokens"
    memory: MemoryMath  # memory_math of this plan, as stated in PROMPT.md


def weight_bytes(model: dict, weight_bits: int) -> int:
    """ceil(num_params * weight_bits / 8). Example: llama-3-8b at 16 bits -> 16,060,522,496."""
    # TODO
    raise NotImplementedError


def kv_bytes_per_token(model: dict) -> int:
    """2 * num_layers * num_kv_heads * head_dim * 2. Example: llama-3-8b -> 131,072."""
    # TODO
    raise NotImplementedError


def memory_math(model: dict, gpu: dict, weight_bits: int, tensor_parallel_size: int,
                block_size: int, max_seq_len: int) -> MemoryMath:
    """One replica's memory. Example: llama-3-8b, H100, 16 bits, TP 1, block 16, 2,560 tokens
    -> MemoryMath(16060522496, 131072, 29043, 181)."""
    # TODO
    raise NotImplementedError


def plan(workload: dict, constraints: dict) -> ServingPlan:
    """A plan for the level's workload within its constraints (see PROMPT.md)."""
    # TODO
    raise NotImplementedError
