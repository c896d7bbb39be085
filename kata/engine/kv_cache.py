"""K and V storage for the paged cache, in numpy.

Two arrays of shape (num_layers, num_blocks, block_size, num_kv_heads, head_dim): physical block
`b` of layer `l` is `k[l, b]`, a (block_size, num_kv_heads, head_dim) tile. Writes go through a
*slot mapping*: slot `s` is token row `s % block_size` of block `s // block_size`, so the flat view
`k[l].reshape(num_blocks * block_size, num_kv_heads, head_dim)` is indexed by slot directly.

    cache = KVCache(num_layers=2, num_blocks=8, block_size=4, num_kv_heads=2, head_dim=16)
    cache.write(layer=0, slot_mapping=[28, 29], k=k_new, v=v_new)   # k_new: (2, 2, 16)
    cache.k[0, 7, 0]  -> k_new[0]                                     # slot 28 = block 7, row 0

The block manager decides which slots; this file only moves bytes: writes, copy-on-write block
copies, and swaps to and from an emulated host pool of the same layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class KVCache:
    def __init__(self, num_layers: int, num_blocks: int, block_size: int, num_kv_heads: int,
                 head_dim: int, dtype: str = "float32", num_host_blocks: int = 0) -> None:
        shape = (num_layers, num_blocks, block_size, num_kv_heads, head_dim)
        self.block_size = block_size
        self.k = np.zeros(shape, dtype)  # (num_layers, num_blocks, block_size, kv_heads, head_dim)
        self.v = np.zeros(shape, dtype)
        host_shape = (num_layers, num_host_blocks, block_size, num_kv_heads, head_dim)
        self.host_k = np.zeros(host_shape, dtype)  # the swap space ("CPU memory")
        self.host_v = np.zeros(host_shape, dtype)

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

    def layer(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """(k, v) of one layer, each (num_blocks, block_size, num_kv_heads, head_dim); views."""
        return self.k[layer], self.v[layer]

    def write(self, layer: int, slot_mapping: Sequence[int] | np.ndarray, k: np.ndarray,
              v: np.ndarray) -> None:
        """Store new tokens' K and V. k, v: (num_tokens, num_kv_heads, head_dim)."""
        _, nb, bs, kvh, d = self.k.shape
        self.k[layer].reshape(nb * bs, kvh, d)[slot_mapping] = k  # reshape of a view: no copy
        self.v[layer].reshape(nb * bs, kvh, d)[slot_mapping] = v

    def copy_blocks(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy-on-write: block dst <- block src, every layer."""
        if pairs:
            src, dst = np.array(pairs).T
            self.k[:, dst] = self.k[:, src]
            self.v[:, dst] = self.v[:, src]

    def swap_out(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Device block -> host block, for [(device_block, host_block)]."""
        if pairs:
            dev, host = np.array(pairs).T
            self.host_k[:, host] = self.k[:, dev]
            self.host_v[:, host] = self.v[:, dev]

    def swap_in(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Host block -> device block, for [(host_block, device_block)]."""
        if pairs:
            host, dev = np.array(pairs).T
            self.k[:, dev] = self.host_k[:, host]
            self.v[:, dev] = self.host_v[:, host]
