"""Block manager: unit cases, then a hypothesis state machine that checks the invariants and the
contents a reader would see (an emulated KV store) after every operation."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kata.engine.block_manager import ROOT_KEY, BlockManager, NoFreeBlocksError, hash_block


def test_allocate_append_free_round_trip():
    bm = BlockManager(num_blocks=8, block_size=4)
    assert bm.allocate(0, num_tokens=6) == 0
    assert bm.block_table(0) == [0, 1]
    assert bm.num_free_blocks == 6 and bm.num_used_blocks == 2
    assert bm.append(0) == [] and bm.block_table(0) == [0, 1]  # 7 tokens still fit in 2 blocks
    assert bm.slot_mapping(0, 4, 7) == [4, 5, 6]
    bm.append(0, 2)  # 9 tokens -> 3 blocks
    assert len(bm.block_table(0)) == 3 and bm.num_tokens(0) == 9
    bm.free(0)
    assert bm.num_free_blocks == 8
    bm.check_invariants()


def test_allocate_fails_cleanly_when_pool_is_short():
    bm = BlockManager(num_blocks=2, block_size=4)
    assert not bm.can_allocate(9)
    with pytest.raises(NoFreeBlocksError):
        bm.allocate(0, 9)
    assert bm.num_free_blocks == 2 and not bm.has_seq(0)
    bm.allocate(0, 8)
    assert not bm.can_append(0)
    with pytest.raises(NoFreeBlocksError):
        bm.append(0)
    assert bm.num_tokens(0) == 8
    bm.check_invariants()


def test_unknown_or_duplicate_seq_ids_are_refused():
    bm = BlockManager(num_blocks=4, block_size=4)
    bm.allocate(1, 3)
    with pytest.raises(ValueError, match="already has blocks"):
        bm.allocate(1, 3)
    with pytest.raises(KeyError, match="seq_id 9 has no blocks"):
        bm.append(9)
    with pytest.raises(ValueError):
        BlockManager(num_blocks=0, block_size=4)


def test_fork_shares_blocks_and_copies_on_first_write():
    bm = BlockManager(num_blocks=8, block_size=4)
    bm.allocate(0, 6)  # blocks [0, 1]; block 1 holds 2 of 4 tokens
    bm.fork(0, 1)
    assert bm.block_table(1) == [0, 1] and bm.ref_count(0) == 2 and bm.ref_count(1) == 2
    with pytest.raises(AssertionError, match="shared block"):
        bm.slot_mapping(1, 5, 6)  # a write into a shared block is refused
    assert bm.can_append(1)
    copies = bm.append(1)  # the child writes token 7 into the shared partial block: copy first
    assert copies == [(1, copies[0][1])] and bm.block_table(1) == [0, copies[0][1]]
    assert bm.ref_count(1) == 1 and bm.ref_count(0) == 2
    assert bm.append(0) == []  # the parent is now the sole owner of block 1: no copy
    bm.check_invariants()


def test_fork_with_full_last_block_needs_no_copy():
    bm = BlockManager(num_blocks=8, block_size=4)
    bm.allocate(0, 8)
    bm.fork(0, 1)
    assert bm.append(1) == [] and bm.block_table(1)[:2] == bm.block_table(0)
    bm.check_invariants()


def test_prefix_cache_hit_after_compute_and_last_token_recomputed():
    bm = BlockManager(num_blocks=8, block_size=4)
    prompt = list(range(10))  # 2 full blocks + 2 tokens
    assert bm.allocate(0, 10, prompt) == 0
    assert bm.allocate(1, 10, prompt) == 0  # nothing is computed yet: no hits
    bm.mark_computed(0, 10)
    assert bm.allocate(2, 10, prompt) == 8
    assert bm.block_table(2)[:2] == bm.block_table(0)[:2]
    assert bm.ref_count(bm.block_table(0)[0]) == 2
    # A prompt of exactly 2 full blocks hits only the first: its last token is recomputed.
    assert bm.allocate(3, 8, prompt[:8]) == 4
    assert bm.num_cache_hit_tokens == 12 and bm.num_cache_query_tokens == 38
    bm.check_invariants()


def test_hash_chain_names_the_whole_prefix():
    bm = BlockManager(num_blocks=8, block_size=2)
    bm.allocate(0, 5, [1, 2, 3, 4, 9])
    bm.mark_computed(0, 5)
    # Same second block, different first block: no hit at all.
    assert bm.allocate(1, 5, [7, 7, 3, 4, 9]) == 0
    assert hash_block(hash_block(ROOT_KEY, [1, 2]), [3, 4]) != hash_block(
        hash_block(ROOT_KEY, [7, 7]), [3, 4])
    assert len(hash_block(ROOT_KEY, [1, 2])) == 32  # a SHA-256 digest
    assert hash_block(ROOT_KEY, [1, 2], "a") != hash_block(ROOT_KEY, [1, 2], "b")


def test_freed_cached_blocks_stay_reusable_until_evicted_lru():
    bm = BlockManager(num_blocks=4, block_size=2)
    bm.allocate(0, 5, [1, 1, 2, 2, 3])  # 3 blocks
    bm.mark_computed(0, 5)
    bm.free(0)
    assert bm.num_free_blocks == 4
    assert bm.allocate(1, 5, [1, 1, 2, 2, 3]) == 4  # both full blocks come back from the free queue
    bm.free(1)
    # 3 fresh blocks: the uncached ones go first, then the LRU cached tail [2, 2]; head survives.
    bm.allocate(2, 6, [5, 5, 6, 6, 7, 7])
    bm.free(2)
    assert bm.allocate(3, 5, [1, 1, 2, 2, 3]) == 2  # [1, 1] hit, [2, 2] was evicted
    bm.check_invariants()


def test_prefix_caching_disabled_never_hits():
    bm = BlockManager(num_blocks=8, block_size=2, enable_prefix_caching=False)
    bm.allocate(0, 5, [1, 1, 2, 2, 3])
    bm.mark_computed(0, 5)
    assert bm.allocate(1, 5, [1, 1, 2, 2, 3]) == 0


def test_swap_out_and_in_round_trip():
    bm = BlockManager(num_blocks=4, block_size=2, num_host_blocks=3)
    bm.allocate(0, 5)
    assert bm.can_swap_out(0)
    out = bm.swap_out(0)
    assert [d for d, _ in out] == [0, 1, 2] and bm.num_free_blocks == 4
    assert bm.is_swapped(0) and bm.num_free_host_blocks == 0
    bm.allocate(1, 4)
    assert not bm.can_swap_in(0)
    bm.free(1)
    back = bm.swap_in(0)
    assert [h for h, _ in back] == [h for _, h in out] and bm.num_free_host_blocks == 3
    assert bm.num_tokens(0) == 5
    bm.check_invariants()
    bm.allocate(2, 2)
    assert not bm.can_swap_out(2) or bm.num_free_host_blocks >= 1


# --- the state machine -----------------------------------------------------------

BLOCK_SIZE, NUM_BLOCKS, NUM_HOST_BLOCKS = 2, 10, 6
tokens = st.lists(st.integers(0, 1), min_size=1, max_size=9)  # tiny alphabet: prefixes collide


class BlockManagerMachine(RuleBasedStateMachine):
    """Drives the manager like an engine would, with an emulated KV store.

    Each slot of the store holds the tuple of token ids up to and including the token written
    there, so a reader can tell whether a block holds the right prefix. After every step: the
    manager's own invariants hold, and every computed token of every sequence reads back the right
    prefix (prefix hits, copy-on-write and swaps all deliver the correct contents).
    """

    bm_options: dict = {}

    def __init__(self):
        super().__init__()
        self.bm = BlockManager(NUM_BLOCKS, BLOCK_SIZE, num_host_blocks=NUM_HOST_BLOCKS,
                               **self.bm_options)
        self.salts: dict[int, str | None] = {}  # seq_id -> its tenant
        self.kv: dict[int, tuple] = {}  # device slot -> prefix tuple
        self.host_kv: dict[int, tuple] = {}  # host slot -> prefix tuple
        self.seqs: dict[int, list[int]] = {}  # seq_id -> all its token ids (model)
        self.computed: dict[int, int] = {}  # seq_id -> num computed tokens (model)
        self.swapped: set[int] = set()
        self.next_id = 0

    def _write(self, seq_id, start, end):
        toks = self.seqs[seq_id]
        for pos, slot in zip(range(start, end), self.bm.slot_mapping(seq_id, start, end), strict=True):
            self.kv[slot] = (self.salts[seq_id], *toks[:pos + 1])  # asserts ref count == 1

    def _copy_blocks(self, pairs, src_store, dst_store):
        for src, dst in pairs:
            for i in range(BLOCK_SIZE):
                if src * BLOCK_SIZE + i in src_store:
                    dst_store[dst * BLOCK_SIZE + i] = src_store[src * BLOCK_SIZE + i]
                else:
                    dst_store.pop(dst * BLOCK_SIZE + i, None)

    def _pick(self, data, pool):
        return data.draw(st.sampled_from(sorted(pool)))

    def _device(self):
        return [s for s in self.seqs if s not in self.swapped]

    @rule(token_ids=tokens, salt=st.sampled_from([None, "tenant-a"]))
    def allocate(self, token_ids, salt):
        seq_id, self.next_id = self.next_id, self.next_id + 1
        free_before = self.bm.num_free_blocks
        if not self.bm.can_allocate(len(token_ids), token_ids, salt):
            with pytest.raises(NoFreeBlocksError):
                self.bm.allocate(seq_id, len(token_ids), token_ids, salt)
            assert self.bm.num_free_blocks == free_before and not self.bm.has_seq(seq_id)
            return
        cached = self.bm.allocate(seq_id, len(token_ids), token_ids, salt)
        self.salts[seq_id] = salt
        assert cached % BLOCK_SIZE == 0 and cached < len(token_ids)
        self.seqs[seq_id], self.computed[seq_id] = list(token_ids), cached

    @precondition(lambda self: any(self.computed[s] < len(self.seqs[s]) for s in self._device()))
    @rule(data=st.data(), chunk=st.integers(1, 5))
    def compute_chunk(self, data, chunk):
        seq_id = self._pick(data, [s for s in self._device()
                                   if self.computed[s] < len(self.seqs[s])])
        start = self.computed[seq_id]
        end = min(start + chunk, len(self.seqs[seq_id]))
        self._write(seq_id, start, end)
        self.computed[seq_id] = end
        self.bm.mark_computed(seq_id, end)

    @precondition(lambda self: any(self.computed[s] == len(self.seqs[s]) for s in self._device()))
    @rule(data=st.data(), new_tokens=tokens)
    def append(self, data, new_tokens):
        seq_id = self._pick(data, [s for s in self._device()
                                   if self.computed[s] == len(self.seqs[s])])
        k = len(new_tokens) % 4 + 1
        if not self.bm.can_append(seq_id, k):
            with pytest.raises(NoFreeBlocksError):
                self.bm.append(seq_id, k)
            return
        self._copy_blocks(self.bm.append(seq_id, k), self.kv, self.kv)
        start = len(self.seqs[seq_id])
        self.seqs[seq_id] += (new_tokens * 4)[:k]
        self._write(seq_id, start, start + k)
        self.computed[seq_id] = start + k

    @precondition(lambda self: any(self.computed[s] == len(self.seqs[s]) for s in self._device()))
    @rule(data=st.data())
    def fork(self, data):
        parent = self._pick(data, [s for s in self._device()
                                   if self.computed[s] == len(self.seqs[s])])
        child, self.next_id = self.next_id, self.next_id + 1
        self.bm.fork(parent, child)
        self.seqs[child], self.computed[child] = list(self.seqs[parent]), self.computed[parent]
        self.salts[child] = self.salts[parent]

    @precondition(lambda self: self.seqs)
    @rule(data=st.data())
    def free(self, data):
        seq_id = self._pick(data, self.seqs)
        self.bm.free(seq_id)
        del self.seqs[seq_id], self.computed[seq_id]
        self.swapped.discard(seq_id)

    @precondition(lambda self: any(self.computed[s] == len(self.seqs[s]) for s in self._device()))
    @rule(data=st.data())
    def swap_out(self, data):
        seq_id = self._pick(data, [s for s in self._device()
                                   if self.computed[s] == len(self.seqs[s])])
        if not self.bm.can_swap_out(seq_id):
            with pytest.raises(NoFreeBlocksError):
                self.bm.swap_out(seq_id)
            return
        self._copy_blocks(self.bm.swap_out(seq_id), self.kv, self.host_kv)
        self.swapped.add(seq_id)

    @precondition(lambda self: self.swapped)
    @rule(data=st.data())
    def swap_in(self, data):
        seq_id = self._pick(data, self.swapped)
        if not self.bm.can_swap_in(seq_id):
            with pytest.raises(NoFreeBlocksError):
                self.bm.swap_in(seq_id)
            return
        self._copy_blocks(self.bm.swap_in(seq_id), self.host_kv, self.kv)
        self.swapped.discard(seq_id)

    @invariant()
    def pool_is_consistent(self):
        self.bm.check_invariants()  # free + in use = total; ref count = number of holders
        in_tables = {b for t in self.bm.block_tables.values() for b in t}
        assert self.bm.num_used_blocks == len(in_tables)

    @invariant()
    def every_computed_token_reads_back_its_prefix(self):
        for seq_id in self._device():
            table, toks = self.bm.block_tables[seq_id], self.seqs[seq_id]
            for pos in range(self.computed[seq_id]):
                slot = table[pos // BLOCK_SIZE] * BLOCK_SIZE + pos % BLOCK_SIZE
                assert self.kv.get(slot) == (self.salts[seq_id], *toks[:pos + 1]), (seq_id, pos)


TestBlockManagerMachine = BlockManagerMachine.TestCase
TestBlockManagerMachine.settings = settings(
    max_examples=100, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def collide(data: bytes) -> bytes:
    """A hash function under which every block of every prefix and tenant collides."""
    return b"collision"


class CollidingBlockManagerMachine(BlockManagerMachine):
    """The same machine with every prefix-cache key forced equal: hits are verified against the
    blocks' tokens, parents and tenants, so every computed token still reads back its own prefix
    (no block is shared that should not be)."""

    bm_options = {"hash_fn": collide}


TestCollidingBlockManagerMachine = CollidingBlockManagerMachine.TestCase
TestCollidingBlockManagerMachine.settings = settings(
    max_examples=50, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def test_forced_hash_collisions_share_no_block():
    bm = BlockManager(num_blocks=16, block_size=2, hash_fn=collide)
    bm.allocate(0, 5, [1, 2, 3, 4, 9])
    bm.mark_computed(0, 5)
    assert bm.allocate(1, 5, [7, 7, 3, 4, 9]) == 0  # same key for block 0: tokens differ
    assert bm.allocate(2, 5, [1, 2, 3, 4, 9], cache_salt="other tenant") == 0
    # A genuine hit is still found (block [3, 4]'s key is taken by block [1, 2]: a collision,
    # so the chain stops there and costs a hit, but shares nothing).
    assert bm.allocate(3, 5, [1, 2, 3, 4, 9]) == 2
    bm.mark_computed(1, 5)  # [7, 7] collides with the cached [1, 2]: it stays private
    assert bm.allocate(4, 5, [7, 7, 3, 4, 9]) == 0
    shared = [b for b in range(16) if bm.ref_count(b) > 1]
    assert shared == [bm.block_table(0)[0]] == [bm.block_table(3)[0]]
    bm.check_invariants()
