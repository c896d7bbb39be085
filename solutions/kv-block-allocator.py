"""KV-block allocator with prefix sharing: the reference solution.

State, all owned here:
    _free   min-heap of free block ids (the lowest id is always _free[0])
    _refs   list, block id -> reference count (0 = free)
    _tables dict, seq_id -> list of block ids
    _tokens dict, seq_id -> number of tokens

Every method checks all its inputs, and whether enough blocks are free, before it changes anything,
so a call that raises leaves the allocator exactly as it was.

Example:
    a = BlockAllocator(6, 4)
    a.allocate(1, 6) -> [0, 1];  a.fork(1, 2) -> [0, 1];  a.append(2) -> (1, 2)
    a.append(1) -> None (three times: 7, 8, then 9 tokens in new block 3);  a.free(1) -> [1, 3]
"""

from __future__ import annotations

import heapq


class OutOfBlocks(Exception):
    """Raised by allocate and append when too few blocks are free; the call then changes nothing."""


def _check_int(value, name: str, minimum: int) -> None:
    # bool is a subclass of int: `type(...) is int` rejects it, and 2.0, "2", None.
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


class BlockAllocator:
    """A pool of num_blocks KV blocks of block_size tokens each, shared by reference counting."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        _check_int(num_blocks, "num_blocks", 1)
        _check_int(block_size, "block_size", 1)
        self._num_blocks = num_blocks
        self._block_size = block_size
        self._free = list(range(num_blocks))  # ascending, hence already a valid heap
        self._refs = [0] * num_blocks
        self._tables: dict[int, list[int]] = {}
        self._tokens: dict[int, int] = {}

    # --- helpers ---------------------------------------------------------------

    def _live(self, seq_id) -> list[int]:
        """The table of a live sequence (the caller has checked the id's type)."""
        if seq_id not in self._tables:
            raise KeyError(seq_id)
        return self._tables[seq_id]

    def _take(self) -> int:
        block = heapq.heappop(self._free)
        self._refs[block] = 1
        return block

    # --- the four operations ---------------------------------------------------

    def allocate(self, seq_id: int, num_tokens: int) -> list[int]:
        _check_int(seq_id, "seq_id", 0)
        _check_int(num_tokens, "num_tokens", 1)
        if seq_id in self._tables:
            raise ValueError(f"seq_id {seq_id} is already a live sequence")
        need = -(-num_tokens // self._block_size)  # exact ceil, no float
        if need > len(self._free):
            raise OutOfBlocks(f"allocate({seq_id}, {num_tokens}) needs {need} blocks, {len(self._free)} free")
        table = [self._take() for _ in range(need)]
        self._tables[seq_id] = table
        self._tokens[seq_id] = num_tokens
        return list(table)

    def fork(self, parent_id: int, child_id: int) -> list[int]:
        _check_int(parent_id, "parent_id", 0)
        _check_int(child_id, "child_id", 0)
        table = self._live(parent_id)
        if child_id in self._tables:
            raise ValueError(f"child_id {child_id} is already a live sequence")
        for block in table:
            self._refs[block] += 1
        self._tables[child_id] = list(table)  # its own list: the child's appends must not touch the parent
        self._tokens[child_id] = self._tokens[parent_id]
        return list(table)

    def append(self, seq_id: int) -> tuple[int, int] | None:
        _check_int(seq_id, "seq_id", 0)
        table = self._live(seq_id)
        tokens = self._tokens[seq_id]
        last = table[-1]
        full = tokens % self._block_size == 0
        if (full or self._refs[last] > 1) and not self._free:
            raise OutOfBlocks(f"append({seq_id}) needs a block, none is free")
        copied = None
        if full:  # a full block is never written again, shared or not
            table.append(self._take())
        elif self._refs[last] > 1:  # shared and partly filled: copy-on-write
            new = self._take()
            self._refs[last] -= 1  # stays > 0: another sequence still holds it
            table[-1] = new
            copied = (last, new)
        self._tokens[seq_id] = tokens + 1
        return copied

    def free(self, seq_id: int) -> list[int]:
        _check_int(seq_id, "seq_id", 0)
        table = self._live(seq_id)
        freed = []
        for block in table:
            self._refs[block] -= 1
            if self._refs[block] == 0:
                heapq.heappush(self._free, block)
                freed.append(block)
        del self._tables[seq_id], self._tokens[seq_id]
        return freed

    # --- inspection ------------------------------------------------------------

    def block_table(self, seq_id: int) -> list[int]:
        _check_int(seq_id, "seq_id", 0)
        return list(self._live(seq_id))

    def num_tokens(self, seq_id: int) -> int:
        _check_int(seq_id, "seq_id", 0)
        self._live(seq_id)
        return self._tokens[seq_id]

    def ref_count(self, block_id: int) -> int:
        _check_int(block_id, "block_id", 0)
        if block_id >= self._num_blocks:
            raise ValueError(f"block_id must be < num_blocks ({self._num_blocks}), got {block_id}")
        return self._refs[block_id]

    def num_free_blocks(self) -> int:
        return len(self._free)
