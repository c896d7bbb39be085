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

Four ideas on top of the pool:

* Reference counts and `fork()`: a child sequence (parallel sampling) shares all of its parent's
  blocks; each block's ref count is the number of block tables holding it. The first write into a
  shared, partly filled last block copies it first (copy-on-write): `append()` returns the
  (src, dst) block pairs whose contents the KV cache must copy. No write ever lands in a block
  whose ref count is > 1.
* Prefix caching: once a *full* block's K/V are computed (`mark_computed`), it is registered under
  a SHA-256 key chained from the previous block's key, the tenant's salt and its own token ids, so
  the key names the whole prefix. `allocate()` walks a new prompt's blocks and reuses every
  leading block it finds (ref count up), each hit verified against its tokens and its parent
  (prefix_cache.py): a hash collision never shares a block. The last of the given token ids is
  always recomputed, so hits stop short of it: the model needs its logits. A `cache_salt` (a
  tenant) is part of every key and checked on every hit: tenants never share a block. A freed
  cached block waits in an LRU queue until the pool hands it out anew.
* Swap: `swap_out()` / `swap_in()` move a sequence's blocks to a host pool and back (swap.py).
* Reservations: `reserve(n)` promises blocks (the simulation's lazy decodes), `append(...,
  reserved=True)` takes them; they are not free, so `num_free_blocks` is always true.

Blocks: block_pool.py; the cache's index: prefix_cache.py; tables: block_tables.py; host pool:
swap.py. This class is the one that changes them, through their public methods. Only blocks filled
from the `token_ids` given to `allocate()` are cached. The public API (stable: the katas depend
on it) is listed in docs/ENGINE.md. Left out: sliding windows, KV groups, cross-GPU sharing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kata.engine.arith import cdiv
from kata.engine.block_pool import BlockPool, NoFreeBlocksError
from kata.engine.block_tables import SequenceTables
from kata.engine.prefix_cache import ROOT_KEY, HashFn, PrefixCache, PrefixIndex, hash_block, sha256
from kata.engine.swap import Swapper, SwapSpace

__all__ = ["BlockManager", "NoFreeBlocksError", "ROOT_KEY", "hash_block"]


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 num_host_blocks: int = 0, hash_fn: HashFn = sha256) -> None:
        if num_blocks < 1 or block_size < 1 or num_host_blocks < 0:
            raise ValueError(f"need num_blocks >= 1, block_size >= 1, num_host_blocks >= 0; got "
                             f"{num_blocks}, {block_size}, {num_host_blocks}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.num_host_blocks = num_host_blocks
        index = PrefixIndex(hash_fn)
        self._pool = BlockPool(num_blocks, index)
        self._cache = PrefixCache(index)
        self._swap = SwapSpace(num_host_blocks)
        self._seqs = SequenceTables(block_size)
        self._swapper = Swapper(self._pool, self._seqs, self._cache, self._swap)
        self.num_cache_query_tokens = self.num_cache_hit_tokens = 0  # prefix-cache statistics

    # --- queries -------------------------------------------------------------

    @property
    def num_free_blocks(self) -> int:
        """Blocks anyone can take now: cached blocks nobody holds included, reserved excluded."""
        return self._pool.num_free

    @property
    def num_used_blocks(self) -> int:
        """Blocks held by a block table (ref count > 0) or reserved for one."""
        return self.num_blocks - self._pool.num_free

    @property
    def num_reserved_blocks(self) -> int:
        """Blocks promised by `reserve()`, not yet appended to a table."""
        return self._pool.num_reserved

    @property
    def num_uncached_free_blocks(self) -> int:
        """Free blocks holding nothing worth keeping (and not reserved): taken before eviction."""
        return self._pool.num_uncached_free

    @property
    def num_free_host_blocks(self) -> int:
        return self._swap.num_free

    @property
    def block_tables(self) -> Mapping[int, list[int]]:
        """seq_id -> block table, for sequences on the device. Read-only: do not mutate."""
        return self._seqs.view

    def block_table(self, seq_id: int) -> list[int]:
        """A copy of the sequence's block table (device block ids, in token order)."""
        return list(self._table(seq_id))

    def num_tokens(self, seq_id: int) -> int:
        """Token slots reserved for the sequence (allocated + appended)."""
        if not self._seqs.known(seq_id):
            raise KeyError(f"seq_id {seq_id} has no blocks")
        return self._seqs.num_tokens(seq_id)

    @property
    def num_reserved_slots(self) -> int:
        """Token slots in all device block tables and reservations (a shared block counts once
        per table)."""
        return (self._seqs.num_entries + self._pool.num_reserved) * self.block_size

    def ref_count(self, block_id: int) -> int:
        return self._pool.ref_counts[block_id]

    def has_seq(self, seq_id: int) -> bool:
        """True if the sequence holds blocks, on the device or swapped out to the host."""
        return self._seqs.known(seq_id)

    def is_swapped(self, seq_id: int) -> bool:
        return self._swap.holds(seq_id)

    def num_blocks_for(self, num_tokens: int) -> int:
        """Blocks needed for `num_tokens` slots. Example (block_size 16): 17 -> 2."""
        return cdiv(num_tokens, self.block_size)

    def slot_mapping(self, seq_id: int, start: int, end: int) -> list[int]:
        """Cache slots for tokens [start, end), about to be written; AssertionError for a shared
        block (copy-on-write). Example (block_size 4, table [7, 2]): (0, 6) -> [28..31, 8, 9]."""
        self._table(seq_id)  # raises a KeyError naming the problem
        return self._seqs.slot_mapping(seq_id, start, end, self._pool.ref_counts)

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
        """A new sequence's block table, room for `num_tokens`. Full blocks of `token_ids` (its
        first tokens' ids) are looked up in the prefix cache. Returns how many leading tokens are
        cached (the caller computes the rest). NoFreeBlocksError, changing nothing, if short."""
        if self.has_seq(seq_id):
            raise ValueError(f"allocate: seq_id {seq_id} already has blocks")
        if num_tokens < 1:
            raise ValueError(f"allocate: num_tokens must be >= 1, got {num_tokens}")
        keys, hits, num_needed = self._plan(num_tokens, token_ids, cache_salt)
        if num_needed > self.num_free_blocks:
            raise NoFreeBlocksError(f"allocate: seq {seq_id} needs {num_needed} free blocks, "
                                    f"{self.num_free_blocks} free")
        self._pool.hold(hits)  # reuse cached blocks
        fresh = self._pool.take_many(self.num_blocks_for(num_tokens) - len(hits))
        self._seqs.add(seq_id, hits + fresh if hits else fresh, num_tokens, bool(keys))
        if keys and token_ids is not None:  # keys come from token_ids only (_plan)
            self._cache.start(seq_id, keys, token_ids, cache_salt, hits)
        if token_ids is not None and self.enable_prefix_caching:
            self.num_cache_query_tokens += min(len(token_ids), num_tokens)
            self.num_cache_hit_tokens += len(hits) * self.block_size
        return len(hits) * self.block_size

    def can_append(self, seq_id: int, num_new_tokens: int = 1) -> bool:
        """Would `append(seq_id, num_new_tokens)` succeed now?"""
        return self._num_blocks_to_append(seq_id, num_new_tokens) <= self.num_free_blocks

    def append(self, seq_id: int, num_new_tokens: int = 1,
               reserved: bool = False) -> list[tuple[int, int]]:
        """Room for `num_new_tokens` more tokens. Returns copy-on-write pairs [(src, dst)]: a
        shared, partly filled last block is copied before anything is written into it.
        `reserved`: new blocks come out of an earlier `reserve()`. NoFreeBlocksError if short."""
        needed = self._num_blocks_to_append(seq_id, num_new_tokens)  # (validates the ids)
        table, n, bs, pool = self._table(seq_id), self._seqs.num_tokens(seq_id), \
            self.block_size, self._pool
        cow = num_new_tokens > 0 and n % bs != 0 and pool.ref_counts[table[-1]] > 1
        grow = needed - cow
        if cow + (0 if reserved else grow) > pool.num_free:
            raise NoFreeBlocksError(f"append: seq {seq_id} needs {needed} blocks, "
                                    f"{self.num_free_blocks} free")
        self._seqs.set_num_tokens(seq_id, n + num_new_tokens)
        if not needed:  # the common case: room left in the last block
            return []
        copies = []
        if cow:  # the next token lands in a shared, partly filled block: copy it first
            src, dst = table[-1], pool.take()
            pool.drop_holder(src)
            table[-1] = dst
            copies.append((src, dst))
        self._seqs.grew(grow)
        table += pool.take_reserved(grow) if reserved else pool.take_many(grow)
        return copies

    def reserve(self, num_blocks: int) -> None:
        """Promise num_blocks uncached free blocks to sequences that will append into them
        (`append(..., reserved=True)`); until then nobody else can take them."""
        self._pool.reserve(num_blocks)

    def unreserve(self, num_blocks: int) -> None:
        """Give back promised blocks that will not be appended (their sequence left)."""
        self._pool.unreserve(num_blocks)

    def mark_computed(self, seq_id: int, num_computed_tokens: int) -> None:
        """The K/V of its first `num_computed_tokens` tokens exist: newly complete cacheable
        blocks join the prefix cache (a prefix already indexed elsewhere stays private)."""
        self._cache.register(seq_id, self._table(seq_id), self.block_size, num_computed_tokens)

    def fork(self, parent_seq_id: int, child_seq_id: int) -> None:
        """The child shares every block of the parent (ref counts up); no block is copied yet."""
        table = self._table(parent_seq_id)
        if self.has_seq(child_seq_id):
            raise ValueError(f"fork: seq_id {child_seq_id} already has blocks")
        self._pool.hold(table)
        if self._seqs.is_private(parent_seq_id):  # now shared: re-add it as such
            self._seqs.add(parent_seq_id, self._seqs.detach(parent_seq_id),
                           self._seqs.num_tokens(parent_seq_id), True)
        self._seqs.add(child_seq_id, list(table), self._seqs.num_tokens(parent_seq_id), True)
        self._cache.fork(parent_seq_id, child_seq_id)

    def free(self, seq_id: int) -> None:
        """Release the sequence's blocks (device or host). Cached blocks stay reusable."""
        if self._swap.holds(seq_id):
            self._swap.drop(seq_id)
        else:
            private = self._seqs.is_private(seq_id)
            self._table(seq_id)  # raises a KeyError naming the problem
            self._pool.release(self._seqs.detach(seq_id), private)
        self._seqs.forget(seq_id)
        self._cache.forget(seq_id)

    # --- swap (swap.py) -------------------------------------------------------

    def can_swap_out(self, seq_id: int) -> bool:
        return len(self._table(seq_id)) <= self._swap.num_free

    def swap_out(self, seq_id: int) -> list[tuple[int, int]]:
        """Move the sequence's blocks to the host pool. Returns [(device_block, host_block)]:
        the KV cache copies those before the device blocks are reused."""
        return self._swapper.swap_out(seq_id, self._table(seq_id))

    def can_swap_in(self, seq_id: int) -> bool:
        return len(self._swap.table(seq_id)) <= self.num_free_blocks

    def swap_in(self, seq_id: int) -> list[tuple[int, int]]:
        """Bring a swapped-out sequence back into fresh device blocks (its computed full blocks
        are indexed again). Returns [(host_block, device_block)] for the KV cache to copy."""
        return self._swapper.swap_in(seq_id)

    # --- invariants (tests call this after every operation) ---------------------

    def check_invariants(self) -> None:
        """Assert the bookkeeping is consistent. O(num_blocks + total table length)."""
        pool = self._pool
        pool.check(self._seqs.view.values())
        self._seqs.check(lambda b: pool.ref_counts[b] == 1 and not pool.index.is_cached(b))
        self._swap.check()
        assert all(self._seqs.known(s) for s in self._seqs.view), "a table with no token count"

    # --- internals -----------------------------------------------------------

    def _table(self, seq_id: int) -> list[int]:
        if not self._seqs.on_device(seq_id):
            where = "is swapped out" if self._swap.holds(seq_id) else "has no blocks"
            raise KeyError(f"seq_id {seq_id} {where}")
        return self._seqs.table(seq_id)

    def _num_blocks_to_append(self, seq_id: int, num_new_tokens: int) -> int:
        table = self._table(seq_id)  # raises a KeyError naming the problem
        if num_new_tokens < 0:
            raise ValueError(f"append: num_new_tokens must be >= 0, got {num_new_tokens}")
        n, bs = self._seqs.num_tokens(seq_id), self.block_size
        cow = num_new_tokens and n % bs and self._pool.ref_counts[table[-1]] > 1
        return cdiv(n + num_new_tokens, bs) - len(table) + (1 if cow else 0)

    def _plan(self, num_tokens: int, token_ids: Sequence[int] | None,
              cache_salt: str | None = None) -> tuple[list[bytes], list[int], int]:
        """(cache keys, verified cached blocks to reuse, free blocks the allocation would take)."""
        if token_ids is None or not self.enable_prefix_caching:  # the common simulated case
            return [], [], self.num_blocks_for(num_tokens)
        keys, hits = self._cache.plan(self.block_size, num_tokens, token_ids, cache_salt)
        num_hits_from_free = sum(1 for b in hits if self._pool.ref_counts[b] == 0)
        return keys, hits, self.num_blocks_for(num_tokens) - len(hits) + num_hits_from_free
