"""Attention over the paged KV cache, in numpy, with grouped-query attention (GQA).

Shapes (H query heads share KH = H // G key/value heads; D = head_dim):
    q                (num_tokens, H, D)
    k_cache, v_cache (num_blocks, block_size, KH, D)      one layer of KVCache
    output           (num_tokens, H, D)

Three functions, one idea each:
* `contiguous_attention`: the textbook reference. K and V in one contiguous array; causal.
* `paged_prefill_attention`: one sequence's new chunk of queries attends to every earlier token
  (prefix-cached or computed in earlier chunks) and causally to itself. Its K/V sit in blocks
  named by the block table.
* `paged_decode_attention`: one query per sequence, a whole batch, each over its own blocks.

Decode attention is memory-bound: every step reads each sequence's whole KV once. Gathering all
blocks of all sequences at once would copy the batch's whole KV through DRAM and back before
reading it again; instead each sequence's blocks are gathered into a reused buffer small enough to
stay in the CPU's cache (`np.take(..., out=buf, mode="clip")`: see `gather_kv` for the mode), and
attended from there. That is the paging tax on a CPU: one extra copy, into cache. A GPU kernel
reads the blocks in place.

`AttentionMetadata` + `attend()` run one mixed step (prefill chunks first, then decodes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kata.engine.arith import cdiv


def _softmax_(scores: np.ndarray) -> np.ndarray:
    """In-place softmax over the last axis. -inf entries become 0."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def causal_mask(num_q: int, num_kv: int, dtype) -> np.ndarray:
    """(num_q, num_kv) additive mask: 0 where query i (the last num_q positions) may look,
    -inf where the key comes after it. Example (2, 3): [[0, 0, -inf], [0, 0, 0]]."""
    q_pos = np.arange(num_kv - num_q, num_kv)[:, None]
    return np.where(np.arange(num_kv)[None, :] > q_pos, -np.inf, 0.0).astype(dtype)


# --- reference -----------------------------------------------------------------


def contiguous_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                         scale: float | None = None) -> np.ndarray:
    """Causal GQA attention where the queries are the *last* num_q of num_kv positions.

    q (num_q, H, D); k, v (num_kv, KH, D) -> (num_q, H, D). Query i sits at position
    num_kv - num_q + i and sees keys 0 ..= that position.
    Example: num_q == num_kv is a full prompt; num_q == 1 is one decode step.
    """
    nq, h, d = q.shape
    nk, kh, _ = k.shape
    g = h // kh
    scale = d ** -0.5 if scale is None else scale
    qg = (q * np.asarray(scale, q.dtype)).reshape(nq, kh, g, d).transpose(1, 2, 0, 3)  # (KH,G,nq,D)
    scores = qg @ k.transpose(1, 2, 0)[:, None]  # (KH, G, nq, nk)
    if nq > 1:  # causal: query i (at position nk - nq + i) must not see later keys
        scores += causal_mask(nq, nk, scores.dtype)  # (nq, nk), broadcast over heads
    probs = _softmax_(scores)
    out = probs @ v.transpose(1, 0, 2)[:, None]  # (KH, G, nq, D)
    return out.transpose(2, 0, 1, 3).reshape(nq, h, d)


# --- paged -----------------------------------------------------------------------


def gather_kv(cache: np.ndarray, block_table: Sequence[int], num_tokens: int,
              out: np.ndarray | None = None) -> np.ndarray:
    """The first num_tokens token rows of a block table, contiguous: (num_tokens, KH, D).

    `out`, if given, is a (>= num_blocks, block_size, KH, D) buffer reused across calls.
    """
    bs = cache.shape[1]
    nb = cdiv(num_tokens, bs)
    table = np.asarray(block_table[:nb], dtype=np.intp)
    if out is None:
        blocks = cache[table]  # (nb, bs, KH, D): a copy
    else:
        # mode="clip": with the default mode="raise", np.take writes into a temporary and
        # copies it to `out` (so that a bad index leaves `out` untouched): a second copy of every
        # byte. Block ids come from a block table, so there is nothing to clip.
        blocks = np.take(cache, table, axis=0, out=out[:nb], mode="clip")
    return blocks.reshape(nb * bs, *cache.shape[2:])[:num_tokens]


