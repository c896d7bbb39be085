"""Physical KV blocks: reference counts, the free lists, reservations, and eviction from the cache.

Free blocks live in two places. Those with nothing cached sit on a plain stack and are handed out
first. Freed blocks that still hold a cached prefix wait in an LRU queue (an OrderedDict, a doubly
linked list underneath: O(1) pop from the front, push to the back, and removal from the middle
when a cache hit revives one); only when the stack is empty is the least recently used of them
evicted (the prefix index, prefix_cache.py, forgets it).

A *reservation* is a promise of blocks not yet in any table: the simulation's lazy decode tracking
(fastpath.py) grants each step's new blocks in bulk and takes them only when a table must be
exact. Reserved blocks are never handed out to anyone else, so `num_free` leaves them out: the
pool's counts are true at every moment, whoever is looking.

    pool = BlockPool(num_blocks=4)
    pool.take_many(2)          -> [0, 1]     (ref count 1 each)
    pool.reserve(1); pool.num_free -> 1      (2 on the free stack, 1 of them promised)
    pool.release([0, 1])       (ref counts 0, back on the stack)

BlockManager (block_manager.py) keeps the sequences' block tables on top of this.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from kata.engine.prefix_cache import PrefixIndex


class NoFreeBlocksError(RuntimeError):
    """The pool (or the host pool) has too few free blocks for the request."""


class BlockPool:
    def __init__(self, num_blocks: int, index: PrefixIndex | None = None) -> None:
        self.num_blocks = num_blocks
        self.index = index if index is not None else PrefixIndex()
        self.ref_counts = [0] * num_blocks  # block id -> number of block tables holding it
        self.free: list[int] = list(range(num_blocks - 1, -1, -1))  # stack: nothing cached
        self.free_cached: OrderedDict[int, None] = OrderedDict()  # LRU: cached, ref count 0
        self.num_reserved = 0  # promised blocks, not yet in a table (taken from `free` later)

    @property
    def num_free(self) -> int:
        """Blocks anyone may take now: both free lists, less the reserved ones."""
        return len(self.free) + len(self.free_cached) - self.num_reserved

    @property
    def num_uncached_free(self) -> int:
        """Free blocks holding no cached prefix and not reserved: taken before any eviction."""
        return len(self.free) - self.num_reserved

    def take(self) -> int:
        """A free block, ref count 1: an uncached one if any is not reserved, else evict the LRU
        cached one."""
        if len(self.free) > self.num_reserved:
            block = self.free.pop()
        else:
            block, _ = self.free_cached.popitem(last=False)
            self.index.evict(block)
        self.ref_counts[block] = 1
        return block

    def take_many(self, n: int) -> list[int]:
        """n blocks, as n calls of take() would give them (in bulk when no eviction is needed)."""
        free = self.free
        if n > len(free) - self.num_reserved:
            return [self.take() for _ in range(n)]
        blocks = free[len(free) - n:]
        del free[len(free) - n:]
        blocks.reverse()  # the order repeated pops give
        refs = self.ref_counts
        for b in blocks:
            refs[b] = 1
        return blocks

    # --- reservations ------------------------------------------------------------------

    def reserve(self, n: int) -> None:
        """Promise n uncached free blocks (no eviction is ever needed to keep the promise)."""
        if n > self.num_uncached_free:
            raise NoFreeBlocksError(f"reserve: {n} blocks asked, {self.num_uncached_free} free")
        self.num_reserved += n

    def unreserve(self, n: int) -> None:
        """Cancel n promised blocks (their holder left before taking them)."""
        assert 0 <= n <= self.num_reserved, (n, self.num_reserved)
        self.num_reserved -= n

    def take_reserved(self, n: int) -> list[int]:
        """n blocks out of the reservation (they come off the stack, as take_many gives them)."""
        self.unreserve(n)
        return self.take_many(n)

    # --- holders -------------------------------------------------------------------------

    def release(self, table: list[int], private: bool = False) -> None:
        """Drop one holder of each block of `table`; a block nobody holds becomes free.
        `private`: every ref count is 1 and nothing is cached (a fast path)."""
        refs, free = self.ref_counts, self.free
        if private:  # all go onto the stack
            for b in table:
                refs[b] = 0
            free.extend(reversed(table))
            return
        cached = self.index.key
        # Last block first, so a prefix's tail is evicted before its head (heads are shared more).
        for b in reversed(table):
            r = refs[b] = refs[b] - 1
            if not r:
                if b in cached:
                    self.free_cached[b] = None  # most recently used end: evicted last
                else:
                    free.append(b)

    def hold(self, blocks: Iterable[int]) -> None:
        """One more holder of each block (a prefix hit, a fork); an idle one leaves the LRU."""
        for b in blocks:
            if self.ref_counts[b] == 0:
                del self.free_cached[b]  # O(1) removal from the middle of the queue
            self.ref_counts[b] += 1

    def drop_holder(self, block: int) -> None:
        """One holder lets go of a block it shares (copy-on-write); others still hold it."""
        assert self.ref_counts[block] > 1, f"block {block} is not shared"
        self.ref_counts[block] -= 1

    def check(self, tables: Iterable[list[int]]) -> None:
        """The pool's invariants, given every block table that holds its blocks."""
        holders = [0] * self.num_blocks
        for table in tables:
            for b in table:
                holders[b] += 1
        assert holders == self.ref_counts, "a ref count differs from its number of holders"
        in_use = sum(1 for r in self.ref_counts if r > 0)
        assert in_use + self.num_free + self.num_reserved == self.num_blocks, "free + used != total"
        assert 0 <= self.num_reserved <= len(self.free), "a reservation the stack cannot keep"
        free = self.free + list(self.free_cached)
        assert len(set(free)) == len(free), "a block is free twice"
        assert all(self.ref_counts[b] == 0 for b in free), "a held block is in a free list"
        cached = self.index.key
        assert not any(b in cached for b in self.free), "a cached block on the stack"
        assert all(b in cached for b in self.free_cached), "an uncached block in the LRU"
        self.index.check()
