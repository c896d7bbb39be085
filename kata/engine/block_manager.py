"""The KV block pool: PagedAttention's memory manager, with no tensors in it.

GPU memory for K and V is cut into `num_blocks` physical blocks of `block_size` token slots. A
sequence owns a *block table*, the list of physical blocks holding its tokens in order, so token
`i` lives in slot `block_table[i // block_size] * block_size + i % block_size`. Blocks are handed
out on demand, so a sequence wastes at most `block_size - 1` slots (in its last block).

    bm = BlockManager(num_blocks=8, block_size=4)
    bm.allocate(seq_id=0, num_tokens=6)   -> 0        (blocks for a 6-token prompt; 0 cache hits)
    bm.block_table(0)                      -> [0, 1]
    bm.append(0)                           -> []       (room for token 7; no copy needed)
    bm.slot_mapping(0, 4, 7)               -> [4, 5, 6]
    bm.free(0); bm.num_free_blocks         -> 8

Three ideas on top of the pool:

* Reference counts and `fork()`: a child sequence (parallel sampling) shares all of its parent's
  blocks; each block's ref count is the number of block tables holding it. The first write into a
  shared, partly filled last block copies it first (copy-on-write): `append()` returns the
  (src, dst) block pairs whose contents the KV cache must copy. No write ever lands in a block
  whose ref count is > 1.
* Prefix caching: once a *full* block's K/V are computed (`mark_computed`), it is registered under
  a hash chained from the previous block's hash and its own token ids, so the hash names the whole
  prefix. `allocate()` walks a new prompt's blocks and reuses every leading block it finds (ref
  count up). The last of the given token ids is always recomputed, so hits stop short of it: the
  model needs its logits. A `cache_salt` (a tenant) starts the chain elsewhere: tenants never
  share a block. A freed cached block waits in an LRU queue until the pool hands it out anew.
* Swap (kata/engine/swap.py): `swap_out()` moves a sequence's blocks to a bounded host pool and
  `swap_in()` brings them back into fresh device blocks.

The physical blocks (ref counts, free lists, the cache index) are kata/engine/block_pool.py; this
module keeps the sequences' tables. Only blocks filled from the `token_ids` given to `allocate()`
are cached, not generated tokens. Left out: sliding windows, multiple KV groups, cross-GPU sharing.

Public API (stable; the katas depend on it): allocate / can_allocate / num_blocks_needed,
append / can_append, mark_computed, fork, free, swap_out / swap_in / can_swap_out / can_swap_in,
block_table, slot_mapping, num_tokens, ref_count; num_free_blocks, num_used_blocks,
num_free_host_blocks, block_tables (a read-only view).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kata.engine.block_pool import BlockPool, NoFreeBlocksError, cache_keys, check_tables, hash_block
from kata.engine.swap import SwapMixin

__all__ = ["BlockManager", "NoFreeBlocksError", "hash_block"]


class BlockManager(SwapMixin):
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 num_host_blocks: int = 0) -> None:
        if num_blocks < 1 or block_size < 1 or num_host_blocks < 0:
            raise ValueError(f"need num_blocks >= 1, block_size >= 1, num_host_blocks >= 0; got "
                             f"{num_blocks}, {block_size}, {num_host_blocks}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.num_host_blocks = num_host_blocks
        self.pool = BlockPool(num_blocks, num_host_blocks)
        # --- per sequence
        self._tables: dict[int, list[int]] = {}  # seq_id -> block ids (device)
        self._num_tokens: dict[int, int] = {}  # seq_id -> token slots reserved
        self._keys: dict[int, list[int]] = {}  # seq_id -> cache keys of its cacheable full blocks
        self._num_registered: dict[int, int] = {}  # seq_id -> leading blocks known computed
        # seq_ids whose tables may hold a shared or cached block (cache keys, or a fork); other
        # tables are private and freed without looking at each block (BlockPool.release).
        self._maybe_shared: set[int] = set()
        self._num_table_entries = 0  # sum of len(block table) over device tables
        self._host_tables: dict[int, list[int]] = {}  # swapped-out seq_id -> host block ids
        # --- prefix-cache statistics, in tokens
        self.num_cache_query_tokens = 0
        self.num_cache_hit_tokens = 0

    # --- queries -------------------------------------------------------------

    @property
    def num_free_blocks(self) -> int:
        """Blocks that can be handed out now, including cached blocks nobody holds."""
        return self.pool.num_free

    @property
    def num_used_blocks(self) -> int:
        """Blocks held by at least one block table (ref count > 0)."""
        return self.num_blocks - self.pool.num_free

    @property
    def num_cached_free_blocks(self) -> int:
        """Free blocks still holding a cached prefix (evicted last, LRU first)."""
        return len(self.pool.free_cached)

    @property
    def num_uncached_free_blocks(self) -> int:
        """Free blocks holding nothing worth keeping: handed out before any eviction."""
        return len(self.pool.free)

    @property
    def block_tables(self) -> Mapping[int, list[int]]:
        """seq_id -> block table, for sequences on the device. Read-only: do not mutate."""
        return self._tables

    def block_table(self, seq_id: int) -> list[int]:
        """A copy of the sequence's block table (device block ids, in token order)."""
        return list(self._table(seq_id))

    def num_tokens(self, seq_id: int) -> int:
        """Token slots reserved for the sequence (allocated + appended)."""
        try:
            return self._num_tokens[seq_id]
        except KeyError:
            raise KeyError(f"seq_id {seq_id} has no blocks") from None

    @property
    def num_reserved_slots(self) -> int:
        """Token slots in all device block tables (a shared block counts once per table)."""
        return self._num_table_entries * self.block_size

    def ref_count(self, block_id: int) -> int:
        return self.pool.ref_counts[block_id]

    def has_seq(self, seq_id: int) -> bool:
        """True if the sequence holds blocks, on the device or swapped out to the host."""
        return seq_id in self._tables or seq_id in self._host_tables

    def num_blocks_for(self, num_tokens: int) -> int:
        """Blocks needed for `num_tokens` slots. Example (block_size 16): 17 -> 2."""
        return -(-num_tokens // self.block_size)

    def slot_mapping(self, seq_id: int, start: int, end: int) -> list[int]:
        """Cache slots for the sequence's tokens [start, end), which are about to be written.

        Refuses (AssertionError) to map a write into a block shared with another sequence: that
        is the copy-on-write invariant. Example (block_size 4, table [7, 2]): (0, 6) -> [28, 29,
        30, 31, 8, 9].
        """
        table, bs = self._table(seq_id), self.block_size
        if not 0 <= start <= end <= self._num_tokens[seq_id]:
            raise ValueError(f"slot_mapping({seq_id}, {start}, {end}): the sequence has "
                             f"{self._num_tokens[seq_id]} slots")
        slots, refs = [], self.pool.ref_counts
        for i in range(start, end):
            block = table[i // bs]
            assert refs[block] == 1, f"write into shared block {block} (ref count {refs[block]})"
            slots.append(block * bs + i % bs)
        return slots

    # --- allocate / append / free ---------------------------------------------

    def can_allocate(self, num_tokens: int, token_ids: Sequence[int] | None = None,
                     cache_salt: str | None = None) -> bool:
        """Would `allocate()` of a new sequence succeed now?"""
        return self._plan(num_tokens, token_ids, cache_salt)[2] <= self.num_free_blocks

    def num_blocks_needed(self, num_tokens: int, token_ids: Sequence[int] | None = None,
                          cache_salt: str | None = None) -> int:
        """Free blocks `allocate()` of a new sequence would take now (prefix hits excluded,
        cached blocks revived from the free queue included)."""
        return self._plan(num_tokens, token_ids, cache_salt)[2]

    def allocate(self, seq_id: int, num_tokens: int,
                 token_ids: Sequence[int] | None = None, cache_salt: str | None = None) -> int:
        """Give a new sequence a block table with room for `num_tokens` tokens.

        `token_ids`, if given, are the ids of its first len(token_ids) tokens; full blocks of them
        are looked up in (and later added to) the prefix cache. Returns the number of leading
        tokens whose K/V are already cached (a multiple of block_size, < num_tokens): the caller
        computes only the rest. Raises NoFreeBlocksError, changing nothing, if the pool is short.
        """
        if seq_id in self._tables or seq_id in self._host_tables:
            raise ValueError(f"allocate: seq_id {seq_id} already has blocks")
        if num_tokens < 1:
            raise ValueError(f"allocate: num_tokens must be >= 1, got {num_tokens}")
        keys, hits, num_needed = self._plan(num_tokens, token_ids, cache_salt)
        if num_needed > self.num_free_blocks:
            raise NoFreeBlocksError(f"allocate: seq {seq_id} needs {num_needed} free blocks, "
                                    f"{self.num_free_blocks} free")
        self.pool.hold(hits)  # reuse cached blocks
        fresh = self.pool.take_many(self.num_blocks_for(num_tokens) - len(hits))
        table = hits + fresh if hits else fresh
        self._tables[seq_id] = table
        self._num_table_entries += len(table)
        self._num_tokens[seq_id] = num_tokens
        self._keys[seq_id] = keys
        self._num_registered[seq_id] = len(hits)
        if keys:
            self._maybe_shared.add(seq_id)
        if token_ids is not None and self.enable_prefix_caching:
            self.num_cache_query_tokens += min(len(token_ids), num_tokens)
            self.num_cache_hit_tokens += len(hits) * self.block_size
        return len(hits) * self.block_size

    def can_append(self, seq_id: int, num_new_tokens: int = 1) -> bool:
        """Would `append(seq_id, num_new_tokens)` succeed now?"""
        return self._num_blocks_to_append(seq_id, num_new_tokens) <= self.num_free_blocks

    def append(self, seq_id: int, num_new_tokens: int = 1) -> list[tuple[int, int]]:
        """Make room for `num_new_tokens` more tokens (usually 1: a decode step).

        Returns the copy-on-write pairs [(src_block, dst_block)]: if the last block is shared
        and not full, the sequence gets a private copy before anything is written into it.
        Raises NoFreeBlocksError, changing nothing, if the pool is short.
        """
        table = self._tables.get(seq_id)
        if table is None or num_new_tokens < 0:
            self._num_blocks_to_append(seq_id, num_new_tokens)  # raises, naming the problem
        n, bs, pool = self._num_tokens[seq_id], self.block_size, self.pool
        needed = (n + num_new_tokens + bs - 1) // bs - len(table)
        cow = num_new_tokens > 0 and n % bs != 0 and pool.ref_counts[table[-1]] > 1
        if needed + cow > len(pool.free) + len(pool.free_cached):
            raise NoFreeBlocksError(f"append: seq {seq_id} needs {needed + cow} blocks, "
                                    f"{self.num_free_blocks} free")
        self._num_tokens[seq_id] = n + num_new_tokens
        if not (needed or cow):  # the common case: room left in the last block
            return []
        copies = []
        if cow:  # the next token lands in a shared, partly filled block: copy it first
            src, dst = table[-1], pool.take()
            pool.ref_counts[src] -= 1
            table[-1] = dst
            copies.append((src, dst))
        self._num_table_entries += needed
        table += pool.take_many(needed)
        return copies

    def mark_computed(self, seq_id: int, num_computed_tokens: int) -> None:
        """The K/V of the sequence's first `num_computed_tokens` tokens are now in the cache.

        Registers its newly complete, cacheable full blocks in the prefix cache, so later prompts
        can reuse them. A block whose key is already cached elsewhere (the same prefix computed
        twice at once) stays private.
        """
        table, keys = self._table(seq_id), self._keys[seq_id]
        if not keys:  # nothing cacheable (no token ids, or caching off): nothing to register
            return
        upto = min(num_computed_tokens // self.block_size, len(keys))
        for i in range(self._num_registered[seq_id], upto):
            self.pool.register(table[i], keys[i])
        self._num_registered[seq_id] = max(self._num_registered[seq_id], upto)

    def fork(self, parent_seq_id: int, child_seq_id: int) -> None:
        """The child shares every block of the parent (ref counts up); no block is copied yet."""
        table = self._table(parent_seq_id)
        if child_seq_id in self._tables or child_seq_id in self._host_tables:
            raise ValueError(f"fork: seq_id {child_seq_id} already has blocks")
        for b in table:
            self.pool.ref_counts[b] += 1
        self._tables[child_seq_id] = list(table)
        self._num_table_entries += len(table)
        self._num_tokens[child_seq_id] = self._num_tokens[parent_seq_id]
        self._keys[child_seq_id] = self._keys[parent_seq_id]
        self._num_registered[child_seq_id] = self._num_registered[parent_seq_id]
        self._maybe_shared.update((parent_seq_id, child_seq_id))

    def free(self, seq_id: int) -> None:
        """Release the sequence's blocks (device or host). Cached blocks stay reusable."""
        if seq_id in self._host_tables:
            self.pool.host_free.extend(reversed(self._host_tables.pop(seq_id)))
        else:
            self.pool.release(self._table(seq_id), seq_id not in self._maybe_shared)
            self._num_table_entries -= len(self._tables.pop(seq_id))
        del self._num_tokens[seq_id], self._keys[seq_id], self._num_registered[seq_id]
        self._maybe_shared.discard(seq_id)

    # --- invariants (tests call this after every operation) ---------------------

    def check_invariants(self) -> None:
        """Assert the bookkeeping is consistent. O(num_blocks + total table length)."""
        check_tables(self)

    # --- internals -----------------------------------------------------------

    def _table(self, seq_id: int) -> list[int]:
        try:
            return self._tables[seq_id]
        except KeyError:
            where = "is swapped out" if seq_id in self._host_tables else "has no blocks"
            raise KeyError(f"seq_id {seq_id} {where}") from None

    def _num_blocks_to_append(self, seq_id: int, num_new_tokens: int) -> int:
        table = self._tables.get(seq_id)
        if table is None:
            self._table(seq_id)  # raises a KeyError naming the problem
        if num_new_tokens < 0:
            raise ValueError(f"append: num_new_tokens must be >= 0, got {num_new_tokens}")
        n, bs = self._num_tokens[seq_id], self.block_size
        cow = num_new_tokens and n % bs and self.pool.ref_counts[table[-1]] > 1
        return (n + num_new_tokens + bs - 1) // bs - len(table) + (1 if cow else 0)

    def _plan(self, num_tokens: int, token_ids: Sequence[int] | None,
              cache_salt: str | None = None) -> tuple[list[int], list[int], int]:
        """(cache keys, cached blocks to reuse, free blocks the allocation would take)."""
        if token_ids is None or not self.enable_prefix_caching:  # the common simulated case
            return [], [], -(-num_tokens // self.block_size)
        keys = cache_keys(self.block_size, num_tokens, token_ids, cache_salt)
        # the last known token is always recomputed (its logits are needed): hits stop short of it
        num_known = min(len(token_ids), num_tokens)
        hits = self.pool.lookup(keys, (num_known - 1) // self.block_size) if keys else []
        num_hits_from_free = sum(1 for b in hits if self.pool.ref_counts[b] == 0)
        return keys, hits, self.num_blocks_for(num_tokens) - len(hits) + num_hits_from_free
