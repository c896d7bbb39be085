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

A real-sized shape (the "llama-3.2-1b" preset: 1.5e9 parameters) would take a minute and several
GB of host memory to draw in numpy; `TorchModel.for_config` draws such weights on the device
instead (`SeededWeights`: the same shapes and scales from torch's generator seeded with
config.seed, so other numbers than numpy's, and nothing to compare them with).
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC

import numpy as np
import torch

from kata.engine.attention import AttentionMetadata
from kata.engine.backends.torch_backend import (DTYPES, StepInputs, TorchKVCache, attend,
                                                resolve_device, to_device)
from kata.engine.config import ModelConfig
from kata.engine.model import TinyModel, rope_tables, sampling_inputs
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


HOST_DRAW_PARAMS = 50_000_000  # above this many parameters, weights are drawn on the device


class SeededWeights:
    """TinyModel's weights (same names, shapes and scales) drawn by torch on the device from
    config.seed, in float32 and cast to `dtype` one tensor at a time: no host copy."""

    def __init__(self, config: ModelConfig, device: str = "cpu", dtype: str = "float32") -> None:
        self.config = c = config
        dev, dt = resolve_device(device), DTYPES[dtype]
        gen = torch.Generator(dev).manual_seed(c.seed)

        def linear(fan_in: int, fan_out: int, scale: float = 1.0, out=dt) -> torch.Tensor:
            w = torch.randn((fan_in, fan_out), generator=gen, device=dev)
            return (w * (scale / fan_in ** 0.5)).to(out)

        q_dim, kv_dim, ones = c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim, torch.ones
        self.embed = torch.randn((c.vocab_size, c.hidden_size), generator=gen, device=dev).to(dt)
        self.layers = [dict(attn_norm=ones(c.hidden_size, device=dev, dtype=dt),
                            wq=linear(c.hidden_size, q_dim), wk=linear(c.hidden_size, kv_dim),
                            wv=linear(c.hidden_size, kv_dim), wo=linear(q_dim, c.hidden_size),
                            mlp_norm=ones(c.hidden_size, device=dev, dtype=dt),
                            w_gate=linear(c.hidden_size, c.intermediate_size),
                            w_up=linear(c.hidden_size, c.intermediate_size),
                            w_down=linear(c.intermediate_size, c.hidden_size))
                       for _ in range(c.num_layers)]
        self.final_norm = ones(c.hidden_size, device=dev)
        self.lm_head = linear(c.hidden_size, c.vocab_size, 2.0, torch.float32)  # TinyModel's too
        self.rope_cos, self.rope_sin = rope_tables(c)


class TorchModel:
    """TinyModel's forward on torch; weights copied from a numpy TinyModel (or SeededWeights),
    cast to dtype."""

    def __init__(self, numpy_model: TinyModel | SeededWeights, device: str = "cpu",
                 dtype: str = "float32") -> None:
        self.config = numpy_model.config
        self.device = resolve_device(device)
        self.dtype = DTYPES[dtype]

        def t(a: np.ndarray | torch.Tensor) -> torch.Tensor:
            if not isinstance(a, torch.Tensor):
                a = torch.as_tensor(np.ascontiguousarray(a))
            return a.to(self.device, self.dtype)

        self.embed = t(numpy_model.embed)
        self.layers = [{name: t(w) for name, w in layer.items()} for layer in numpy_model.layers]
        self.final_norm = torch.as_tensor(numpy_model.final_norm).to(self.device, torch.float32)
        self.lm_head = torch.as_tensor(numpy_model.lm_head).to(self.device, torch.float32)
        self.rope_cos, self.rope_sin = t(numpy_model.rope_cos), t(numpy_model.rope_sin)

    @classmethod
    def for_config(cls, config: ModelConfig, device: str = "cpu",
                   dtype: str = "float32") -> TorchModel:
        """The tiny model's weights from numpy (so both backends compute the same function);
        a shape over HOST_DRAW_PARAMS parameters drawn on the device (SeededWeights)."""
        if config.num_params <= HOST_DRAW_PARAMS:
            return cls(TinyModel(config), device=device, dtype=dtype)
        return cls(SeededWeights(config, device=device, dtype=dtype), device=device, dtype=dtype)

    @property
    def bytes_per_step(self) -> int:
        """Weight bytes one forward reads (every weight but the embedding, of which it reads
        only the rows of its tokens): what a decode step's roofline counts besides the KV."""
        tensors = [w for layer in self.layers for w in layer.values()]
        tensors += [self.final_norm, self.lm_head]
        return sum(w.numel() * w.element_size() for w in tensors)

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
