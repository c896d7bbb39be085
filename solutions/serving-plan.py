"""Reference solution for `serving-plan`: the memory arithmetic of a serving plan, and the plan.

    weight_bytes(model, 16)         level 1: bytes of the weights (level 3: 8 and 4 bits)
    kv_bytes_per_token(model)       level 1: K and V of one token, every layer, 16 bits
    memory_math(model, gpu, ...)    level 1: a replica's KV pool and how many sequences it holds
    plan(workload, constraints)     levels 1-4: the cheapest plan a back-of-envelope sizing trusts

Standard library only. Every quantity of memory is an exact integer: no float touches a byte
count, so a 70B model's arithmetic is exact past 2**53 too.
"""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT_BITS = (16, 8, 4)
KV_BYTES = 2  # the KV cache stays at 16 bits whatever the weights' precision
ROUTER = "least-outstanding-tokens"


@dataclass(frozen=True)
class MemoryMath:
    weight_bytes: int
    kv_bytes_per_token: int
    kv_pool_blocks: int  # per replica
    max_concurrent_seqs: int  # sequences of max_seq_len tokens one replica holds at once


@dataclass(frozen=True)
class ServingPlan:
    model: str
    hardware: str
    weight_bits: int
    tensor_parallel_size: int
    replicas: int
    max_num_seqs: int
    max_num_batched_tokens: int
    enable_chunked_prefill: bool
    block_size: int
    preemption_mode: str
    router: str
    memory: MemoryMath


def _positive_int(name: str, value) -> None:
    if type(value) is not int or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _check_bits(weight_bits) -> None:
    if type(weight_bits) is not int or weight_bits not in WEIGHT_BITS:
        raise ValueError(f"weight_bits must be 16, 8 or 4, got {weight_bits!r}")


# --- level 1 (and 3): the arithmetic ------------------------------------------------------------


def weight_bytes(model: dict, weight_bits: int) -> int:
    """ceil(num_params * weight_bits / 8). Example: 8,030,261,248 params at 4 bits -> 4,015,130,624."""
    _check_bits(weight_bits)
    return -(-model["num_params"] * weight_bits // 8)  # integer ceiling, no float


def kv_bytes_per_token(model: dict) -> int:
    """2 (K and V) * layers * KV heads * head_dim * 2 bytes. Example: llama-3-8b -> 131,072."""
    return 2 * model["num_layers"] * model["num_kv_heads"] * model["head_dim"] * KV_BYTES


def memory_math(model: dict, gpu: dict, weight_bits: int, tensor_parallel_size: int,
                block_size: int, max_seq_len: int) -> MemoryMath:
    """One replica of tensor_parallel_size GPUs: the weights once across the group, the rest of
    90% of the group's memory in KV blocks. Raises ValueError (the first failing rule, in the
    order of the arguments; then "memory" when not one max_seq_len sequence fits)."""
    _check_bits(weight_bits)
    _positive_int("tensor_parallel_size", tensor_parallel_size)
    if model["num_kv_heads"] % tensor_parallel_size:
        raise ValueError(f"tensor_parallel_size {tensor_parallel_size} does not divide the "
                         f"{model['num_kv_heads']} KV heads")
    _positive_int("block_size", block_size)
    _positive_int("max_seq_len", max_seq_len)
    weights = weight_bytes(model, weight_bits)
    per_token = kv_bytes_per_token(model)
    usable = gpu["memory_bytes"] * tensor_parallel_size * 9 // 10  # floor, in integers
    blocks = max(0, (usable - weights) // (block_size * per_token))
    seqs = blocks // -(-max_seq_len // block_size)  # blocks per sequence, rounded up
    if seqs < 1:
        raise ValueError(f"memory: {tensor_parallel_size} GPU(s) hold {blocks} KV blocks; one "
                         f"{max_seq_len}-token sequence needs more")
    return MemoryMath(weights, per_token, blocks, seqs)


# --- the plan ------------------------------------------------------------------------------------
# A back-of-envelope sizing (checked against the engine with `kata engine plan`): each user sends
# at most one request per think time, so the request rate is at most users / think_time_s.
#   compute:  rate * (prompt + output medians) tokens * 2 FLOPs per parameter <= GPUs * peak
#             (the engine charges more per token, at 60% of peak, but users / think_time_s
#             overstates a closed loop's rate over a short run: the two roughly cancel)
#   memory:   Little's law, rate * the latency budget of one request, holds that many requests'
#             median tokens in the replicas' KV pools at once
#   latency:  one decode step reads every weight (W / tp bytes per GPU at 70% of HBM
#             bandwidth, the engine's figure); it must take at most a third of the per-token
#             budget (the rest is for prefill chunks and KV reads that share the steps)
#   batch:    Little's law again, per replica: max_num_seqs holds the requests in flight there
#             (at least 256), so a replica's queue never waits on a cap while its pool has room
# The cheapest plan wins: the fewest GPUs, then the larger TP group (one pool, faster steps).


def plan(workload: dict, constraints: dict) -> ServingPlan:
    model, slo = workload["model"], constraints["slo"]
    bits = constraints["min_weight_bits"]  # the floor is the cheapest precision allowed
    name, gpu = min(constraints["hardware"].items(), key=lambda kv: (kv[1]["price_per_hour"], kv[0]))
    prompt, output = workload["prompt_tokens"], workload["output_tokens"]
    max_seq_len = prompt["max"] + output["max"]
    per_token_s = slo["tpot_s"] if slo["tpot_s"] is not None else slo["e2e_s"] / output["max"]
    latency_s = output["median"] * slo["tpot_s"] if slo["tpot_s"] is not None else slo["e2e_s"]
    rate = workload["users"] / workload["think_time_s"]
    tokens = prompt["median"] + output["median"]
    flops = rate * tokens * 2 * model["num_params"]
    best = None
    for tp in (t for t in (1, 2, 4, 8) if model["num_kv_heads"] % t == 0):
        try:
            memory = memory_math(model, gpu, bits, tp, 16, max_seq_len)
        except ValueError:
            continue  # the weights do not fit this group
        decode_s = memory.weight_bytes / tp / (gpu["hbm_bandwidth"] * 0.7)
        if decode_s > per_token_s / 3:
            continue
        by_compute = -(-flops // (tp * gpu["peak_flops"]))
        by_memory = -(-rate * latency_s * tokens // (memory.kv_pool_blocks * 16))
        replicas = max(1, int(by_compute), int(by_memory))
        key = (replicas * tp, -tp)
        if best is None or key < best[0]:
            best = (key, tp, replicas, memory)
    _, tp, replicas, memory = best
    seqs = max(256, int(-(-rate * latency_s // replicas)))  # requests in flight per replica
    return ServingPlan(model["name"], name, bits, tp, replicas, max_num_seqs=seqs,
                       max_num_batched_tokens=max(2048, seqs), enable_chunked_prefill=True, block_size=16,
                       preemption_mode="recompute", router=ROUTER, memory=memory)
