"""Bug: a pool smaller than zero yields negative capacities.

A copy of a correct solution of `lora-memory-math` with that one mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

GIB = 2**30

# bytes per element of the unquantized storage types
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1}
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "int8", "nf4", "nf4-dq")
QUANTIZED_DTYPES = ("int8", "nf4", "nf4-dq")  # only the *_proj matrices are quantized
KV_DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}

NF4_BLOCK = 64  # weights per absmax constant
DQ_BLOCK = 256  # absmax constants per second-level fp32 constant

ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")
METHODS = ("full", "lora", "qlora")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _check_int(name: str, value, minimum: int) -> None:
    # bool is a subclass of int: a flag passed where a count is expected is a mistake
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _check_choice(name: str, value, choices) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")


# --- level 1: parameter counts ----------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    """A Llama-style decoder. Validated on construction, field by field in this order."""

    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tie_embeddings: bool = False
    gated_mlp: bool = True

    def __post_init__(self) -> None:
        _check_int("hidden_size", self.hidden_size, 1)
        _check_int("intermediate_size", self.intermediate_size, 1)
        _check_int("num_layers", self.num_layers, 1)
        _check_int("num_heads", self.num_heads, 1)
        if self.hidden_size % self.num_heads:
            raise ValueError(
                f"num_heads={self.num_heads} does not divide hidden_size={self.hidden_size}"
            )
        _check_int("num_kv_heads", self.num_kv_heads, 1)
        if self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"num_kv_heads={self.num_kv_heads} does not divide num_heads={self.num_heads}"
            )
        _check_int("vocab_size", self.vocab_size, 1)
        for name in ("tie_embeddings", "gated_mlp"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads


def _projection_shapes(cfg: ModelConfig) -> dict[str, tuple[int, int]]:
    """name -> (in_features, out_features) of every projection matrix in one layer.

    Example: Llama-2-7B -> {'q_proj': (4096, 4096), 'k_proj': (4096, 4096), ...,
    'down_proj': (11008, 4096)}.
    """
    h, i = cfg.hidden_size, cfg.intermediate_size
    kv = cfg.num_kv_heads * cfg.head_dim  # width of K (and of V): fewer heads under GQA
    shapes = {"q_proj": (h, h), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (h, h)}
    if cfg.gated_mlp:
        shapes["gate_proj"] = (h, i)
    shapes["up_proj"] = (h, i)
    shapes["down_proj"] = (i, h)
    return shapes


def _embedding_params(cfg: ModelConfig) -> int:
    """Input embedding, plus the output head unless it shares the embedding's matrix."""
    tables = 1 if cfg.tie_embeddings else 2
    return tables * cfg.vocab_size * cfg.hidden_size


def _norm_params(cfg: ModelConfig) -> int:
    """Two RMSNorm weight vectors per layer plus the final one; no biases anywhere."""
    return (2 * cfg.num_layers + 1) * cfg.hidden_size


def count_parameters(cfg: ModelConfig) -> int:
    per_layer = sum(d * k for d, k in _projection_shapes(cfg).values())
    return cfg.num_layers * per_layer + _embedding_params(cfg) + _norm_params(cfg)


def _lora_shapes(cfg: ModelConfig, rank, target_modules) -> list[tuple[int, int]]:
    """Validate the adapter plan; return the (d, k) of each adapted matrix in one layer."""
    if isinstance(target_modules, str):  # "q_proj" would iterate as characters
        raise ValueError(f"target_modules must be a collection of names, got {target_modules!r}")
    try:
        names = set(target_modules)  # duplicates count once
    except TypeError:
        raise ValueError(f"target_modules must be a collection of names, got {target_modules!r}")
    if not names:
        raise ValueError("target_modules is empty: name at least one module")
    shapes = _projection_shapes(cfg)
    unknown = sorted(str(n) for n in names if n not in shapes)
    if unknown:
        raise ValueError(
            f"target_modules has unknown names {unknown}; this model has {', '.join(shapes)}"
        )
    adapted = [shapes[n] for n in names]
    _check_int("rank", rank, 1)
    limit = min(min(d, k) for d, k in adapted)  # the narrowest adapted matrix bounds r
    if rank > limit:
        raise ValueError(f"rank={rank} exceeds min(d, k)={limit} of an adapted matrix")
    return adapted


def count_lora_parameters(cfg: ModelConfig, rank: int, target_modules: Iterable[str]) -> int:
    # A (r x d) and B (k x r) per adapted d x k matrix, in every layer
    adapted = _lora_shapes(cfg, rank, target_modules)
    return cfg.num_layers * sum(rank * (d + k) for d, k in adapted)


# --- level 2: training memory -----------------------------------------------


