"""The paged KV cache, one step's inputs and paged attention on torch tensors, "cpu" or "cuda".

What a GPU wants, in order of the step:

* `StepInputs.build`: the step's integer inputs (token ids, positions, slot mapping, decode block
  tables and context lengths, prefill tables, sample rows) are packed into one int64 host tensor
  (pinned memory on CUDA) and moved with one non-blocking copy; every layer reads views of it.
* `TorchKVCache`: K and V in the engine's dtype (float16, bfloat16, float32), written through
  the slot mapping. Its host swap space is pinned on CUDA and block-major, so each swapped block
  is one contiguous non-blocking copy, ordered with the step's kernels on the current stream.
* attention through `torch.nn.functional.scaled_dot_product_attention` (grouped-query heads via
  `enable_gqa`, torch >= 2.5): a prefill chunk over its gathered blocks (causal when the chunk is
  the whole context, else an explicit mask, since SDPA's causal mask is aligned top-left). A
  batch of decodes on CUDA, with triton installed, runs the fused paged kernel of
  triton_attention.py, which reads the blocks in place; elsewhere (CPU, or no triton) it runs
  SDPA over a padded gather of their blocks with the padding masked.

The model (torch_model.py) computes in the same dtype; logits are sampled on the device.
Importing this module imports torch; nothing else in the engine does. Triton is imported on the
first decode on a CUDA device, never on CPU.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from kata.engine.arith import cdiv
from kata.engine.attention import AttentionMetadata

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "float64": torch.float64}


def resolve_device(device: str) -> torch.device:
    """torch.device for "cpu" / "cuda" / "cuda:N"; a clear error if CUDA is not there."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} asked for, but torch sees no CUDA GPU")
    return torch.device(device)


def to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    """One host-to-device copy: from pinned memory and non-blocking on CUDA."""
    host = torch.from_numpy(np.ascontiguousarray(array))
    if device.type == "cuda":
        return host.pin_memory().to(device, non_blocking=True)
    return host


# --- one step's inputs ---------------------------------------------------------------------


@dataclass(slots=True)
class StepInputs:
    """Views of one int64 device tensor, built and moved once per step."""

    input_ids: torch.Tensor  # (T,)
    positions: torch.Tensor  # (T,)
    slot_mapping: torch.Tensor  # (T,)
    sample_rows: torch.Tensor  # (S,)
    decode_tables: torch.Tensor  # (num_decodes, max_blocks): padding points at block 0
    decode_lens: torch.Tensor  # (num_decodes,)
    prefill_tables: list[torch.Tensor]  # one per prefill chunk: the blocks it reads
    meta: AttentionMetadata

    @classmethod
    def build(cls, input_ids, positions, meta: AttentionMetadata, block_size: int,
              device: torch.device) -> StepInputs:
        lens = [int(n) for n in meta.decode_context_lens]
        width = max((cdiv(n, block_size) for n in lens), default=0)
        table = np.zeros((len(lens), width), np.int64)
        for i, (row, n) in enumerate(zip(meta.decode_block_tables, lens, strict=True)):
            nb = cdiv(n, block_size)
            table[i, :nb] = row[:nb]
        chunks = [np.asarray(c.block_table[:cdiv(c.num_context_tokens + c.num_tokens, block_size)],
                             np.int64) for c in meta.prefills]
        parts = [np.asarray(input_ids, np.int64), np.asarray(positions, np.int64),
                 np.asarray(meta.slot_mapping, np.int64), np.asarray(meta.sample_rows, np.int64),
                 table.ravel(), np.asarray(lens, np.int64), *chunks]
        flat = to_device(np.concatenate(parts), device)
        views = torch.split(flat, [len(p) for p in parts])
        ids, pos, slots, rows = views[:4]
        return cls(ids, pos, slots, rows, views[4].view(len(lens), width), views[5],
                   list(views[6:]), meta)


# --- KV storage -------------------------------------------------------------------------


