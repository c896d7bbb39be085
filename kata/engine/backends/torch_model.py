"""TinyModel's forward and the sampler on torch, in float16, bfloat16 or float32.

The weights are copied from a numpy `TinyModel` and cast to the engine's dtype, so both backends
compute the same function up to the format's precision (the tests state the tolerance per dtype).
Norms and the final logits run in float32, as serving engines do for half-precision models.
Sampling stays on the device: each non-greedy request's uniform number is drawn on the host from
its own generator (model.sampling_inputs), so a seed gives the same tokens on every backend, and
only the sampled token ids come back to the host.

    model = TorchModel(TinyModel(ModelConfig()), device="cuda", dtype="bfloat16")
    logits = model.forward(input_ids, positions, meta, kv_cache)   # (S, vocab) float32, on device
    model.sample(logits, seqs)                                      # -> [token id per row]
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC

import numpy as np
import torch

from kata.engine.attention import AttentionMetadata
from kata.engine.backends.torch_backend import (DTYPES, StepInputs, TorchKVCache, attend,
                                                resolve_device, to_device)
from kata.engine.model import TinyModel, sampling_inputs
from kata.engine.sequence import Sequence


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """In float32 whatever x's dtype (a half-precision mean of squares loses too much)."""
    x32 = x.float()
    return (x32 * torch.rsqrt((x32 * x32).mean(dim=-1, keepdim=True) + eps)).to(x.dtype) * weight


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def sample_on_device(logits: torch.Tensor, temps: torch.Tensor, top_ks: torch.Tensor,
                     top_ps: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """model.sample_row for every row at once, in float64: argmax where temperature is 0, else
    inverse-CDF sampling of softmax(logits / t) cut to top_k and the top_p nucleus."""
    greedy = temps == 0
    scaled = logits.double() / torch.where(greedy, 1.0, temps)[:, None]
    vocab = scaled.shape[1]
    k = torch.where((top_ks > 0) & (top_ks < vocab), top_ks, vocab)
    kth = torch.sort(scaled, dim=1, descending=True).values.gather(1, (k - 1)[:, None])
    scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.exp(scaled - scaled.max(dim=1, keepdim=True).values)
    order = torch.sort(probs, dim=1, descending=True, stable=True)
    total = probs.sum(dim=1, keepdim=True)
    before = (torch.cumsum(order.values, dim=1) - order.values) / total  # mass ahead of each
    drop = torch.zeros_like(probs, dtype=torch.bool).scatter(1, order.indices,
                                                             before >= top_ps[:, None])
    probs = probs.masked_fill(drop, 0.0)
    cdf = torch.cumsum(probs, dim=1)
    drawn = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None], right=True)[:, 0]
    drawn = drawn.clamp(max=vocab - 1)
    return torch.where(greedy, torch.argmax(logits, dim=1), drawn)


class TorchModel:
    """TinyModel's forward on torch; weights copied from a numpy TinyModel, cast to dtype."""

    def __init__(self, numpy_model: TinyModel, device: str = "cpu",
                 dtype: str = "float32") -> None:
        self.config = numpy_model.config
        self.device = resolve_device(device)
        self.dtype = DTYPES[dtype]

        def t(a: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(np.ascontiguousarray(a)).to(self.device, self.dtype)

        self.embed = t(numpy_model.embed)
        self.layers = [{name: t(w) for name, w in layer.items()} for layer in numpy_model.layers]
        self.final_norm = torch.as_tensor(numpy_model.final_norm).to(self.device, torch.float32)
        self.lm_head = torch.as_tensor(numpy_model.lm_head).to(self.device, torch.float32)
        self.rope_cos, self.rope_sin = t(numpy_model.rope_cos), t(numpy_model.rope_sin)

    @torch.inference_mode()
    def forward(self, input_ids: np.ndarray, positions: np.ndarray, meta: AttentionMetadata,
                kv_cache: TorchKVCache) -> torch.Tensor:
        """Same contract as TinyModel.forward; returns float32 logits on the device."""
        c = self.config
        inputs = StepInputs.build(input_ids, positions, meta, kv_cache.block_size, self.device)
        t = inputs.input_ids.shape[0]
        cos, sin = self.rope_cos[inputs.positions], self.rope_sin[inputs.positions]
        x = self.embed[inputs.input_ids]
        for i, w in enumerate(self.layers):
            h = rms_norm(x, w["attn_norm"], c.rms_norm_eps)
            q = (h @ w["wq"]).view(t, c.num_heads, c.head_dim)
            k = (h @ w["wk"]).view(t, c.num_kv_heads, c.head_dim)
            v = (h @ w["wv"]).view(t, c.num_kv_heads, c.head_dim)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            kv_cache.write(i, inputs.slot_mapping, k, v)
            o = attend(q, *kv_cache.layer(i), inputs)
            x = x + o.reshape(t, -1) @ w["wo"]
            h = rms_norm(x, w["mlp_norm"], c.rms_norm_eps)
            x = x + (torch.nn.functional.silu(h @ w["w_gate"]) * (h @ w["w_up"])) @ w["w_down"]
        x = rms_norm(x[inputs.sample_rows].float(), self.final_norm, c.rms_norm_eps)
        return x @ self.lm_head  # (num_sample_rows, vocab), float32

    @torch.inference_mode()
    def sample(self, logits: torch.Tensor, seqs: SequenceABC[Sequence]) -> list[int]:
        """One token per row, sampled on the device; only the token ids come back."""
        temps, top_ks, top_ps, uniforms = sampling_inputs(seqs)
        packed = to_device(np.stack([temps, top_ps, uniforms, top_ks.astype(np.float64)]),
                           self.device)
        return sample_on_device(logits, packed[0], packed[3].long(), packed[1],
                                packed[2]).tolist()