def tensor_bytes(num_elements: int, dtype: str) -> int:
    """Bytes to store one tensor of num_elements weights.

    Example: tensor_bytes(100, "nf4") -> 50 packed bytes + 2 blocks x 4 = 58.
    """
    _check_int("num_elements", num_elements, 0)
    _check_choice("dtype", dtype, WEIGHT_DTYPES)
    if dtype in ELEMENT_BYTES:
        return num_elements * ELEMENT_BYTES[dtype]
    packed = _ceil_div(num_elements, 2)  # two 4-bit codes per byte
    blocks = _ceil_div(num_elements, NF4_BLOCK)  # the last block may be partial
    if dtype == "nf4":
        return packed + 4 * blocks  # one fp32 absmax per block
    # double quantization: absmax as 8-bit codes, one fp32 constant per 256 of them
    return packed + blocks + 4 * _ceil_div(blocks, DQ_BLOCK)


def _weight_bytes(cfg: ModelConfig, dtype: str, tp_size: int = 1) -> int:
    """Weights of one GPU's share with t-way tensor parallelism (t=1: the whole model)."""
    if dtype not in QUANTIZED_DTYPES:
        return ELEMENT_BYTES[dtype] * _params_per_gpu(cfg, tp_size)
    # quantized: each projection (shard) is its own tensor; the rest stays in bf16
    per_layer = sum(tensor_bytes(d * k, dtype) for d, k in _shard_shapes(cfg, tp_size))
    rest = _vocab_rows_per_gpu(cfg, tp_size) * cfg.hidden_size + _norm_params(cfg)
    return cfg.num_layers * per_layer + ELEMENT_BYTES["bf16"] * rest


def model_weight_bytes(cfg: ModelConfig, dtype: str) -> int:
    _check_choice("dtype", dtype, WEIGHT_DTYPES)
    return _weight_bytes(cfg, dtype)


@dataclass(frozen=True)
class TrainingMemory:
    weights: int  # base model weights in their storage dtype
    adapters: int  # LoRA adapter weights (bf16); 0 for full fine-tuning
    gradients: int  # bf16, trainable parameters only
    optimizer: int  # Adam's two fp32 moments per trainable parameter
    master: int  # fp32 master copy of the trainable parameters

    @property
    def total(self) -> int:
        return self.weights + self.adapters + self.gradients + self.optimizer + self.master


def training_memory(
    cfg: ModelConfig,
    method: str,
    rank: int = 8,
    target_modules: Iterable[str] = ("q_proj", "v_proj"),
    double_quant: bool = True,
) -> TrainingMemory:
    _check_choice("method", method, METHODS)
    if method == "full":
        params = count_parameters(cfg)  # every parameter is trainable
        return TrainingMemory(
            weights=2 * params, adapters=0, gradients=2 * params,
            optimizer=8 * params, master=4 * params,
        )
    adapters = count_lora_parameters(cfg, rank, target_modules)
    base = "bf16" if method == "lora" else ("nf4-dq" if double_quant else "nf4")
    # the adapters are never quantized: bf16 weights, bf16 grads, fp32 master + moments
    return TrainingMemory(
        weights=_weight_bytes(cfg, base), adapters=2 * adapters, gradients=2 * adapters,
        optimizer=8 * adapters, master=4 * adapters,
    )


def fits_on_gpu(required_bytes: int, gpu_gib: int, reserve_gib: int = 0) -> bool:
    _check_int("required_bytes", required_bytes, 0)
    _check_int("gpu_gib", gpu_gib, 1)
    _check_int("reserve_gib", reserve_gib, 0)
    return required_bytes + reserve_gib * GIB <= gpu_gib * GIB  # equal fits


# --- level 3: inference memory ----------------------------------------------


def kv_bytes_per_token(cfg: ModelConfig, kv_dtype: str = "bf16") -> int:
    return _kv_bytes_per_token(cfg, kv_dtype, tp_size=1)


def mla_kv_bytes_per_token(
    num_layers: int, kv_lora_rank: int, rope_head_dim: int, kv_dtype: str = "bf16"
) -> int:
    _check_int("num_layers", num_layers, 1)
    _check_int("kv_lora_rank", kv_lora_rank, 1)
    _check_int("rope_head_dim", rope_head_dim, 0)
    _check_choice("kv_dtype", kv_dtype, KV_DTYPE_BYTES)
    # one latent shared by K and V, plus the decoupled rotary key: no factor of 2
    return num_layers * (kv_lora_rank + rope_head_dim) * KV_DTYPE_BYTES[kv_dtype]


def blocks_for_tokens(num_tokens: int, block_size: int) -> int:
    _check_int("num_tokens", num_tokens, 0)
    _check_int("block_size", block_size, 1)
    return _ceil_div(num_tokens, block_size)


def _free_blocks(cfg, gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size, tp_size=1) -> int:
    """Whole KV blocks that fit on one GPU after its weights and the reserve (never negative)."""
    free = gpu_gib * GIB - reserve_gib * GIB - _weight_bytes(cfg, weight_dtype, tp_size)
    block_bytes = block_size * _kv_bytes_per_token(cfg, kv_dtype, tp_size)
    return free // block_bytes


def _check_capacity_args(gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size) -> None:
    _check_int("gpu_gib", gpu_gib, 1)
    _check_int("reserve_gib", reserve_gib, 0)
    _check_choice("weight_dtype", weight_dtype, WEIGHT_DTYPES)
    _check_choice("kv_dtype", kv_dtype, KV_DTYPE_BYTES)
    _check_int("block_size", block_size, 1)


