"""A tiny decoder-only transformer in numpy, its byte-level tokenizer, and sampling.

Llama-shaped: token embedding -> num_layers x [RMSNorm -> attention with RoPE and grouped-query
heads -> residual -> RMSNorm -> SwiGLU MLP -> residual] -> RMSNorm -> LM head. Weights are drawn
from `config.seed`, so nothing is downloaded and every run computes the same numbers. The text it
writes is noise; what matters is that it exercises the KV cache exactly like a real model.

    model = TinyModel(ModelConfig(seed=0))
    logits = model.forward(input_ids, positions, meta, kv_cache)   # (len(meta.sample_rows), vocab)

What it leaves out: training, dropout, biases, tied embeddings, quantisation.
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC

import numpy as np

from kata.engine.attention import AttentionMetadata, attend
from kata.engine.config import BOS_TOKEN_ID, BYTE_VOCAB_SIZE, EOS_TOKEN_ID, ModelConfig
from kata.engine.kv_cache import KVCache
from kata.engine.sequence import Sequence

# --- tokenizer ----------------------------------------------------------------------


def encode(text: str) -> list[int]:
    """UTF-8 bytes after a BOS token. Example: encode("hi") -> [256, 104, 105]."""
    return [BOS_TOKEN_ID, *text.encode("utf-8")]


def decode(token_ids: SequenceABC[int]) -> str:
    """Bytes back to text; special tokens dropped, broken UTF-8 replaced."""
    return bytes(t for t in token_ids if t < 256).decode("utf-8", errors="replace")


# --- building blocks -------------------------------------------------------------------


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x (T, hidden) scaled to unit root-mean-square, times a learned gain."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope_tables(config: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's rotation angles: each (max_model_len, head_dim // 2)."""
    half = config.head_dim // 2
    inv_freq = config.rope_theta ** (-np.arange(half, dtype=np.float64) / half)  # (half,)
    angles = np.arange(config.max_model_len, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(angles).astype(config.dtype), np.sin(angles).astype(config.dtype)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate pairs (x[i], x[i + D/2]) by each token's angles. x (T, heads, D); cos/sin (T, D/2)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]  # (T, 1, D/2): broadcast over heads
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


# --- the model ------------------------------------------------------------------------------


class TinyModel:
    def __init__(self, config: ModelConfig) -> None:
        self.config = c = config
        rng = np.random.default_rng(c.seed)

        def linear(fan_in: int, fan_out: int) -> np.ndarray:  # (fan_in, fan_out): x @ w
            return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(c.dtype)

        q_dim, kv_dim = c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim
        self.embed = rng.standard_normal((c.vocab_size, c.hidden_size)).astype(c.dtype)
        self.layers = [
            dict(
                attn_norm=np.ones(c.hidden_size, c.dtype),
                wq=linear(c.hidden_size, q_dim),  # (hidden, H*D)
                wk=linear(c.hidden_size, kv_dim),  # (hidden, KH*D)
                wv=linear(c.hidden_size, kv_dim),
                wo=linear(q_dim, c.hidden_size),
                mlp_norm=np.ones(c.hidden_size, c.dtype),
                w_gate=linear(c.hidden_size, c.intermediate_size),
                w_up=linear(c.hidden_size, c.intermediate_size),
                w_down=linear(c.intermediate_size, c.hidden_size),
            )
            for _ in range(c.num_layers)
        ]
        self.final_norm = np.ones(c.hidden_size, c.dtype)
        self.lm_head = (2.0 * linear(c.hidden_size, c.vocab_size)).astype(c.dtype)  # peakier
        self.rope_cos, self.rope_sin = rope_tables(c)

    def forward(self, input_ids: np.ndarray, positions: np.ndarray, meta: AttentionMetadata,
                kv_cache: KVCache) -> np.ndarray:
        """One step over a flattened batch of T tokens -> logits of meta.sample_rows.

        input_ids, positions: (T,). Writes each token's K/V to meta.slot_mapping, then attends.
        """
        c = self.config
        t = len(input_ids)
        cos, sin = self.rope_cos[positions], self.rope_sin[positions]  # (T, D/2)
        x = self.embed[input_ids]  # (T, hidden)
        for i, w in enumerate(self.layers):
            h = rms_norm(x, w["attn_norm"], c.rms_norm_eps)
            q = (h @ w["wq"]).reshape(t, c.num_heads, c.head_dim)  # (T, H, D)
            k = (h @ w["wk"]).reshape(t, c.num_kv_heads, c.head_dim)  # (T, KH, D)
            v = (h @ w["wv"]).reshape(t, c.num_kv_heads, c.head_dim)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            kv_cache.write(i, meta.slot_mapping, k, v)
            o = attend(q, *kv_cache.layer(i), meta)  # (T, H, D)
            x = x + o.reshape(t, -1) @ w["wo"]
            h = rms_norm(x, w["mlp_norm"], c.rms_norm_eps)
            x = x + (silu(h @ w["w_gate"]) * (h @ w["w_up"])) @ w["w_down"]
        x = rms_norm(x[meta.sample_rows], self.final_norm, c.rms_norm_eps)
        return x @ self.lm_head  # (num_sample_rows, vocab)

    def sample(self, logits: np.ndarray, seqs: SequenceABC[Sequence]) -> list[int]:
        return sample(logits, seqs)


# --- sampling ------------------------------------------------------------------------------


def sampling_inputs(seqs: SequenceABC[Sequence]) -> tuple[np.ndarray, ...]:
    """Per-row (temperature, top_k, top_p, uniform) for a batch, drawn on the host.

    Each non-greedy sequence draws one uniform number from its own generator (seeded once from
    params.seed), so its tokens do not depend on what else is in the batch, nor on the backend
    that turns the numbers into tokens.
    """
    n = len(seqs)
    temps, top_ks = np.zeros(n), np.zeros(n, np.int64)
    top_ps, uniforms = np.ones(n), np.zeros(n)
    for i, seq in enumerate(seqs):
        p = seq.params
        if p.temperature > 0:
            temps[i], top_ks[i], top_ps[i] = p.temperature, max(p.top_k, 0), p.top_p
            assert seq.rng is not None  # the engine seeds one for every temperature > 0 request
            uniforms[i] = seq.rng.random()
    return temps, top_ks, top_ps, uniforms


def sample_row(row: np.ndarray, temperature: float, top_k: int, top_p: float, u: float) -> int:
    """One token from one row of logits: argmax at temperature 0, else inverse-CDF sampling of
    softmax(row / temperature) cut to the top_k largest and the top_p nucleus (float64)."""
    if temperature == 0.0:
        return int(np.argmax(row))
    scaled = row.astype(np.float64) / temperature
    if 0 < top_k < len(scaled):
        cutoff = np.partition(scaled, -top_k)[-top_k]
        scaled[scaled < cutoff] = -np.inf
    probs = np.exp(scaled - scaled.max())
    if top_p < 1.0:  # keep the most likely tokens until their mass reaches top_p
        order = np.argsort(-probs, kind="stable")
        mass = np.cumsum(probs[order]) / probs.sum()
        drop = order[mass - probs[order] / probs.sum() >= top_p]
        probs[drop] = 0.0
    cdf = np.cumsum(probs)
    return int(min(np.searchsorted(cdf, u * cdf[-1], side="right"), len(cdf) - 1))


def sample(logits: np.ndarray, seqs: SequenceABC[Sequence]) -> list[int]:
    """One token per row of logits (num_seqs, vocab): greedy or seeded sampling, per sequence."""
    temps, top_ks, top_ps, uniforms = sampling_inputs(seqs)
    return [sample_row(row, t, int(k), p, u)
            for row, t, k, p, u in zip(logits, temps, top_ks, top_ps, uniforms, strict=True)]


__all__ = ["TinyModel", "encode", "decode", "sample", "sample_row", "sampling_inputs",
           "BOS_TOKEN_ID", "EOS_TOKEN_ID", "BYTE_VOCAB_SIZE"]