def paged_prefill_attention(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray,
                            block_table: Sequence[int], num_context_tokens: int) -> np.ndarray:
    """One sequence's chunk of num_q new tokens, at positions [num_context_tokens, +num_q).

    Their own K/V must already be written to the cache. q (num_q, H, D) -> (num_q, H, D).
    Example: a 100-token prompt with 64 prefix-cached tokens: q holds 36 rows, context 64.
    """
    num_kv = num_context_tokens + q.shape[0]
    k = gather_kv(k_cache, block_table, num_kv)  # (num_kv, KH, D)
    v = gather_kv(v_cache, block_table, num_kv)
    return contiguous_attention(q, k, v)


class _Workspace:
    """Scratch arrays reused across calls, one flat buffer per name and dtype, grown as needed.
    Reuse keeps the buffers warm in cache and spares the page faults of fresh large arrays."""

    def __init__(self) -> None:
        self._buffers: dict[tuple, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
        size = int(np.prod(shape))
        key = (name, np.dtype(dtype))
        buf = self._buffers.get(key)
        if buf is None or buf.size < size:
            buf = np.empty(size, dtype)
            self._buffers[key] = buf
        return buf[:size].reshape(shape)


_workspace = _Workspace()
GATHER_BYTES = 1 << 19  # gather budget per chunk of K (V the same): stays in a core's L2


def _groups(lens: list[int], bs: int, row_bytes: int, budget: int):
    """Runs [i, j) of consecutive sequences whose padded K fits the budget, with their
    longest block count. A sequence longer than the budget is a group of its own."""
    i, n = 0, len(lens)
    while i < n:
        j, max_blocks = i + 1, cdiv(lens[i], bs)
        while j < n:
            grown = max(max_blocks, cdiv(lens[j], bs))
            if (j + 1 - i) * grown * row_bytes > budget:
                break
            j, max_blocks = j + 1, grown
        yield i, j, max_blocks
        i = j


def paged_decode_attention(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray,
                           block_tables: Sequence[Sequence[int]],
                           context_lens: Sequence[int],
                           gather_bytes: int | None = None) -> np.ndarray:
    """One new token per sequence, each attending to its first context_lens[i] tokens.

    q (num_seqs, H, D); block_tables[i] lists sequence i's blocks -> (num_seqs, H, D).
    Example: context_lens [5, 17], block_size 16: sequence 1 reads 2 blocks, 17 rows.

    Consecutive sequences are grouped so that a group's gathered K (padded to its longest
    context) fits `gather_bytes` (default GATHER_BYTES): short contexts take few numpy calls.
    A longer sequence is read in chunks of blocks that fit it, so every gathered byte is
    still in cache when the matmul reads it. Two passes per group: scores chunk by chunk,
    one softmax, then V chunk by chunk.

    Scores are computed as K @ q^T, (L, D) @ (D, G) per KV head, with q^T contiguous: on
    this shape BLAS runs about 4x faster than q @ K^T.
    """
    n, h, d = q.shape
    _, bs, kh, _ = k_cache.shape
    g = h // kh
    budget = GATHER_BYTES if gather_bytes is None else gather_bytes
    row_bytes = bs * kh * d * k_cache.itemsize  # one block of K
    q_t = np.ascontiguousarray(  # (n, KH, D, G); contiguous, or BLAS is 2x slower
        (q * np.asarray(d ** -0.5, q.dtype)).reshape(n, kh, g, d).transpose(0, 1, 3, 2))
    out = np.empty((n, kh, g, d), q.dtype)
    lens = [int(c) for c in context_lens]
    for i, j, max_blocks in _groups(lens, bs, row_bytes, budget):
        m, span = j - i, max_blocks * bs
        step = max(1, budget // (m * row_bytes))  # blocks per chunk
        table = np.zeros((m, max_blocks), np.intp)  # padding points at block 0, masked below
        for r in range(m):
            nb = cdiv(lens[i + r], bs)
            table[r, :nb] = block_tables[i + r][:nb]
        chunks = [(c, min(step, max_blocks - c)) for c in range(0, max_blocks, step)]
        kv = _workspace.get("kv", (m * chunks[0][1], bs, kh, d), k_cache.dtype)
        scores_t = _workspace.get("scores_t", (m, kh, span, g), q.dtype)
        for c, nb in chunks:  # K: scores (m, KH, L, G), chunk by chunk
            k = np.take(k_cache, table[:, c:c + nb].reshape(-1), axis=0,
                        out=kv[:m * nb], mode="clip")
            k = k.reshape(m, nb * bs, kh, d).transpose(0, 2, 1, 3)  # (m, KH, rows, D)
            np.matmul(k, q_t[i:j], out=scores_t[:, :, c * bs:(c + nb) * bs])
        scores = _workspace.get("scores", (m, kh, g, span), q.dtype)  # softmax runs along L
        np.copyto(scores, scores_t.transpose(0, 1, 3, 2))
        if m > 1 or lens[i] < span:  # hide padding and the unused tail of a block
            pad = np.arange(span)[None, :] >= np.asarray(lens[i:j])[:, None]  # (m, L)
            scores += np.where(pad, -np.inf, 0.0).astype(scores.dtype)[:, None, None, :]
        # Softmax with the division deferred: out = (exp(s - max) @ V) / sum(exp(s - max)).
        # Dividing the (m, KH, G, D) output instead of the (m, KH, G, L) scores saves a pass.
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        total = scores.sum(axis=-1)  # (m, KH, G)
        o = out[i:j]
        part = np.empty_like(o) if len(chunks) > 1 else o
        for c, nb in chunks:  # V: out (m, KH, G, D), summed over chunks
            v = np.take(v_cache, table[:, c:c + nb].reshape(-1), axis=0,
                        out=kv[:m * nb], mode="clip")
            v = v.reshape(m, nb * bs, kh, d).transpose(0, 2, 1, 3)
            np.matmul(scores[..., c * bs:(c + nb) * bs], v, out=o if c == 0 else part)
            if c:
                o += part
        o /= total[..., None]
    return out.reshape(n, h, d)


# --- one mixed step -----------------------------------------------------------------


@dataclass(slots=True)
class PrefillChunk:
    """Rows [row, row + num_tokens) of the step are one sequence's chunk of new tokens."""

    row: int
    num_tokens: int
    num_context_tokens: int  # tokens of this sequence already in the cache before the chunk
    block_table: list[int]


@dataclass(slots=True)
class AttentionMetadata:
    """Where each row of a step's flattened batch reads and writes KV.

    Rows are ordered: every prefill chunk, then one row per decoding sequence.
    slot_mapping: (num_tokens,) cache slot each row's new K/V is written to.
    sample_rows: rows whose logits are needed (a chunk's last row if it ends the prompt; every
        decode row).
    """

    slot_mapping: np.ndarray
    prefills: list[PrefillChunk] = field(default_factory=list)
    num_prefill_tokens: int = 0
    decode_block_tables: list[list[int]] = field(default_factory=list)
    decode_context_lens: list[int] = field(default_factory=list)  # including the new token
    sample_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))


def attend(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray,
           meta: AttentionMetadata) -> np.ndarray:
    """Attention for every row of one step. q (num_tokens, H, D) -> (num_tokens, H, D)."""
    out = np.empty_like(q)
    for c in meta.prefills:
        rows = slice(c.row, c.row + c.num_tokens)
        out[rows] = paged_prefill_attention(q[rows], k_cache, v_cache, c.block_table,
                                            c.num_context_tokens)
    if meta.decode_context_lens:
        out[meta.num_prefill_tokens:] = paged_decode_attention(
            q[meta.num_prefill_tokens:], k_cache, v_cache, meta.decode_block_tables,
            meta.decode_context_lens)
    return out
