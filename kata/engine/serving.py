"""A serving plan, its memory arithmetic, and what it costs: the engine as judge of a design.

A plan (`Deployment`) says what a design interview asks you to decide: the model and the weights'
precision, the GPU, how many GPUs each replica spans (tensor parallelism), how many replicas sit
behind the router, and each replica's scheduler settings. This module turns it into the engine's
own configuration and states the arithmetic the engine allocates memory by, exactly, in integers:

    weight_bytes       = ceil(num_params * weight_bits / 8)
    kv_bytes_per_token = 2 (K and V) * num_layers * num_kv_heads * head_dim * 2 (16-bit KV)
    kv_pool_blocks     = (floor(memory_bytes * tp * 9 / 10) - weight_bytes)
                         // (block_size * kv_bytes_per_token)          (per replica)
    max_concurrent_seqs = kv_pool_blocks // ceil(max_seq_len / block_size)

A replica fits when max_concurrent_seqs >= 1: its pool holds one sequence of the longest length
the workload can send. Cost is the GPUs' time at the hardware table's price over the output
tokens the run produced:

    cost per million output tokens = replicas * tp * price_per_hour * makespan_s / 3600
                                     / (output tokens / 1e6)

    memory_math(Deployment("llama-3-8b", "H100", 16, 1, 2, 256, 4096, True, 16, "recompute",
                           "least-outstanding-tokens"), max_seq_len=2560)
        -> MemoryMath(weight_bytes=16060522496, kv_bytes_per_token=131072,
                      kv_pool_blocks=29043, max_concurrent_seqs=181)
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from kata.engine.arith import cdiv
from kata.engine.cluster import ROUTERS, Cluster, ClusterResult
from kata.engine.config import (MODEL_PRESETS, WEIGHT_BITS, CacheConfig, EngineConfig, ModelConfig,
                                SchedulerConfig, weight_bytes)
from kata.engine.cost_model import num_blocks_that_fit
from kata.engine.hardware import HARDWARE
from kata.engine.workloads import ClosedLoop

GPU_MEMORY_UTILIZATION = 0.9  # the share of each GPU's memory a replica may use
KV_BYTES = 2  # the KV cache is kept at 16 bits whatever the weights' precision


@dataclass(slots=True, frozen=True)
class Deployment:
    """A serving plan, checked field by field (a bad value names its field)."""

    model: str  # a MODEL_PRESETS name
    hardware: str  # a HARDWARE name
    weight_bits: int  # 16, 8 or 4
    tensor_parallel_size: int  # GPUs per replica; divides the model's KV heads
    replicas: int
    max_num_seqs: int
    max_num_batched_tokens: int
    enable_chunked_prefill: bool
    block_size: int
    preemption_mode: str  # "recompute" or "swap" (swap needs host blocks: not offered here)
    router: str  # a cluster.ROUTERS name

    def __post_init__(self) -> None:
        _choice("model", self.model, tuple(MODEL_PRESETS))
        _choice("hardware", self.hardware, tuple(HARDWARE))
        _choice("weight_bits", self.weight_bits, WEIGHT_BITS)
        _choice("router", self.router, ROUTERS)
        _choice("preemption_mode", self.preemption_mode, ("recompute",))
        for name in ("tensor_parallel_size", "replicas", "max_num_seqs", "max_num_batched_tokens",
                     "block_size"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(f"max_num_batched_tokens {self.max_num_batched_tokens} must be >= "
                             f"max_num_seqs {self.max_num_seqs}: every running sequence decodes "
                             "each step")
        if type(self.enable_chunked_prefill) is not bool:
            raise ValueError("enable_chunked_prefill must be a bool, got "
                             f"{self.enable_chunked_prefill!r}")
        heads = MODEL_PRESETS[self.model].num_kv_heads
        if heads % self.tensor_parallel_size:
            raise ValueError(f"tensor_parallel_size {self.tensor_parallel_size} must divide the "
                             f"model's {heads} KV heads")

    @property
    def num_gpus(self) -> int:
        return self.replicas * self.tensor_parallel_size

    @classmethod
    def from_plan(cls, plan: object) -> Deployment:
        """The same plan from any object with these attribute names (a learner's dataclass)."""
        values = {}
        for f in fields(cls):
            if not hasattr(plan, f.name):
                raise ValueError(f"{f.name}: the plan has no attribute {f.name!r}")
            values[f.name] = getattr(plan, f.name)
        return cls(**values)


def _choice(name: str, value, allowed: tuple) -> None:
    if type(value) is not type(allowed[0]) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")


# --- memory ----------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class MemoryMath:
    """The arithmetic that justifies a plan, per replica (see the module docstring)."""

    weight_bytes: int
    kv_bytes_per_token: int
    kv_pool_blocks: int
    max_concurrent_seqs: int


def kv_bytes_per_token(model: ModelConfig) -> int:
    """K and V of one token over every layer, at 16 bits. Example: llama-3-8b -> 131,072."""
    return 2 * model.num_layers * model.num_kv_heads * model.head_dim * KV_BYTES


def memory_math(plan: Deployment, max_seq_len: int) -> MemoryMath:
    """The plan's memory, exactly as the engine allocates it; ValueError starting "memory" when
    one replica cannot hold the weights and one sequence of max_seq_len tokens."""
    model, hw = _kv_model(plan.model), HARDWARE[plan.hardware]
    weights = weight_bytes(model, plan.weight_bits)
    blocks = num_blocks_that_fit(hw, model, plan.block_size, GPU_MEMORY_UTILIZATION,
                                 plan.tensor_parallel_size, plan.weight_bits)
    per_seq = cdiv(max_seq_len, plan.block_size)
    math = MemoryMath(weights, model.kv_bytes_per_token, blocks, blocks // per_seq)
    if math.max_concurrent_seqs < 1:
        raise ValueError(f"memory: {plan.tensor_parallel_size}x {plan.hardware} holds "
                         f"{blocks} KV blocks after {weights:,} bytes of weights; one "
                         f"{max_seq_len}-token sequence needs {per_seq}")
    return math


def _kv_model(name: str) -> ModelConfig:
    """The preset, its KV at 16 bits (the presets already are)."""
    model = MODEL_PRESETS[name]
    assert model.dtype_bytes == KV_BYTES, name
    return model


def engine_config(plan: Deployment, max_seq_len: int) -> EngineConfig:
    """One replica's EngineConfig: simulated (compute off), its KV pool as memory_math sizes it."""
    math = memory_math(plan, max_seq_len)
    return EngineConfig(
        model=ModelConfig(max_model_len=max_seq_len),
        cache=CacheConfig(block_size=plan.block_size, num_blocks=math.kv_pool_blocks,
                          enable_prefix_caching=False),
        scheduler=SchedulerConfig(max_num_seqs=plan.max_num_seqs,
                                  max_num_batched_tokens=plan.max_num_batched_tokens,
                                  enable_chunked_prefill=plan.enable_chunked_prefill,
                                  preemption_mode=plan.preemption_mode),
        compute=False, hardware=plan.hardware, cost_model=plan.model,
        tensor_parallel_size=plan.tensor_parallel_size,
        interconnect=HARDWARE[plan.hardware].gpu_link, weight_bits=plan.weight_bits)


# --- running and pricing ----------------------------------------------------------------------


def simulate(plan: Deployment, loop: ClosedLoop, max_seq_len: int) -> ClusterResult:
    """The plan's replicas behind its router, on a closed-loop workload."""
    return Cluster(engine_config(plan, max_seq_len), plan.replicas, plan.router
                   ).run_closed_loop(loop)


def cost_per_million_output_tokens(plan: Deployment, result: ClusterResult) -> float:
    """Dollars of GPU time per million output tokens. Example: 2 H100s ($4/h) for 100 s that
    produce 500,000 tokens -> 2 * 4 * 100 / 3600 / 0.5 = $0.444."""
    m = result.metrics
    out_tokens = sum(s.num_output_tokens for s in result.seqs)
    gpu_hours = plan.num_gpus * m.makespan_s / 3600
    return gpu_hours * HARDWARE[plan.hardware].price_per_hour / (out_tokens / 1e6)
