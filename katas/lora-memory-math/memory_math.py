"""LoRA memory math: parameters, training memory, KV cache and sharding, exact to the byte.

Read PROMPT.md for the rules. Every count and byte figure is an int computed with integer
arithmetic (`a // b`, `-(-a // b)` for a ceiling). Invalid input raises ValueError whose message
begins with the offending field's or argument's name. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

GIB = 2**30  # bytes in one GiB

# --- level 1: parameter counts ----------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    """A Llama-style decoder (no biases).

    Example: ModelConfig(4096, 11008, 32, 32, 32, 32000) is Llama-2-7B.
    """

    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tie_embeddings: bool = False
    gated_mlp: bool = True

    def __post_init__(self) -> None:
        """Validate the fields in declaration order; raise ValueError naming the first bad one.

        Example: ModelConfig(4096, 11008, 32, 32, 3, 32000) -> ValueError("num_kv_heads=3 ...")
        """
        # TODO: ints >= 1 (not bool), num_heads | hidden_size, num_kv_heads | num_heads, bool flags
        raise NotImplementedError

    @property
    def head_dim(self) -> int:
        """hidden_size // num_heads. Example: Llama-2-7B -> 128."""
        # TODO
        raise NotImplementedError


def count_parameters(cfg: ModelConfig) -> int:
    """All parameters: embedding, lm_head unless tied, projections, norms.

    Example: count_parameters(ModelConfig(64, 176, 2, 4, 2, 100)) -> 105280
    """
    # TODO
    raise NotImplementedError


def count_lora_parameters(cfg: ModelConfig, rank: int, target_modules: Iterable[str]) -> int:
    """Parameters of rank-`rank` adapters on every listed projection of every layer.

    Validates target_modules first, then rank (1 <= rank <= min(d, k) of each adapted matrix).
    Example: count_lora_parameters(ModelConfig(64, 176, 2, 4, 2, 100), 4, ["q_proj", "k_proj"]) -> 1792
    """
    # TODO
    raise NotImplementedError


# --- level 2: training memory -----------------------------------------------


def tensor_bytes(num_elements: int, dtype: str) -> int:
    """Bytes of one tensor: dtype in fp32, bf16, fp16, int8, nf4, nf4-dq.

    Example: tensor_bytes(100, "nf4") -> 58; tensor_bytes(100, "nf4-dq") -> 56
    """
    # TODO
    raise NotImplementedError


def model_weight_bytes(cfg: ModelConfig, dtype: str) -> int:
    """Bytes of all the model's weights; quantized dtypes apply to the projections only.

    Example: model_weight_bytes(ModelConfig(64, 176, 2, 4, 2, 100), "nf4-dq") -> 73816
    """
    # TODO
    raise NotImplementedError


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes of each part of a training plan (already complete: nothing to do here)."""

    weights: int  # base model weights in their storage dtype
    adapters: int  # LoRA adapter weights in bf16; 0 for full fine-tuning
    gradients: int  # bf16 gradients of the trainable parameters
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
    """Memory of full fine-tuning ("full"), LoRA ("lora") or QLoRA ("qlora") with Adam.

    Example: training_memory(ModelConfig(64, 176, 2, 4, 2, 100), "full").total -> 1684480
    """
    # TODO
    raise NotImplementedError


def fits_on_gpu(required_bytes: int, gpu_gib: int, reserve_gib: int = 0) -> bool:
    """required_bytes + reserve_gib GiB <= gpu_gib GiB (equality fits).

    Example: fits_on_gpu(13_543_940_096, 16, 2) -> True
    """
    # TODO
    raise NotImplementedError


# --- level 3: inference memory ----------------------------------------------


def kv_bytes_per_token(cfg: ModelConfig, kv_dtype: str = "bf16") -> int:
    """2 * layers * kv heads * head_dim * bytes. Example: Llama-2-7B -> 524288 (512 KiB)."""
    # TODO
    raise NotImplementedError


def mla_kv_bytes_per_token(
    num_layers: int, kv_lora_rank: int, rope_head_dim: int, kv_dtype: str = "bf16"
) -> int:
    """Latent plus rotary key per layer, no factor of 2. Example: (61, 512, 64) -> 70272."""
    # TODO
    raise NotImplementedError


def blocks_for_tokens(num_tokens: int, block_size: int) -> int:
    """ceil(num_tokens / block_size). Example: blocks_for_tokens(17, 16) -> 2."""
    # TODO
    raise NotImplementedError


def max_concurrent_requests(
    cfg: ModelConfig,
    context_len: int,
    gpu_gib: int,
    reserve_gib: int = 0,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    block_size: int = 16,
) -> int:
    """How many requests of context_len tokens fit in the KV block pool at once.

    Example: Llama-2-7B, context_len=4096, gpu_gib=24, reserve_gib=2 -> 4
    """
    # TODO
    raise NotImplementedError


def max_context_len(
    cfg: ModelConfig,
    num_requests: int,
    gpu_gib: int,
    reserve_gib: int = 0,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    block_size: int = 16,
) -> int:
    """Longest equal context (whole blocks) for num_requests concurrent requests.

    Example: Llama-2-7B, num_requests=4, gpu_gib=24, reserve_gib=2 -> 4832
    """
    # TODO
    raise NotImplementedError


# --- level 4: tensor parallelism --------------------------------------------


def per_gpu_weight_bytes(cfg: ModelConfig, tp_size: int, dtype: str = "bf16") -> int:
    """One GPU's weights under tp_size-way tensor parallelism.

    Example: Llama-2-70B (8192, 28672, 80, 64, 8, 32000), tp_size=8 -> 17246470144
    """
    # TODO
    raise NotImplementedError


def per_gpu_kv_bytes_per_token(cfg: ModelConfig, tp_size: int, kv_dtype: str = "bf16") -> int:
    """One GPU's KV bytes per token; KV heads are replicated when fewer than GPUs.

    Example: Llama-2-70B, tp_size=16 -> 40960 (one head per GPU)
    """
    # TODO
    raise NotImplementedError


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
    """Smallest valid tp_size whose GPUs each hold weights, reserve and the batch's KV blocks.

    Example: Llama-2-70B, batch_size=16, context_len=4096, gpu_gib=80, reserve_gib=4 -> 2
    """
    # TODO
    raise NotImplementedError
