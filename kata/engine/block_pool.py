"""Physical KV blocks: reference counts, the free lists, and the prefix cache's index.

Free blocks live in two places. Those with nothing cached sit on a plain stack and are handed out
first. Freed blocks that still hold a cached prefix wait in an LRU queue (an OrderedDict, a doubly
linked list underneath: O(1) pop from the front, push to the back, and removal from the middle
when a cache hit revives one); only when the stack is empty is the least recently used of them
evicted (its hash dropped). A block's hash names the whole prefix up to its end: it chains the
previous block's hash with the block's own token ids.

    pool = BlockPool(num_blocks=4, num_host_blocks=0)
    pool.take_many(2)          -> [0, 1]     (ref count 1 each)
    pool.release([0, 1])       (ref counts 0, back on the stack)

BlockManager (block_manager.py) keeps the sequences' block tables on top of this.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

ROOT_HASH = 0  # the "previous block hash" of a sequence's first block


class NoFreeBlocksError(RuntimeError):
    """The pool (or the host pool) has too few free blocks for the request."""


def hash_block(prev_hash: int, token_ids: Sequence[int]) -> int:
    """Prefix-cache key of one full block: chains the previous block's key with these token ids.

    Python's hash of a tuple of ints is deterministic across runs and 64 bits wide, so two
    different prefixes collide with probability ~2**-64 per pair.
    Example: hash_block(hash_block(0, [1, 2]), [3, 4]) names the prefix [1, 2, 3, 4].
    """
    return hash((prev_hash, tuple(token_ids)))


def cache_keys(block_size: int, num_tokens: int, token_ids: Sequence[int],
               cache_salt: str | None = None) -> list[int]:
    """Chained keys of the full blocks of token_ids[:num_tokens]. A salt (a tenant's name)
    starts the chain elsewhere, so prompts with different salts never share a block."""
    keys, key = [], ROOT_HASH if cache_salt is None else hash(tuple(cache_salt.encode()))
    for i in range(min(len(token_ids), num_tokens) // block_size):
        key = hash((key, tuple(token_ids[i * block_size:(i + 1) * block_size])))  # hash_block
        keys.append(key)
    return keys


class BlockPool:
    def __init__(self, num_blocks: int, num_host_blocks: int) -> None:
        self.num_blocks = num_blocks
        self.num_host_blocks = num_host_blocks
        self.ref_counts = [0] * num_blocks  # block id -> number of block tables holding it
        self.block_hash: list[int | None] = [None] * num_blocks  # block id -> cache key
        self.cached: dict[int, int] = {}  # cache key -> block id
        self.free: list[int] = list(range(num_blocks - 1, -1, -1))  # stack: nothing cached
        self.free_cached: OrderedDict[int, None] = OrderedDict()  # LRU: cached, ref count 0
        self.host_free = list(range(num_host_blocks - 1, -1, -1))  # stack of host block ids

    @property
    def num_free(self) -> int:
        return len(self.free) + len(self.free_cached)

    def take(self) -> int:
        """A free block, ref count 1: an uncached one if any, else evict the LRU cached one."""
        if self.free:
            block = self.free.pop()
        else:
            block, _ = self.free_cached.popitem(last=False)
            del self.cached[self.block_hash[block]]
            self.block_hash[block] = None
        self.ref_counts[block] = 1
        return block

    def take_many(self, n: int) -> list[int]:
        """n blocks, as n calls of take() would give them (in bulk when no eviction is needed)."""
        free = self.free
        if n > len(free):
            return [self.take() for _ in range(n)]
        blocks = free[len(free) - n:]
        del free[len(free) - n:]
        blocks.reverse()  # the order repeated pops give
        refs = self.ref_counts
        for b in blocks:
            refs[b] = 1
        return blocks

    def release(self, table: list[int], private: bool = False) -> None:
        """Drop one holder of each block of `table`; a block nobody holds becomes free.
        `private`: every ref count is 1 and nothing is cached (a fast path)."""
        refs, hashes, free = self.ref_counts, self.block_hash, self.free
        if private:  # all go onto the stack
            for b in table:
                refs[b] = 0
            free.extend(reversed(table))
            return
        # Last block first, so a prefix's tail is evicted before its head (heads are shared more).
        for b in reversed(table):
            r = refs[b] = refs[b] - 1
            if not r:
                if hashes[b] is None:
                    free.append(b)
                else:
                    self.free_cached[b] = None  # most recently used end: evicted last

    def hold(self, blocks: list[int]) -> None:
        """One more holder of each cached block (a prefix hit); an idle one leaves the LRU queue."""
        for b in blocks:
            if self.ref_counts[b] == 0:
                del self.free_cached[b]  # O(1) removal from the middle of the queue
            self.ref_counts[b] += 1

    def lookup(self, keys: list[int], max_blocks: int) -> list[int]:
        """Cached blocks for the longest prefix of keys[:max_blocks]."""
        hits = []
        for key in keys[:max_blocks]:
            block = self.cached.get(key)
            if block is None:
                break
            hits.append(block)
        return hits

    def register(self, block: int, key: int) -> None:
        """Index a computed full block under its key, unless that prefix is cached elsewhere
        (the same prefix computed twice at once: this copy stays private)."""
        if self.block_hash[block] is None and key not in self.cached:
            self.block_hash[block] = key
            self.cached[key] = block

    def check(self, tables) -> None:
        """The pool's invariants, given every block table that holds its blocks."""
        holders = [0] * self.num_blocks
        for table in tables:
            for b in table:
                holders[b] += 1
        assert holders == self.ref_counts, "a ref count differs from its number of holders"
        in_use = sum(1 for r in self.ref_counts if r > 0)
        assert in_use + self.num_free == self.num_blocks, "free + in use != total"
        free = self.free + list(self.free_cached)
        assert len(set(free)) == len(free), "a block is free twice"
        assert all(self.ref_counts[b] == 0 for b in free), "a held block is in a free list"
        assert all(self.block_hash[b] is None for b in self.free), "a cached block on the stack"
        assert all(self.block_hash[b] is not None for b in self.free_cached), "uncached in LRU"
        for key, b in self.cached.items():
            assert self.block_hash[b] == key, f"cache entry {key} -> block {b} is stale"
        assert sum(h is not None for h in self.block_hash) == len(self.cached)


def check_tables(bm) -> None:
    """A BlockManager's invariants: tables sized to their tokens, private tables really private,
    the pool's counts matching the tables, the host pool accounted for."""
    pool = bm.pool
    for seq_id, table in bm.block_tables.items():
        assert len(table) == bm.num_blocks_for(bm.num_tokens(seq_id)), (
            f"seq {seq_id}: {len(table)} blocks for {bm.num_tokens(seq_id)} tokens")
    pool.check(bm.block_tables.values())
    for seq_id in bm.block_tables.keys() - bm._maybe_shared:
        assert all(pool.ref_counts[b] == 1 and pool.block_hash[b] is None
                   for b in bm.block_tables[seq_id]), f"seq {seq_id}: its table is not private"
    assert bm._num_table_entries == sum(len(t) for t in bm.block_tables.values())
    host_used = sum(len(t) for t in bm._host_tables.values())
    assert host_used + len(pool.host_free) == pool.num_host_blocks, "host pool leaks"
