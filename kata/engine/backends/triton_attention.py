"""Paged decode attention as one Triton kernel (and a merge for long contexts): CUDA's path.

One query per sequence attends to its first `context_lens[i]` tokens, whose K and V sit in the
blocks its block table names. The torch backend's gather path copies every block into a new
padded tensor and then runs SDPA on it: each KV byte is read, written and read again. Here each
program reads the blocks in place, once, straight from the cache:

    q (n, H, D), caches (num_blocks, block_size, KH, D), tables (n, max_blocks), lens (n,)

* One program per (sequence, KV head, split). It loads the G = H // KH query heads that share
  the KV head (grouped-query attention: K and V are read once for all of them) as the rows of a
  (16+, D) tile; rows past G are zeros and are never stored.
* Token t of the sequence lives at row t % block_size of block tables[i][t // block_size], so a
  tile of BLOCK_N tokens may span several blocks, of any block size the engine allows.
* Online softmax (base 2: scores are multiplied by log2(e) so exp2 serves for exp). For each tile
  of scores s (G, BLOCK_N), with m the running max, l the running sum of exp2(s - m) and acc the
  running sum of exp2(s - m) * v:

      m' = max(m, max_t s)     alpha = exp2(m - m')     p = exp2(s - m')
      l' = l * alpha + sum_t p                          acc' = acc * alpha + p @ V

  so that after the last tile acc / l = softmax(s) @ V, with every exponent <= 0 (no overflow)
  and each K and V byte read once. Tokens past the context are masked to -inf (p = 0).
* Split context (flash-decoding): a small batch has too few (sequence, KV head) programs to keep
  every streaming multiprocessor reading. The context is then cut into S splits of `split_len`
  tokens, one program each, and each writes its partial result o_s = acc_s / l_s and its log-sum
  lse_s = m_s + log2(l_s) (-inf for a split past the sequence's end). The second kernel merges:

      M = max_s lse_s     w_s = exp2(lse_s - M)     out = sum_s w_s o_s / sum_s w_s

  which is the one-pass softmax exactly: w_s / sum w = (sum of exp2 over split s) / (the total).
  It walks the splits with a running max, the same update as the first pass's over tiles.

Arithmetic is float32 throughout (scores, softmax, accumulators); K, V and the probabilities p go
into the matmuls in the cache's dtype (float16 and bfloat16 on tensor cores), as a GPU kernel
takes them. Under Triton's interpreter (TRITON_INTERPRET=1, on CPU, for the tests) the matmuls
take the same values widened to float32, since the interpreter's bfloat16 matmul is not exact.
"""

from __future__ import annotations

import functools
import os

import torch
import triton
import triton.language as tl

from kata.engine.arith import cdiv

BLOCK_N = 64  # tokens per tile
NUM_WARPS = 4
MIN_SPLIT_TOKENS = 256  # a split shorter than this costs more in partials than it gains
MAX_SPLITS = 16
LOG2_E = 1.4426950408889634


@triton.jit
def _dot(a, b, FP32: tl.constexpr):
    if FP32:  # exact float32 products (not TF32)
        c = tl.dot(a, b, input_precision="ieee")
    else:  # float16 / bfloat16 operands on tensor cores, float32 accumulation
        c = tl.dot(a, b)
    return c


