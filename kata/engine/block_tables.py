"""The sequences' block tables: which physical blocks hold each sequence's tokens, in order.

Token `i` of a sequence lives in slot `table[i // block_size] * block_size + i % block_size`.
This module only keeps the tables and their token counts; the block manager (block_manager.py)
decides what goes in them, taking and releasing blocks from the pool.

    tables = SequenceTables(block_size=4)
    tables.add(seq_id=0, table=[7, 2], num_tokens=6, maybe_shared=False)
    tables.slot_mapping(0, 0, 6, ref_counts)   -> [28, 29, 30, 31, 8, 9]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kata.engine.arith import cdiv


class SequenceTables:
    def __init__(self, block_size: int) -> None:
        self.block_size = block_size
        self._tables: dict[int, list[int]] = {}  # seq_id -> block ids (device)
        self._num_tokens: dict[int, int] = {}  # seq_id -> token slots reserved (device or host)
        # seq_ids whose tables may hold a shared or cached block (cache keys, or a fork); other
        # tables are private and freed without looking at each block (BlockPool.release).
        self._maybe_shared: set[int] = set()
        self.num_entries = 0  # sum of len(table) over device tables

    @property
    def view(self) -> Mapping[int, list[int]]:
        """seq_id -> block table, for sequences on the device. Read-only: do not mutate."""
        return self._tables

    def on_device(self, seq_id: int) -> bool:
        return seq_id in self._tables

    def known(self, seq_id: int) -> bool:
        return seq_id in self._num_tokens

    def is_private(self, seq_id: int) -> bool:
        """No block of its table can be shared or cached (so it is released without looking)."""
        return seq_id not in self._maybe_shared

    def table(self, seq_id: int) -> list[int]:
        """The live table (the manager mutates it; others get copies)."""
        return self._tables[seq_id]

    def num_tokens(self, seq_id: int) -> int:
        return self._num_tokens[seq_id]

    def set_num_tokens(self, seq_id: int, n: int) -> None:
        self._num_tokens[seq_id] = n

    def add(self, seq_id: int, table: list[int], num_tokens: int, maybe_shared: bool) -> None:
        self._tables[seq_id] = table
        self._num_tokens[seq_id] = num_tokens
        self.num_entries += len(table)
        if maybe_shared:
            self._maybe_shared.add(seq_id)

    def grew(self, n: int) -> None:
        """n blocks were appended to some table."""
        self.num_entries += n

    def detach(self, seq_id: int) -> list[int]:
        """The sequence leaves the device (swapped out): its table, its count kept."""
        table = self._tables.pop(seq_id)
        self.num_entries -= len(table)
        return table

    def attach(self, seq_id: int, table: list[int]) -> None:
        """A detached sequence's new device table (swapped back in)."""
        self._tables[seq_id] = table
        self.num_entries += len(table)

    def forget(self, seq_id: int) -> None:
        """The sequence is gone (its table, if any, was detached first)."""
        del self._num_tokens[seq_id]
        self._maybe_shared.discard(seq_id)

    def slot_mapping(self, seq_id: int, start: int, end: int,
                     ref_counts: Sequence[int]) -> list[int]:
        table, bs = self._tables[seq_id], self.block_size
        if not 0 <= start <= end <= self._num_tokens[seq_id]:
            raise ValueError(f"slot_mapping({seq_id}, {start}, {end}): the sequence has "
                             f"{self._num_tokens[seq_id]} slots")
        slots = []
        for i in range(start, end):
            block = table[i // bs]
            assert ref_counts[block] == 1, (
                f"write into shared block {block} (ref count {ref_counts[block]})")
            slots.append(block * bs + i % bs)
        return slots

    def check(self, is_plain_block) -> None:
        """Tables sized to their tokens; private tables hold only plain blocks
        (`is_plain_block(b)`: ref count 1, not cached)."""
        bs = self.block_size
        for seq_id, table in self._tables.items():
            n = self._num_tokens[seq_id]
            assert len(table) == cdiv(n, bs), f"seq {seq_id}: {len(table)} blocks for {n} tokens"
            if seq_id not in self._maybe_shared:
                assert all(map(is_plain_block, table)), f"seq {seq_id}: its table is not private"
        assert self.num_entries == sum(len(t) for t in self._tables.values())
