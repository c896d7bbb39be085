"""The same KV storage, paged attention and tiny model on torch tensors, on "cpu" or "cuda".

A line-by-line port of kv_cache.py, attention.py and model.py: the weights are copied from a
numpy `TinyModel`, so both backends compute the same function (they agree to ~1e-5). The engine
still plans in Python and samples in numpy; only the tensors live on the device. Selected with
`EngineConfig(backend="torch", device="cuda")` or `kata engine run --backend torch --device cuda`.

Decode attention here gathers every sequence's blocks at once into a padded (num_seqs,
max_blocks * block_size, KH, D) tensor and masks the padding: simple, and on a GPU the gather is
cheap next to a kernel launch per sequence. A real engine uses a fused paged-attention kernel
that reads the blocks in place.

Importing this module imports torch; nothing else in the engine does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from kata.engine.attention import AttentionMetadata
from kata.engine.model import TinyModel

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def resolve_device(device: str) -> torch.device:
    """torch.device for "cpu" / "cuda" / "cuda:N"; a clear error if CUDA is not there."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} asked for, but torch sees no CUDA GPU")
    return torch.device(device)


# --- KV storage -------------------------------------------------------------------------


class TorchKVCache:
    """KVCache on a torch device; the host pool is ordinary CPU memory."""

    def __init__(self, num_layers: int, num_blocks: int, block_size: int, num_kv_heads: int,
                 head_dim: int, dtype: str = "float32", device: str = "cpu",
                 num_host_blocks: int = 0) -> None:
        self.device = resolve_device(device)
        dt = _DTYPES[dtype]
        shape = (num_layers, num_blocks, block_size, num_kv_heads, head_dim)
        self.block_size = block_size
        self.k = torch.zeros(shape, dtype=dt, device=self.device)
        self.v = torch.zeros(shape, dtype=dt, device=self.device)
        host = (num_layers, num_host_blocks, block_size, num_kv_heads, head_dim)
        self.host_k = torch.zeros(host, dtype=dt)
        self.host_v = torch.zeros(host, dtype=dt)

    @property
    def nbytes(self) -> int:
        return 2 * self.k.numel() * self.k.element_size()

    def layer(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.k[layer], self.v[layer]

    def write(self, layer: int, slot_mapping, k: torch.Tensor, v: torch.Tensor) -> None:
        _, nb, bs, kvh, d = self.k.shape
        slots = torch.as_tensor(np.asarray(slot_mapping), dtype=torch.long, device=self.device)
        self.k[layer].view(nb * bs, kvh, d)[slots] = k
        self.v[layer].view(nb * bs, kvh, d)[slots] = v

    def _pairs(self, pairs):
        a, b = np.asarray(pairs, dtype=np.int64).T
        return torch.as_tensor(a), torch.as_tensor(b)

    def copy_blocks(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            src, dst = (t.to(self.device) for t in self._pairs(pairs))
            self.k[:, dst] = self.k[:, src]
            self.v[:, dst] = self.v[:, src]

    def swap_out(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            dev, host = self._pairs(pairs)
            self.host_k[:, host] = self.k[:, dev.to(self.device)].cpu()
            self.host_v[:, host] = self.v[:, dev.to(self.device)].cpu()

    def swap_in(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            host, dev = self._pairs(pairs)
            self.k[:, dev.to(self.device)] = self.host_k[:, host].to(self.device)
            self.v[:, dev.to(self.device)] = self.host_v[:, host].to(self.device)


# --- attention ------------------------------------------------------------------------------


def contiguous_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal GQA; queries are the last num_q of num_kv positions. (num_q, H, D) -> same."""
    nq, h, d = q.shape
    nk, kh, _ = k.shape
    g = h // kh
    qg = (q * d ** -0.5).reshape(nq, kh, g, d).permute(1, 2, 0, 3)  # (KH, G, nq, D)
    scores = qg @ k.permute(1, 2, 0)[:, None]  # (KH, G, nq, nk)
    if nq > 1:
        q_pos = torch.arange(nk - nq, nk, device=q.device)[:, None]
        future = torch.arange(nk, device=q.device)[None, :] > q_pos  # (nq, nk)
        scores = scores.masked_fill(future, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v.permute(1, 0, 2)[:, None]  # (KH, G, nq, D)
    return out.permute(2, 0, 1, 3).reshape(nq, h, d)


def gather_kv(cache: torch.Tensor, block_table: Sequence[int], num_tokens: int) -> torch.Tensor:
    bs = cache.shape[1]
    nb = -(-num_tokens // bs)
    table = torch.as_tensor(list(block_table[:nb]), dtype=torch.long, device=cache.device)
    return cache[table].reshape(nb * bs, *cache.shape[2:])[:num_tokens]


def paged_prefill_attention(q, k_cache, v_cache, block_table, num_context_tokens):
    num_kv = num_context_tokens + q.shape[0]
    return contiguous_attention(q, gather_kv(k_cache, block_table, num_kv),
                                gather_kv(v_cache, block_table, num_kv))


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           block_tables: Sequence[Sequence[int]],
                           context_lens: Sequence[int]) -> torch.Tensor:
    """One query per sequence over its blocks. q (n, H, D) -> (n, H, D)."""
    n, h, d = q.shape
    _, bs, kh, _ = k_cache.shape
    g = h // kh
    lens = torch.as_tensor(list(context_lens), dtype=torch.long, device=q.device)
    max_blocks = -(-int(max(context_lens)) // bs)
    table = torch.zeros((n, max_blocks), dtype=torch.long)  # padding -> block 0, masked
    for i, row in enumerate(block_tables):
        nb = -(-int(context_lens[i]) // bs)
        table[i, :nb] = torch.as_tensor(list(row[:nb]))
    table = table.to(q.device)
    k = k_cache[table].reshape(n, max_blocks * bs, kh, d)  # (n, L, KH, D)
    v = v_cache[table].reshape(n, max_blocks * bs, kh, d)
    qg = (q * d ** -0.5).reshape(n, kh, g, d)
    scores = qg @ k.permute(0, 2, 3, 1)  # (n, KH, G, L)
    pad = torch.arange(max_blocks * bs, device=q.device)[None, :] >= lens[:, None]  # (n, L)
    scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v.permute(0, 2, 1, 3)  # (n, KH, G, D)
    return out.reshape(n, h, d)


def attend(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
           meta: AttentionMetadata) -> torch.Tensor:
    out = torch.empty_like(q)
    for c in meta.prefills:
        rows = slice(c.row, c.row + c.num_tokens)
        out[rows] = paged_prefill_attention(q[rows], k_cache, v_cache, c.block_table,
                                            c.num_context_tokens)
    if meta.decode_context_lens:
        p = meta.num_prefill_tokens
        out[p:] = paged_decode_attention(q[p:], k_cache, v_cache, meta.decode_block_tables,
                                         meta.decode_context_lens)
    return out


# --- model ------------------------------------------------------------------------------------


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


class TorchModel:
    """TinyModel's forward on torch; weights copied from a numpy TinyModel."""

    def __init__(self, numpy_model: TinyModel, device: str = "cpu") -> None:
        self.config = numpy_model.config
        self.device = resolve_device(device)

        def t(a: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(np.ascontiguousarray(a)).to(self.device)

        self.embed = t(numpy_model.embed)
        self.layers = [{name: t(w) for name, w in layer.items()} for layer in numpy_model.layers]
        self.final_norm = t(numpy_model.final_norm)
        self.lm_head = t(numpy_model.lm_head)
        self.rope_cos, self.rope_sin = t(numpy_model.rope_cos), t(numpy_model.rope_sin)

    @torch.inference_mode()
    def forward(self, input_ids: np.ndarray, positions: np.ndarray, meta: AttentionMetadata,
                kv_cache: TorchKVCache) -> np.ndarray:
        """Same contract as TinyModel.forward; returns numpy logits (for numpy sampling)."""
        c = self.config
        ids = torch.as_tensor(input_ids, dtype=torch.long, device=self.device)
        pos = torch.as_tensor(positions, dtype=torch.long, device=self.device)
        t = ids.shape[0]
        cos, sin = self.rope_cos[pos], self.rope_sin[pos]
        x = self.embed[ids]
        for i, w in enumerate(self.layers):
            h = rms_norm(x, w["attn_norm"], c.rms_norm_eps)
            q = (h @ w["wq"]).view(t, c.num_heads, c.head_dim)
            k = (h @ w["wk"]).view(t, c.num_kv_heads, c.head_dim)
            v = (h @ w["wv"]).view(t, c.num_kv_heads, c.head_dim)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            kv_cache.write(i, meta.slot_mapping, k, v)
            o = attend(q, *kv_cache.layer(i), meta)
            x = x + o.reshape(t, -1) @ w["wo"]
            h = rms_norm(x, w["mlp_norm"], c.rms_norm_eps)
            x = x + (torch.nn.functional.silu(h @ w["w_gate"]) * (h @ w["w_up"])) @ w["w_down"]
        rows = torch.as_tensor(meta.sample_rows, dtype=torch.long, device=self.device)
        x = rms_norm(x[rows], self.final_norm, c.rms_norm_eps)
        return (x @ self.lm_head).cpu().numpy()
