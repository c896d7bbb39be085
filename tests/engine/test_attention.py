"""Paged attention (prefill and decode, grouped-query) agrees with the contiguous reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kata.engine.attention import (AttentionMetadata, PrefillChunk, attend, contiguous_attention,
                              paged_decode_attention, paged_prefill_attention)
from kata.engine.kv_cache import KVCache

H, KH, D, BS = 4, 2, 8, 4


def naive_attention(q, k, v):
    """Loops, float64: the definition, for checking contiguous_attention itself."""
    nq, h, d = q.shape
    nk, kh, _ = k.shape
    out = np.zeros((nq, h, d))
    for i in range(nq):
        pos = nk - nq + i
        for head in range(h):
            kv = head // (h // kh)
            s = np.array([q[i, head] @ k[j, kv] for j in range(pos + 1)]) / np.sqrt(d)
            p = np.exp(s - s.max())
            p /= p.sum()
            out[i, head] = sum(p[j] * v[j, kv] for j in range(pos + 1))
    return out


def scatter_into_cache(rng, k, v, num_blocks=32):
    """Write contiguous k, v (n, KH, D) into randomly chosen blocks; return caches + table."""
    n = k.shape[0]
    nb = -(-n // BS)
    table = rng.permutation(num_blocks)[:nb].tolist()
    cache = KVCache(1, num_blocks, BS, KH, D)
    slots = [table[i // BS] * BS + i % BS for i in range(n)]
    cache.write(0, slots, k, v)
    return cache.k[0], cache.v[0], table


def test_contiguous_matches_the_definition():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, H, D))
    k, v = rng.standard_normal((2, 7, KH, D))
    np.testing.assert_allclose(contiguous_attention(q, k, v), naive_attention(q, k, v), atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(num_context=st.integers(0, 20), num_new=st.integers(1, 12), seed=st.integers(0, 99))
def test_paged_prefill_matches_contiguous(num_context, num_new, seed):
    rng = np.random.default_rng(seed)
    n = num_context + num_new
    q = rng.standard_normal((num_new, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, n, KH, D)).astype(np.float32)
    kc, vc, table = scatter_into_cache(rng, k, v)
    got = paged_prefill_attention(q, kc, vc, table, num_context)
    np.testing.assert_allclose(got, contiguous_attention(q, k, v), atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(lens=st.lists(st.integers(1, 40), min_size=1, max_size=6), seed=st.integers(0, 99),
       gather_bytes=st.sampled_from([1, 1 << 20]))  # a group per sequence, or one for all
def test_paged_decode_matches_contiguous(lens, seed, gather_bytes):
    rng = np.random.default_rng(seed)
    num_blocks = sum(-(-n // BS) for n in lens) + 3
    cache = KVCache(1, num_blocks, BS, KH, D)
    free = rng.permutation(num_blocks).tolist()
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    tables, want = [], []
    for i, n in enumerate(lens):
        k, v = rng.standard_normal((2, n, KH, D)).astype(np.float32)
        table = [free.pop() for _ in range(-(-n // BS))]
        cache.write(0, [table[j // BS] * BS + j % BS for j in range(n)], k, v)
        tables.append(table)
        want.append(contiguous_attention(q[i:i + 1], k, v)[0])
    got = paged_decode_attention(q, cache.k[0], cache.v[0], tables, lens, gather_bytes)
    np.testing.assert_allclose(got, np.stack(want), atol=1e-5)


def test_attend_runs_a_mixed_step():
    """Two prefill chunks (one with cached context) and two decodes in one call."""
    rng = np.random.default_rng(1)
    lens = {"a": 9, "b": 6, "c": 5, "d": 13}
    new = {"a": 9, "b": 2, "c": 1, "d": 1}  # a: full prompt; b: chunk after 4; c, d: decode
    cache = KVCache(1, 16, BS, KH, D)
    free = rng.permutation(16).tolist()
    seqs = {}
    for name, n in lens.items():
        k, v = rng.standard_normal((2, n, KH, D)).astype(np.float32)
        table = [free.pop() for _ in range(-(-n // BS))]
        cache.write(0, [table[j // BS] * BS + j % BS for j in range(n)], k, v)
        seqs[name] = (k, v, table)
    q = rng.standard_normal((sum(new.values()), H, D)).astype(np.float32)
    meta = AttentionMetadata(slot_mapping=np.zeros(0, np.intp), num_prefill_tokens=11,
                             prefills=[PrefillChunk(0, 9, 0, seqs["a"][2]),
                                       PrefillChunk(9, 2, 4, seqs["b"][2])],
                             decode_block_tables=[seqs["c"][2], seqs["d"][2]],
                             decode_context_lens=[5, 13])
    got = attend(q, cache.k[0], cache.v[0], meta)
    rows = {"a": slice(0, 9), "b": slice(9, 11), "c": slice(11, 12), "d": slice(12, 13)}
    for name, r in rows.items():
        k, v, _ = seqs[name]
        want = contiguous_attention(q[r], k[:lens[name]], v[:lens[name]])
        np.testing.assert_allclose(got[r], want, atol=1e-5, err_msg=name)


def test_kv_cache_copy_and_swap_move_whole_blocks():
    cache = KVCache(2, 4, BS, KH, D, num_host_blocks=2)
    cache.k[:, 1] = 1.0
    cache.v[:, 1] = 2.0
    cache.copy_blocks([(1, 3)])
    assert (cache.k[:, 3] == 1.0).all() and (cache.v[:, 3] == 2.0).all()
    cache.swap_out([(3, 0)])
    cache.k[:, 3] = 0
    cache.swap_in([(0, 2)])
    assert (cache.k[:, 2] == 1.0).all() and (cache.v[:, 2] == 2.0).all()
    assert cache.nbytes == 2 * 2 * 4 * BS * KH * D * 4
