"""Settings for the engine: the model, the KV cache, the scheduler, and the whole engine.

Each is a tiny `@dataclass(slots=True)` that checks itself in `__post_init__`, so a bad value fails
where it is written, with a message naming the field, not three calls later inside numpy.

    EngineConfig(
        model=ModelConfig(),                              # what is computed (tiny, seeded)
        cache=CacheConfig(block_size=16, num_blocks=1024),
        scheduler=SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=2048),
        hardware="A100", cost_model="llama-3-8b",         # what simulated time is charged for
    )

Weight precision (`EngineConfig.weight_bits`: 16, 8 or 4) changes only what is charged: the bytes
the weights take in memory and move each step (`weight_bytes`); the tiny model always computes in
float32, and the KV cache stays at the model's `dtype_bytes`.

What it leaves out: pipeline parallelism, LoRA, speculative decoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kata.engine.arith import cdiv
from kata.engine.hardware import HARDWARE
from kata.engine.parallel import INTERCONNECTS
from kata.engine.policy import POLICIES

DTYPES = ("auto", "float32", "float16", "bfloat16", "float64")  # EngineConfig.dtype

# Byte-level vocabulary: ids 0..255 are bytes, then two special tokens.
BOS_TOKEN_ID = 256
EOS_TOKEN_ID = 257
BYTE_VOCAB_SIZE = 258


WEIGHT_BITS = (16, 8, 4)  # bf16, int8, int4 weights


def weight_bytes(model: ModelConfig, weight_bits: int = 16) -> int:
    """Bytes of every weight at `weight_bits` bits each, rounded up to a whole byte.

    Example: llama-3-8b (8,030,261,248 parameters) -> 16,060,522,496 at 16 bits,
    4,015,130,624 at 4 bits (exactly a quarter).
    """
    if type(weight_bits) is not int or weight_bits not in WEIGHT_BITS:
        raise ValueError(f"weight_bits must be one of 16, 8, 4; got {weight_bits!r}")
    return cdiv(model.num_params * weight_bits, 8)


def _positive(owner: str, **values: int | float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{owner}.{name} must be > 0, got {value!r}")


def _one_of(owner: str, name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{owner}.{name} must be one of {', '.join(allowed)}; got {value!r}")


# --- model -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ModelConfig:
    """Shape of a decoder-only transformer (RMSNorm, RoPE, grouped-query attention, SwiGLU).

    The default is the tiny model that `model.py` actually runs: 2 layers, 4 query heads sharing
    2 KV heads, byte vocabulary. `MODEL_PRESETS` also holds real shapes (e.g. "llama-3-8b") that
    the cost model charges for; "llama-3.2-1b" is also computed, with seeded random weights, on
    the torch backend (on a GPU: a decode step at a realistic size).
    """

    vocab_size: int = BYTE_VOCAB_SIZE
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 16
    intermediate_size: int = 128
    max_model_len: int = 4096
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    dtype: str = "float32"  # numpy dtype of weights, activations and the KV cache
    dtype_bytes: int = 4  # bytes per element, as charged by the cost model
    seed: int = 0  # weights are drawn from this seed: nothing is downloaded

    def __post_init__(self) -> None:
        _positive("ModelConfig", vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                  num_layers=self.num_layers, num_heads=self.num_heads,
                  num_kv_heads=self.num_kv_heads, head_dim=self.head_dim,
                  intermediate_size=self.intermediate_size, max_model_len=self.max_model_len,
                  rope_theta=self.rope_theta, rms_norm_eps=self.rms_norm_eps,
                  dtype_bytes=self.dtype_bytes)
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"ModelConfig.num_heads ({self.num_heads}) must be a multiple of "
                             f"num_kv_heads ({self.num_kv_heads}) for grouped-query attention")
        if self.head_dim % 2:
            raise ValueError(f"ModelConfig.head_dim must be even for RoPE, got {self.head_dim}")
        _one_of("ModelConfig", "dtype", self.dtype, ("float32", "float64"))

    @property
    def num_params(self) -> int:
        """Weights, embedding and untied LM head included. Example: llama-3-8b -> ~8.0e9."""
        h = self.hidden_size
        q, kv = self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        per_layer = h * q + 2 * h * kv + q * h + 3 * h * self.intermediate_size + 2 * h
        return 2 * self.vocab_size * h + self.num_layers * per_layer + h

    @property
    def kv_bytes_per_token(self) -> int:
        """K and V, every layer. Example: llama-3-8b in bf16 -> 2*32*8*128*2 = 131072 (128 KiB)."""
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * self.dtype_bytes


MODEL_PRESETS: dict[str, ModelConfig] = {  # name -> shape
    "tiny": ModelConfig(),
    "llama-3-8b": ModelConfig(vocab_size=128256, hidden_size=4096, num_layers=32, num_heads=32,
                              num_kv_heads=8, head_dim=128, intermediate_size=14336,
                              max_model_len=8192, rope_theta=500000.0, dtype="float32",
                              dtype_bytes=2),
    "llama-3-70b": ModelConfig(vocab_size=128256, hidden_size=8192, num_layers=80, num_heads=64,
                               num_kv_heads=8, head_dim=128, intermediate_size=28672,
                               max_model_len=8192, rope_theta=500000.0, dtype="float32",
                               dtype_bytes=2),
    # computable on the torch backend (weights drawn on the device, torch_model.SeededWeights);
    # an untied LM head (1.50e9 parameters; the released model ties it: 1.24e9), no RoPE scaling
    "llama-3.2-1b": ModelConfig(vocab_size=128256, hidden_size=2048, num_layers=16, num_heads=32,
                                num_kv_heads=8, head_dim=64, intermediate_size=8192,
                                max_model_len=131072, rope_theta=500000.0, dtype="float32",
                                dtype_bytes=2),
}


# --- KV cache ----------------------------------------------------------------


@dataclass(slots=True)
class CacheConfig:
    """The paged KV cache: `num_blocks` blocks of `block_size` token slots each.

    `num_host_blocks` is the emulated CPU swap space used by `preemption_mode="swap"`.
    """

    block_size: int = 16
    num_blocks: int = 1024
    num_host_blocks: int = 0
    enable_prefix_caching: bool = True

    def __post_init__(self) -> None:
        _positive("CacheConfig", block_size=self.block_size, num_blocks=self.num_blocks)
        if self.num_host_blocks < 0:
            raise ValueError("CacheConfig.num_host_blocks must be >= 0, got "
                             f"{self.num_host_blocks}")


# --- scheduler ---------------------------------------------------------------


@dataclass(slots=True)
class SchedulerConfig:
    """How requests are batched each step.

    batching: "continuous" (iteration-level: join and leave every step) or "static" (a padded
        batch admitted together and released together; the pre-2022 baseline).
    memory: "paged" (blocks on demand) or "reserve" (reserve max_model_len slots per request up
        front, as systems did before paging).
    policy: "fcfs" or "priority" (lower `priority` value runs first; ties by arrival).
    preemption_mode: "recompute" (free the blocks, requeue, prefill again) or "swap" (copy the
        blocks to the host pool and back).
    """

    max_num_seqs: int = 64  # sequences in one step
    max_num_batched_tokens: int = 2048  # token budget of one step (prefill chunks + decodes)
    enable_chunked_prefill: bool = True
    batching: str = "continuous"
    memory: str = "paged"
    policy: str = "fcfs"
    preemption_mode: str = "recompute"

    def __post_init__(self) -> None:
        _positive("SchedulerConfig", max_num_seqs=self.max_num_seqs,
                  max_num_batched_tokens=self.max_num_batched_tokens)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError("SchedulerConfig.max_num_batched_tokens "
                             f"({self.max_num_batched_tokens}) must be >= max_num_seqs "
                             f"({self.max_num_seqs}): every running sequence decodes each step")
        _one_of("SchedulerConfig", "batching", self.batching, ("continuous", "static"))
        _one_of("SchedulerConfig", "memory", self.memory, ("paged", "reserve"))
        _one_of("SchedulerConfig", "policy", self.policy, tuple(POLICIES))
        _one_of("SchedulerConfig", "preemption_mode", self.preemption_mode, ("recompute", "swap"))


# --- engine ------------------------------------------------------------------


@dataclass(slots=True)
class EngineConfig:
    """Everything an `LLMEngine` needs.

    compute: run the tiny model for real (True) or only the scheduler, block manager and cost
        model with no tensors at all (False), for large traces.
    hardware / cost_model: the GPU profile and the model shape that simulated time is charged
        for (see cost_model.py); independent of the tiny model actually computed.
    """

    model: ModelConfig = field(default_factory=ModelConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    compute: bool = True
    backend: str = "numpy"  # "numpy" or "torch"
    device: str = "cpu"  # torch backend only: "cpu" or "cuda"
    dtype: str = "auto"  # weights, activations, KV cache; "auto": the model's (ModelConfig.dtype)
    hardware: str = "A100"
    cost_model: str = "llama-3-8b"  # a MODEL_PRESETS name
    tensor_parallel_size: int = 1  # GPUs the cost model splits each step over
    interconnect: str = "nvlink"  # their link (kata/engine/parallel.py INTERCONNECTS)
    weight_bits: int = 16  # precision of the cost model's weights: 16, 8 or 4 (WEIGHT_BITS)

    def __post_init__(self) -> None:
        if type(self.weight_bits) is not int or self.weight_bits not in WEIGHT_BITS:
            raise ValueError("EngineConfig.weight_bits must be one of 16, 8, 4; got "
                             f"{self.weight_bits!r}")
        _one_of("EngineConfig", "backend", self.backend, ("numpy", "torch"))
        _one_of("EngineConfig", "dtype", self.dtype, DTYPES)
        if self.backend == "numpy" and self.dtype not in ("auto", "float32", "float64"):
            raise ValueError(f"EngineConfig.dtype={self.dtype!r} needs backend='torch' (numpy "
                             "computes in float32 or float64)")
        _one_of("EngineConfig", "device", self.device.split(":")[0], ("cpu", "cuda"))
        _one_of("EngineConfig", "hardware", self.hardware, tuple(HARDWARE))
        _one_of("EngineConfig", "cost_model", self.cost_model, tuple(MODEL_PRESETS))
        _one_of("EngineConfig", "interconnect", self.interconnect, tuple(INTERCONNECTS))
        tp, heads = self.tensor_parallel_size, MODEL_PRESETS[self.cost_model].num_kv_heads
        if type(tp) is not int or tp < 1 or heads % tp:
            raise ValueError(f"EngineConfig.tensor_parallel_size={tp!r} must be an int >= 1 that "
                             f"divides the cost model's {heads} KV heads")
        if self.backend == "numpy" and self.device != "cpu":
            raise ValueError(f"EngineConfig.device={self.device!r} needs backend='torch'")
        max_blocks = cdiv(self.model.max_model_len, self.cache.block_size)
        if max_blocks > self.cache.num_blocks:
            raise ValueError(f"CacheConfig.num_blocks ({self.cache.num_blocks}) cannot hold one "
                             f"sequence of max_model_len={self.model.max_model_len} tokens "
                             f"({max_blocks} blocks of {self.cache.block_size}); lower "
                             "max_model_len or add blocks")
        s = self.scheduler
        if not s.enable_chunked_prefill and s.max_num_batched_tokens < self.model.max_model_len:
            raise ValueError("without chunked prefill, SchedulerConfig.max_num_batched_tokens "
                             f"({s.max_num_batched_tokens}) must be >= max_model_len "
                             f"({self.model.max_model_len}) so every prompt fits in one step")
        if s.preemption_mode == "swap" and self.cache.num_host_blocks == 0:
            raise ValueError("preemption_mode='swap' needs CacheConfig.num_host_blocks > 0")
