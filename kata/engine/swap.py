"""Swap: a preempted sequence's blocks move to a bounded host pool (emulated CPU memory) and
come back later into fresh device blocks, instead of being recomputed.

    bm = BlockManager(num_blocks=8, block_size=4, num_host_blocks=8)
    bm.allocate(0, 6); bm.swap_out(0)  -> [(0, 0), (1, 1)]   (device block, host block) copies
    bm.swap_in(0)                      -> [(0, 0), (1, 1)]   (host block, device block) copies

A mixin of BlockManager: it works on the manager's tables and its pool's host stack.
"""

from __future__ import annotations

from kata.engine.block_pool import NoFreeBlocksError


class SwapMixin:
    @property
    def num_free_host_blocks(self) -> int:
        return len(self.pool.host_free)

    def is_swapped(self, seq_id: int) -> bool:
        return seq_id in self._host_tables

    def can_swap_out(self, seq_id: int) -> bool:
        return len(self._table(seq_id)) <= len(self.pool.host_free)

    def swap_out(self, seq_id: int) -> list[tuple[int, int]]:
        """Move the sequence's blocks to the host pool. Returns [(device_block, host_block)]:
        the KV cache copies those before the device blocks are reused."""
        table, host_free = self._table(seq_id), self.pool.host_free
        if len(table) > len(host_free):
            raise NoFreeBlocksError(f"swap_out: seq {seq_id} needs {len(table)} host blocks, "
                                    f"{len(host_free)} free")
        host = [host_free.pop() for _ in table]
        self.pool.release(table, seq_id not in self._maybe_shared)
        del self._tables[seq_id]
        self._num_table_entries -= len(table)
        self._host_tables[seq_id] = host
        return list(zip(table, host))

    def can_swap_in(self, seq_id: int) -> bool:
        return len(self._host_table(seq_id)) <= self.num_free_blocks

    def swap_in(self, seq_id: int) -> list[tuple[int, int]]:
        """Bring a swapped-out sequence back into fresh device blocks. Returns
        [(host_block, device_block)] for the KV cache to copy."""
        host = self._host_table(seq_id)
        if len(host) > self.num_free_blocks:
            raise NoFreeBlocksError(f"swap_in: seq {seq_id} needs {len(host)} blocks, "
                                    f"{self.num_free_blocks} free")
        table = [self.pool.take() for _ in host]
        del self._host_tables[seq_id]
        self.pool.host_free.extend(reversed(host))
        self._tables[seq_id] = table
        self._num_table_entries += len(table)
        num_computed_blocks, self._num_registered[seq_id] = self._num_registered[seq_id], 0
        self.mark_computed(seq_id, num_computed_blocks * self.block_size)  # re-register
        return list(zip(host, table))

    def _host_table(self, seq_id: int) -> list[int]:
        try:
            return self._host_tables[seq_id]
        except KeyError:
            raise KeyError(f"seq_id {seq_id} is not swapped out") from None
