"""Swap: preempted sequences' blocks move to a bounded host pool (emulated CPU memory) and back.

`SwapSpace` owns the host side: which host blocks are free and which swapped-out sequence holds
which. `Swapper` moves a sequence between the device pool and the host pool through the public
methods of the block pool, the sequence tables and the prefix cache, and returns the (from, to)
block pairs the KV cache copies. BlockManager.swap_out / swap_in are its front door.

    space = SwapSpace(num_host_blocks=4)
    space.store(seq_id=0, num_blocks=2)   -> [0, 1]    (host blocks now holding seq 0)
    space.num_free                        -> 2
    space.load(0)                         -> [0, 1]    (seq 0 leaves the host; blocks free again)
"""

from __future__ import annotations

from kata.engine.block_pool import BlockPool, NoFreeBlocksError
from kata.engine.block_tables import SequenceTables
from kata.engine.prefix_cache import PrefixCache


class SwapSpace:
    def __init__(self, num_host_blocks: int) -> None:
        self.num_host_blocks = num_host_blocks
        self._free = list(range(num_host_blocks - 1, -1, -1))  # stack of host block ids
        self._tables: dict[int, list[int]] = {}  # swapped-out seq_id -> host block ids

    @property
    def num_free(self) -> int:
        return len(self._free)

    def holds(self, seq_id: int) -> bool:
        return seq_id in self._tables

    def table(self, seq_id: int) -> list[int]:
        """The host blocks of a swapped-out sequence (a copy)."""
        try:
            return list(self._tables[seq_id])
        except KeyError:
            raise KeyError(f"seq_id {seq_id} is not swapped out") from None

    def store(self, seq_id: int, num_blocks: int) -> list[int]:
        """Host blocks for a sequence's num_blocks device blocks."""
        if num_blocks > len(self._free):
            raise NoFreeBlocksError(f"swap_out: seq {seq_id} needs {num_blocks} host blocks, "
                                    f"{len(self._free)} free")
        host = [self._free.pop() for _ in range(num_blocks)]
        self._tables[seq_id] = host
        return host

    def load(self, seq_id: int) -> list[int]:
        """The sequence leaves the host pool: its host blocks (to copy from) are free again."""
        host = self.table(seq_id)
        self.drop(seq_id)
        return host

    def drop(self, seq_id: int) -> None:
        self._free.extend(reversed(self._tables.pop(seq_id)))

    def check(self) -> None:
        used = [b for t in self._tables.values() for b in t]
        assert len(used) + len(self._free) == self.num_host_blocks, "host pool leaks"
        assert len(set(used + self._free)) == self.num_host_blocks, "a host block is held twice"


class Swapper:
    def __init__(self, pool: BlockPool, seqs: SequenceTables, cache: PrefixCache,
                 space: SwapSpace) -> None:
        self.pool, self.seqs, self.cache, self.space = pool, seqs, cache, space

    def swap_out(self, seq_id: int, table: list[int]) -> list[tuple[int, int]]:
        """[(device_block, host_block)]; the device blocks are released (cached ones stay)."""
        host = self.space.store(seq_id, len(table))  # raises NoFreeBlocksError if short
        self.pool.release(self.seqs.detach(seq_id), self.seqs.is_private(seq_id))
        return list(zip(table, host, strict=True))

    def swap_in(self, seq_id: int) -> list[tuple[int, int]]:
        """[(host_block, device_block)]: fresh device blocks, its computed ones indexed again."""
        num_blocks = len(self.space.table(seq_id))
        if num_blocks > self.pool.num_free:
            raise NoFreeBlocksError(f"swap_in: seq {seq_id} needs {num_blocks} blocks, "
                                    f"{self.pool.num_free} free")
        host = self.space.load(seq_id)
        table = [self.pool.take() for _ in host]
        self.seqs.attach(seq_id, table)
        num_indexed = self.cache.restart(seq_id)
        self.cache.register(seq_id, table, self.seqs.block_size, num_indexed * self.seqs.block_size)
        return list(zip(host, table, strict=True))