def max_concurrent_requests(
    cfg: ModelConfig,
    context_len: int,
    gpu_gib: int,
    reserve_gib: int = 0,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    block_size: int = 16,
) -> int:
    _check_int("context_len", context_len, 1)
    _check_capacity_args(gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size)
    blocks = _free_blocks(cfg, gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size)
    return blocks // _ceil_div(context_len, block_size)


def max_context_len(
    cfg: ModelConfig,
    num_requests: int,
    gpu_gib: int,
    reserve_gib: int = 0,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    block_size: int = 16,
) -> int:
    _check_int("num_requests", num_requests, 1)
    _check_capacity_args(gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size)
    blocks = _free_blocks(cfg, gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size)
    # every request gets the same whole number of blocks; a block's slots are all usable
    return (blocks // num_requests) * block_size


# --- level 4: tensor parallelism --------------------------------------------


def _check_tp(cfg: ModelConfig, tp_size) -> None:
    _check_int("tp_size", tp_size, 1)
    if cfg.num_heads % tp_size:
        raise ValueError(f"tp_size={tp_size} does not divide num_heads={cfg.num_heads}")
    if cfg.intermediate_size % tp_size:
        raise ValueError(
            f"tp_size={tp_size} does not divide intermediate_size={cfg.intermediate_size}"
        )
    kv = cfg.num_kv_heads
    if (kv % tp_size) if kv >= tp_size else (tp_size % kv):
        raise ValueError(f"tp_size={tp_size} and num_kv_heads={kv}: neither divides the other")


def _kv_heads_per_gpu(cfg: ModelConfig, tp_size: int) -> int:
    # fewer KV heads than GPUs: each GPU keeps a whole replicated head
    return max(1, cfg.num_kv_heads // tp_size)


def _vocab_rows_per_gpu(cfg: ModelConfig, tp_size: int) -> int:
    """Rows of the embedding (and of the untied lm_head) on one GPU: the vocab split, rounded up."""
    tables = 1 if cfg.tie_embeddings else 2
    return tables * _ceil_div(cfg.vocab_size, tp_size)


def _shard_shapes(cfg: ModelConfig, tp_size: int) -> list[tuple[int, int]]:
    """(d, k) of one GPU's shard of each projection in one layer."""
    h, t = cfg.hidden_size, tp_size
    kv = _kv_heads_per_gpu(cfg, t) * cfg.head_dim
    shards = {"q_proj": (h, h // t), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (h // t, h)}
    i = cfg.intermediate_size // t
    if cfg.gated_mlp:
        shards["gate_proj"] = (h, i)
    shards["up_proj"] = (h, i)
    shards["down_proj"] = (i, h)
    return list(shards.values())


def _params_per_gpu(cfg: ModelConfig, tp_size: int) -> int:
    per_layer = sum(d * k for d, k in _shard_shapes(cfg, tp_size))
    rest = _vocab_rows_per_gpu(cfg, tp_size) * cfg.hidden_size + _norm_params(cfg)
    return cfg.num_layers * per_layer + rest  # norms are replicated on every GPU


def _kv_bytes_per_token(cfg: ModelConfig, kv_dtype: str, tp_size: int) -> int:
    _check_choice("kv_dtype", kv_dtype, KV_DTYPE_BYTES)
    # K and V, every layer, this GPU's heads
    heads = _kv_heads_per_gpu(cfg, tp_size)
    return 2 * cfg.num_layers * heads * cfg.head_dim * KV_DTYPE_BYTES[kv_dtype]


def per_gpu_weight_bytes(cfg: ModelConfig, tp_size: int, dtype: str = "bf16") -> int:
    _check_tp(cfg, tp_size)
    _check_choice("dtype", dtype, WEIGHT_DTYPES)
    return _weight_bytes(cfg, dtype, tp_size)


def per_gpu_kv_bytes_per_token(cfg: ModelConfig, tp_size: int, kv_dtype: str = "bf16") -> int:
    _check_tp(cfg, tp_size)
    return _kv_bytes_per_token(cfg, kv_dtype, tp_size)


def min_tp_size(
    cfg: ModelConfig,
    batch_size: int,
    context_len: int,
    gpu_gib: int,
    reserve_gib: int = 0,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    block_size: int = 16,
) -> int | None:
    _check_int("batch_size", batch_size, 1)
    _check_int("context_len", context_len, 1)
    _check_capacity_args(gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size)
    needed = batch_size * _ceil_div(context_len, block_size)  # blocks on every GPU
    # a valid t divides num_heads, so t <= num_heads; try every one, not only powers of two
    for t in range(1, cfg.num_heads + 1):
        try:
            _check_tp(cfg, t)
        except ValueError:
            continue
        if _free_blocks(cfg, gpu_gib, reserve_gib, weight_dtype, kv_dtype, block_size, t) >= needed:
            return t
    return None