class TorchKVCache:
    """KVCache on a torch device; the host pool is CPU memory (pinned when the device is CUDA)."""

    def __init__(self, num_layers: int, num_blocks: int, block_size: int, num_kv_heads: int,
                 head_dim: int, dtype: str = "float32", device: str = "cpu",
                 num_host_blocks: int = 0) -> None:
        self.device = resolve_device(device)
        dt = DTYPES[dtype]
        shape = (num_layers, num_blocks, block_size, num_kv_heads, head_dim)
        self.block_size = block_size
        self.k = torch.zeros(shape, dtype=dt, device=self.device)
        self.v = torch.zeros(shape, dtype=dt, device=self.device)
        host = (num_host_blocks, num_layers, block_size, num_kv_heads, head_dim)  # block-major
        pin = self.device.type == "cuda"
        self.host_k = torch.zeros(host, dtype=dt, pin_memory=pin)
        self.host_v = torch.zeros(host, dtype=dt, pin_memory=pin)

    @property
    def nbytes(self) -> int:
        return 2 * self.k.numel() * self.k.element_size()

    def layer(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.k[layer], self.v[layer]

    def write(self, layer: int, slot_mapping, k: torch.Tensor, v: torch.Tensor) -> None:
        """k, v (T, KH, D) into the slots (a device tensor, or a sequence of ints)."""
        _, nb, bs, kvh, d = self.k.shape
        if not isinstance(slot_mapping, torch.Tensor):
            slot_mapping = torch.as_tensor(np.asarray(slot_mapping, np.int64), device=self.device)
        self.k[layer].view(nb * bs, kvh, d)[slot_mapping] = k.to(self.k.dtype)
        self.v[layer].view(nb * bs, kvh, d)[slot_mapping] = v.to(self.v.dtype)

    def copy_blocks(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy-on-write: block dst <- block src, every layer (on the device)."""
        if pairs:
            src, dst = to_device(np.asarray(pairs, np.int64).T.copy(), self.device)
            self.k[:, dst] = self.k[:, src]
            self.v[:, dst] = self.v[:, src]

    def swap_out(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Device block -> host block: one non-blocking copy per block and tensor."""
        for dev, host in pairs:
            self.host_k[host].copy_(self.k[:, dev], non_blocking=True)
            self.host_v[host].copy_(self.v[:, dev], non_blocking=True)

    def swap_in(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Host block -> device block, non-blocking (after any swap-out on the same stream)."""
        for host, dev in pairs:
            self.k[:, dev].copy_(self.host_k[host], non_blocking=True)
            self.v[:, dev].copy_(self.host_v[host], non_blocking=True)


# --- attention ------------------------------------------------------------------------------


def gather_kv(cache: torch.Tensor, table: torch.Tensor, num_tokens: int) -> torch.Tensor:
    """The first num_tokens rows of the blocks in `table` (a device tensor): (num_tokens, KH, D)."""
    return cache[table].flatten(0, 1)[:num_tokens]


def contiguous_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal GQA; queries are the last num_q of num_kv positions. (num_q, H, D) -> same."""
    nq, nk = q.shape[0], k.shape[0]
    qh, kh, vh = (x.transpose(0, 1)[None] for x in (q, k, v))  # (1, heads, tokens, D)
    if nq == nk:
        out = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True, enable_gqa=True)
    else:  # SDPA's is_causal aligns top-left; these queries sit at the end
        q_pos = torch.arange(nk - nq, nk, device=q.device)[:, None]
        mask = torch.arange(nk, device=q.device)[None, :] <= q_pos  # True: may attend
        out = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, enable_gqa=True)
    return out[0].transpose(0, 1)


def paged_prefill_attention(q, k_cache, v_cache, table: torch.Tensor, num_context_tokens: int):
    num_kv = num_context_tokens + q.shape[0]
    return contiguous_attention(q, gather_kv(k_cache, table, num_kv),
                                gather_kv(v_cache, table, num_kv))


@functools.cache
def fused_decode_attention():
    """triton_attention.paged_decode_attention, or None where triton is not installed (or does
    not import: the gather path serves then)."""
    if importlib.util.find_spec("triton") is None:
        return None
    try:
        from kata.engine.backends import triton_attention
    except ImportError:
        return None
    return triton_attention.paged_decode_attention


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           tables, context_lens) -> torch.Tensor:
    """One query per sequence over its blocks. q (n, H, D) -> (n, H, D).

    tables: (n, max_blocks) device tensor (or lists of block ids); context_lens likewise.
    On CUDA the fused kernel reads the blocks in place (float16, bfloat16, float32, with triton
    installed); otherwise `gather_decode_attention`.
    """
    if not isinstance(tables, torch.Tensor):  # lists (tests, cuda_check): pack them
        inputs = StepInputs.build([], [], AttentionMetadata(
            np.zeros(0, np.int64), decode_block_tables=list(tables),
            decode_context_lens=list(context_lens)), k_cache.shape[1], q.device)
        tables, context_lens = inputs.decode_tables, inputs.decode_lens
    if q.device.type == "cuda" and k_cache.dtype in (torch.float16, torch.bfloat16, torch.float32):
        fused = fused_decode_attention()
        if fused is not None:
            return fused(q, k_cache, v_cache, tables, context_lens)
    return gather_decode_attention(q, k_cache, v_cache, tables, context_lens)


def gather_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                            tables: torch.Tensor, context_lens: torch.Tensor) -> torch.Tensor:
    """Each sequence's blocks gathered into a padded (n, KH, L, D) copy, then SDPA with the
    padding masked: the CPU path (and CUDA's without triton). Tensors as StepInputs holds them."""
    n = q.shape[0]
    _, bs, kh, d = k_cache.shape
    span = tables.shape[1] * bs
    k = k_cache[tables].view(n, span, kh, d).transpose(1, 2)  # (n, KH, L, D)
    v = v_cache[tables].view(n, span, kh, d).transpose(1, 2)
    mask = torch.arange(span, device=q.device)[None, :] < context_lens[:, None]  # (n, L)
    out = F.scaled_dot_product_attention(q[:, :, None, :], k, v, attn_mask=mask[:, None, None, :],
                                         enable_gqa=True)  # (n, H, 1, D)
    return out[:, :, 0, :]


def attend(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
           inputs: StepInputs) -> torch.Tensor:
    meta = inputs.meta
    out = torch.empty_like(q)
    for c, table in zip(meta.prefills, inputs.prefill_tables, strict=True):
        rows = slice(c.row, c.row + c.num_tokens)
        out[rows] = paged_prefill_attention(q[rows], k_cache, v_cache, table,
                                            c.num_context_tokens)
    if meta.decode_context_lens:
        p = meta.num_prefill_tokens
        out[p:] = paged_decode_attention(q[p:], k_cache, v_cache, inputs.decode_tables,
                                         inputs.decode_lens)
    return out