@triton.jit
def _decode_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, lse_ptr, scale, split_len,
                   stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_ts,
                   stride_os, stride_oh, stride_op, stride_ls, stride_lh,
                   GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                   BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
                   SPLIT: tl.constexpr, FP32: tl.constexpr):
    """One (sequence, KV head, split): the online softmax over its tiles (module docstring)."""
    seq, kv_head, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    end = tl.minimum((split + 1) * split_len, tl.load(lens_ptr + seq).to(tl.int32))
    g, d, n = tl.arange(0, BLOCK_G), tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_N)
    heads = kv_head * GROUP + g
    g_ok, d_ok = g < GROUP, d < HEAD_DIM
    q = tl.load(q_ptr + seq * stride_qs + heads[:, None] * stride_qh + d[None, :],
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(k_ptr.dtype.element_ty)
    if FP32:
        q = q.to(tl.float32)
    m = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_sum = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for tile in range(split * split_len, end, BLOCK_N):
        tok = tile + n
        ok = tok < end
        block = tl.load(table_ptr + seq * stride_ts + tok // BLOCK_SIZE, mask=ok, other=0)
        row = block * stride_kb + (tok % BLOCK_SIZE) * stride_kt + kv_head * stride_kh
        kv_ok = ok[:, None] & d_ok[None, :]
        k = tl.load(k_ptr + row[:, None] + d[None, :], mask=kv_ok, other=0.0)  # (BLOCK_N, D)
        v = tl.load(v_ptr + row[:, None] + d[None, :], mask=kv_ok, other=0.0)
        if FP32:
            k, v = k.to(tl.float32), v.to(tl.float32)
        s = _dot(q, tl.trans(k), FP32) * scale  # (BLOCK_G, BLOCK_N), base-2 units
        s = tl.where(ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))  # finite: every tile holds a token of the context
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_sum = l_sum * alpha + tl.sum(p, 1)
        p = p.to(v_ptr.dtype.element_ty)  # the matmul's input format, as a GPU takes it
        if FP32:
            p = p.to(tl.float32)
        acc = acc * alpha[:, None] + _dot(p, v, FP32)
        m = m_new
    has = l_sum > 0  # False only for a split that starts past the sequence's end
    o = acc / tl.where(has, l_sum, 1.0)[:, None]
    tl.store(out_ptr + seq * stride_os + heads[:, None] * stride_oh + split * stride_op
             + d[None, :], o.to(out_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])
    if SPLIT:
        lse = tl.where(has, m + tl.log2(tl.where(has, l_sum, 1.0)), float("-inf"))
        tl.store(lse_ptr + seq * stride_ls + heads * stride_lh + split, lse, mask=g_ok)


@triton.jit
def _merge_kernel(o_ptr, lse_ptr, out_ptr, num_splits, stride_os, stride_oh, stride_op,
                  stride_ls, stride_lh, stride_outs, stride_outh, GROUP: tl.constexpr,
                  HEAD_DIM: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr):
    """One (sequence, KV head)'s G query heads: out = sum_s w_s o_s / sum_s w_s, with
    w_s = exp2(lse_s - M), taken split by split with a running max M, the first pass's update.
    Split 0 always holds a token, so it starts M finite; an empty split's w_s is exp2(-inf) = 0."""
    seq, kv_head = tl.program_id(0), tl.program_id(1)
    g, d = tl.arange(0, BLOCK_G), tl.arange(0, BLOCK_D)
    heads = kv_head * GROUP + g
    g_ok = g < GROUP
    ok = g_ok[:, None] & (d < HEAD_DIM)[None, :]
    o_at = o_ptr + seq * stride_os + heads[:, None] * stride_oh + d[None, :]
    lse_at = lse_ptr + seq * stride_ls + heads * stride_lh
    big = tl.load(lse_at, mask=g_ok, other=0.0)  # M, the running max of lse_s
    total = tl.full([BLOCK_G], 1.0, tl.float32)  # sum of w_s, relative to M
    acc = tl.load(o_at, mask=ok, other=0.0)  # sum of w_s o_s, relative to M
    for split in range(1, num_splits):
        lse = tl.load(lse_at + split, mask=g_ok, other=float("-inf"))
        new = tl.maximum(big, lse)
        alpha, w = tl.exp2(big - new), tl.exp2(lse - new)
        o = tl.load(o_at + split * stride_op, mask=ok, other=0.0)
        acc = acc * alpha[:, None] + w[:, None] * o
        total = total * alpha + w
        big = new
    tl.store(out_ptr + seq * stride_outs + heads[:, None] * stride_outh + d[None, :],
             (acc / total[:, None]).to(out_ptr.dtype.element_ty), mask=ok)


@functools.cache
def _num_sms(device: torch.device) -> int:
    """Streaming multiprocessors of a CUDA device (8 stands in for the interpreter's CPU)."""
    if device.type != "cuda":
        return 8
    return torch.cuda.get_device_properties(device).multi_processor_count


def choose_splits(num_seqs: int, num_kv_heads: int, span: int, num_sms: int) -> int:
    """Splits per sequence: 1 when the batch's (sequence, KV head) programs already fill every
    multiprocessor twice over; else enough to, keeping each split >= MIN_SPLIT_TOKENS long.
    Example: 8 sequences x 8 KV heads of 1,024 tokens on 132 SMs -> 4 splits (256 programs)."""
    programs = num_seqs * num_kv_heads
    if programs >= 2 * num_sms:
        return 1
    return max(1, min(cdiv(2 * num_sms, programs), span // MIN_SPLIT_TOKENS, MAX_SPLITS))


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                           tables: torch.Tensor, context_lens: torch.Tensor, *,
                           num_splits: int | None = None, block_n: int = BLOCK_N,
                           num_warps: int = NUM_WARPS) -> torch.Tensor:
    """q (n, H, D) -> (n, H, D), reading K and V in place; the torch backend's contract.

    tables (n, max_blocks) and context_lens (n,): integer tensors on q's device (padding in a
    table is never read). num_splits: None picks with `choose_splits` (the table's width bounds
    every context, so no length is read back from the device); 1 runs one pass.
    """
    n, h, d = q.shape
    _, bs, kh, _ = k_cache.shape
    out = torch.empty_like(q)
    if n == 0:
        return out
    assert k_cache.stride(3) == 1 and v_cache.stride() == k_cache.stride() and q.stride(2) == 1
    assert tables.stride(1) == 1 and context_lens.stride(0) == 1
    span = tables.shape[1] * bs  # >= the longest context
    if num_splits is None:
        num_splits = choose_splits(n, kh, span, _num_sms(q.device))
    split_len = cdiv(cdiv(span, num_splits), block_n) * block_n
    num_splits = cdiv(span, split_len)
    group = h // kh
    sizes = dict(GROUP=group, HEAD_DIM=d, BLOCK_SIZE=bs,
                 BLOCK_G=max(16, triton.next_power_of_2(group)),
                 BLOCK_D=max(16, triton.next_power_of_2(d)), BLOCK_N=block_n,
                 FP32=k_cache.dtype == torch.float32 or os.environ.get("TRITON_INTERPRET") == "1")
    scale = d ** -0.5 * LOG2_E
    strides = (q.stride(0), q.stride(1), *k_cache.stride()[:3], tables.stride(0))
    if num_splits == 1:
        _decode_kernel[(n, kh, 1)](q, k_cache, v_cache, tables, context_lens, out, out, scale,
                                   split_len, *strides, out.stride(0), out.stride(1), 0, 0, 0,
                                   SPLIT=False, num_warps=num_warps, **sizes)
        return out
    part = torch.empty((n, h, num_splits, d), dtype=torch.float32, device=q.device)
    lse = torch.empty((n, h, num_splits), dtype=torch.float32, device=q.device)
    _decode_kernel[(n, kh, num_splits)](q, k_cache, v_cache, tables, context_lens, part, lse,
                                        scale, split_len, *strides, *part.stride()[:3],
                                        *lse.stride()[:2], SPLIT=True, num_warps=num_warps, **sizes)
    _merge_kernel[(n, kh)](part, lse, out, num_splits, *part.stride()[:3], *lse.stride()[:2],
                           out.stride(0), out.stride(1), GROUP=group, HEAD_DIM=d,
                           BLOCK_G=sizes["BLOCK_G"], BLOCK_D=sizes["BLOCK_D"], num_warps=4)
    return out
