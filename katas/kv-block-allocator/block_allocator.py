"""KV-block allocator with prefix sharing: your solution goes here. Read PROMPT.md first.

Standard library only. Blocks are reference-counted: fork shares a sequence's blocks, append copies
a shared block before writing into it (copy-on-write), free returns blocks whose count reaches 0.

Example:
    a = BlockAllocator(num_blocks=6, block_size=4)
    a.allocate(1, 6)   -> [0, 1]
    a.fork(1, 2)       -> [0, 1]      (blocks 0 and 1 now have count 2)
    a.append(2)        -> (1, 2)      (block 1 is shared and not full: copied into block 2)
    a.append(1)        -> None        (block 1 now has count 1: written in place, 7 tokens)
    a.append(1)        -> None        (8 tokens: block 1 is full)
    a.append(1)        -> None        (9 tokens: new block 3; table [0, 1, 3])
    a.free(1)          -> [1, 3]      (block 0 is still held by sequence 2)
"""

from __future__ import annotations


class OutOfBlocks(Exception):
    """Raised by allocate and append when too few blocks are free; the call then changes nothing."""


class BlockAllocator:
    """A pool of num_blocks KV blocks of block_size tokens each, shared by reference counting."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        """Every block starts free. Both arguments are ints >= 1 (not bools); otherwise ValueError
        naming the first bad one (num_blocks before block_size)."""
        # TODO
        raise NotImplementedError

    def allocate(self, seq_id: int, num_tokens: int) -> list[int]:
        """Create sequence seq_id with num_tokens tokens in ceil(num_tokens / block_size) new blocks
        (lowest free ids first). Returns its block table.

        Raises ValueError (seq_id, num_tokens, or seq_id already live), then OutOfBlocks.
        Example: on a fresh BlockAllocator(6, 4), allocate(1, 6) -> [0, 1]
        """
        # TODO
        raise NotImplementedError

    def fork(self, parent_id: int, child_id: int) -> list[int]:
        """Create child_id sharing every block of parent_id (each gains 1 reference) and its token
        count. Returns the child's block table (a new list).

        Raises ValueError (parent_id, child_id types), KeyError (parent not live), then ValueError
        (child_id already live).
        """
        # TODO
        raise NotImplementedError

    def append(self, seq_id: int) -> tuple[int, int] | None:
        """Add one token. Returns (old_block_id, new_block_id) for a copy-on-write, else None.

        Full last block: a new block is appended (None). Not full, count 1: written in place (None).
        Not full, shared: a new block replaces it in this table, old loses a reference (old, new).
        Raises ValueError (seq_id type), KeyError (not live), OutOfBlocks (no free block needed).
        """
        # TODO
        raise NotImplementedError

    def free(self, seq_id: int) -> list[int]:
        """End the sequence. Returns the blocks whose count reached 0, in block-table order.

        Raises ValueError naming seq_id (not an int >= 0), then KeyError (not live)."""
        # TODO
        raise NotImplementedError

    # --- inspection: these change nothing ----------------------------------------

    def block_table(self, seq_id: int) -> list[int]:
        """A new list of the sequence's block ids, in order.

        Raises ValueError naming seq_id (not an int >= 0), then KeyError (not live)."""
        # TODO
        raise NotImplementedError

    def num_tokens(self, seq_id: int) -> int:
        """The sequence's number of tokens.

        Raises ValueError naming seq_id (not an int >= 0), then KeyError (not live)."""
        # TODO
        raise NotImplementedError

    def ref_count(self, block_id: int) -> int:
        """How many live sequences hold the block (0 if free). ValueError naming block_id if it is
        not an int in 0 .. num_blocks - 1."""
        # TODO
        raise NotImplementedError

    def num_free_blocks(self) -> int:
        """The number of blocks whose reference count is 0."""
        # TODO
        raise NotImplementedError
