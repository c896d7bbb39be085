"""BlockLedger: the memory a replayed schedule actually uses, held by the engine's block manager.

The replay (token_batcher_replay.py) tells the ledger, request by request, how many tokens each
running request has in its cache; the ledger makes the reference engine's `BlockManager` hold
exactly those blocks (allocate on the first token, append as it grows, free on preemption or
finish). `used` is then what the block manager says is in use, not what the candidate claims.

Mapping onto the engine's public API (kata/engine/block_manager.py), used as is:
    request id (str)        -> seq_id (int), numbered in order of first appearance
    grow(rid, tokens)       -> allocate(seq_id, tokens) the first time, append(seq_id, n) after
    free(rid)               -> free(seq_id)
    used                    -> num_used_blocks
Prefix caching is off (the kata's requests have no token ids), so every block is private.

A schedule that needs more blocks than exist makes the block manager raise NoFreeBlocksError.
The ledger then records the overflow and goes on counting blocks itself (ceil(tokens /
block_size) per request), so the replay still finishes and can say by how much memory was
exceeded; the replay's memory test fails on it.
"""

from __future__ import annotations

from kata.engine.block_manager import BlockManager, NoFreeBlocksError


class BlockLedger:
    def __init__(self, num_blocks: int, block_size: int):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.manager: BlockManager | None = BlockManager(num_blocks, block_size,
                                                         enable_prefix_caching=False)
        self.tokens: dict[str, int] = {}  # request id -> tokens it holds blocks for
        self.seq_ids: dict[str, int] = {}  # request id -> engine seq_id
        self.overflow: str | None = None  # the first allocation the pool refused

    def _seq(self, rid: str) -> int:
        if rid not in self.seq_ids:
            self.seq_ids[rid] = len(self.seq_ids)
        return self.seq_ids[rid]

    def grow(self, rid: str, tokens: int) -> None:
        """Request `rid` now has `tokens` tokens in its cache (never fewer than before)."""
        have = self.tokens.get(rid, 0)
        if tokens <= have:
            return
        self.tokens[rid] = tokens
        if self.manager is None:
            return
        seq = self._seq(rid)
        try:
            if have == 0:
                self.manager.allocate(seq, tokens)
            else:
                self.manager.append(seq, tokens - have)
        except NoFreeBlocksError as exc:
            self.overflow = f"the block manager refused request {rid!r}: {exc}"
            self.manager = None  # from here on, count blocks ourselves

    def free(self, rid: str) -> None:
        had = self.tokens.pop(rid, 0)
        if self.manager is not None and had > 0:
            self.manager.free(self._seq(rid))

    @property
    def used(self) -> int:
        if self.manager is not None:
            return self.manager.num_used_blocks
        return sum(-(-t // self.block_size) for t in self.tokens.values())

    def problem(self) -> str | None:
        """The block manager's complaint, if the schedule ever asked it for too many blocks."""
        if self.manager is not None:
            self.manager.check_invariants()
        return self.overflow
