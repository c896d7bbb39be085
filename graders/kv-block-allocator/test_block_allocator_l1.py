"""Hidden suite, level 1: allocate, fork, copy-on-write append, free, inspection and invalid input.

Each test states one rule of PROMPT.md. `state(a, ids)` reads an allocator through its inspection
methods so that a call that must change nothing can be compared before and after.
"""

import pytest
from block_allocator_oracle import check, snapshot

from kata.checks import check_raises, graded

BAD_TYPES = [True, 2.0, "2", None]
BAD_IDS = [-1, True, 1.0, "1", None]


def _state(a, ids, n):
    return snapshot(a, ids, n)


# --- constructor -----------------------------------------------------------------


@graded(1, 2, "a new pool has every block free, with count 0")
def test_new_pool_all_free(impl):
    a = impl.BlockAllocator(5, 3)
    got = (a.num_free_blocks(), [a.ref_count(b) for b in range(5)])
    check(got, (5, [0, 0, 0, 0, 0]), "BlockAllocator(5, 3), then num_free_blocks() and ref_count(0..4)")


@graded(1, 1, "num_blocks below 1 or not an int (bool, float, str, None) raises ValueError naming num_blocks")
@pytest.mark.parametrize("bad", [0, -2, *BAD_TYPES])
def test_num_blocks_invalid(impl, bad):
    check_raises(lambda: impl.BlockAllocator(bad, 4), "num_blocks", f"BlockAllocator({bad!r}, 4)", anywhere=True)


@graded(1, 1, "block_size below 1 or not an int (bool, float, str, None) raises ValueError naming block_size")
@pytest.mark.parametrize("bad", [0, -2, *BAD_TYPES])
def test_block_size_invalid(impl, bad):
    check_raises(lambda: impl.BlockAllocator(4, bad), "block_size", f"BlockAllocator(4, {bad!r})", anywhere=True)


@graded(1, 1, "both constructor arguments invalid: num_blocks is named (signature order)")
def test_constructor_order(impl):
    check_raises(lambda: impl.BlockAllocator(0, True), "num_blocks", "BlockAllocator(0, True)", anywhere=True)


# --- allocate --------------------------------------------------------------------


@graded(1, 2, "a token count that is an exact multiple of block_size takes exactly that many blocks, no extra")
def test_allocate_exact_multiple(impl):
    a = impl.BlockAllocator(5, 4)
    check(a.allocate(1, 8), [0, 1], "allocate(1, 8) with block_size 4")
    check(a.num_free_blocks(), 3, "num_free_blocks() after allocate(1, 8) of 5 blocks")


@graded(1, 2, "one token past a multiple of block_size takes one more block (ceil)")
def test_allocate_rounds_up(impl):
    a = impl.BlockAllocator(5, 4)
    check(a.allocate(1, 9), [0, 1, 2], "allocate(1, 9) with block_size 4")
    check(a.allocate(2, 1), [3], "allocate(2, 1) after it")


@graded(1, 2, "new blocks are the lowest free ids, even after frees left holes")
def test_allocate_lowest_free_ids(impl):
    a = impl.BlockAllocator(8, 1)
    a.allocate(1, 1)   # [0]
    a.allocate(2, 2)   # [1, 2]
    a.allocate(3, 1)   # [3]
    a.allocate(4, 2)   # [4, 5]
    a.free(4)
    a.free(2)
    check(a.allocate(5, 3), [1, 2, 4], "allocate(5, 3) with blocks 1, 2, 4, 5, 6, 7 free")


@graded(1, 3, "allocate needing more blocks than are free raises OutOfBlocks and takes none")
def test_allocate_out_of_blocks_changes_nothing(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 3)
    before = _state(a, [1], 4)
    check_raises(lambda: a.allocate(2, 5), None, "allocate(2, 5) with 2 of 4 blocks free", kind=impl.OutOfBlocks)
    check(_state(a, [1], 4), before, "inspection after the failed allocate(2, 5)")
    check_raises(lambda: a.num_tokens(2), None, "num_tokens(2) after the failed allocate", kind=KeyError)


@graded(1, 2, "allocate needing exactly the free blocks succeeds and leaves 0 free")
def test_allocate_exactly_all_free(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 3)
    check(a.allocate(2, 4), [2, 3], "allocate(2, 4) with exactly 2 blocks free")
    check(a.num_free_blocks(), 0, "num_free_blocks() after the pool is full")


@graded(1, 2, "allocate of a live seq_id raises ValueError naming seq_id and changes nothing")
def test_allocate_duplicate(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 2)
    before = _state(a, [1], 4)
    check_raises(lambda: a.allocate(1, 1), "seq_id", "allocate(1, 1) with 1 live", anywhere=True)
    check(_state(a, [1], 4), before, "inspection after the refused allocate(1, 1)")


@graded(1, 1, "allocate's seq_id negative or not an int raises ValueError naming seq_id")
@pytest.mark.parametrize("bad", BAD_IDS)
def test_allocate_bad_seq_id(impl, bad):
    a = impl.BlockAllocator(4, 2)
    check_raises(lambda: a.allocate(bad, 1), "seq_id", f"allocate({bad!r}, 1)", anywhere=True)
    check(a.num_free_blocks(), 4, f"num_free_blocks() after the refused allocate({bad!r}, 1)")


@graded(1, 1, "num_tokens below 1 or not an int raises ValueError naming num_tokens")
@pytest.mark.parametrize("bad", [0, -3, *BAD_TYPES])
def test_allocate_bad_num_tokens(impl, bad):
    a = impl.BlockAllocator(4, 2)
    check_raises(lambda: a.allocate(1, bad), "num_tokens", f"allocate(1, {bad!r})", anywhere=True)
    check(a.num_free_blocks(), 4, f"num_free_blocks() after the refused allocate(1, {bad!r})")


@graded(1, 1, "seq_id and num_tokens both invalid: seq_id is named")
def test_allocate_order_seq_then_tokens(impl):
    a = impl.BlockAllocator(4, 2)
    check_raises(lambda: a.allocate(-1, 0), "seq_id", "allocate(-1, 0)", anywhere=True)


@graded(1, 2, "a live seq_id with an invalid num_tokens: num_tokens is named (ranges before liveness)")
def test_allocate_order_tokens_before_duplicate(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 1)
    check_raises(lambda: a.allocate(1, 0), "num_tokens", "allocate(1, 0) with 1 live", anywhere=True)


@graded(1, 2, "a live seq_id asking for more blocks than are free: ValueError, not OutOfBlocks")
def test_allocate_order_duplicate_before_out_of_blocks(impl):
    a = impl.BlockAllocator(2, 1)
    a.allocate(1, 1)
    check_raises(lambda: a.allocate(1, 9), "seq_id", "allocate(1, 9) with 1 live and 1 block free", anywhere=True)


@graded(1, 2, "block counts past 2**53 are exact: ceil(2**60 + 1, 2**60) is 2 blocks (a float says 1)")
def test_allocate_exact_integers(impl):
    a = impl.BlockAllocator(2, 2**60)
    check(a.allocate(1, 2**60 + 1), [0, 1], "allocate(1, 2**60 + 1) with block_size 2**60")
    check(a.num_free_blocks(), 0, "num_free_blocks() after it")


@graded(1, 1, "an enormous num_tokens raises OutOfBlocks (no float overflow, no huge list)")
def test_allocate_enormous(impl):
    a = impl.BlockAllocator(3, 1)
    check_raises(lambda: a.allocate(1, 10**30), None, "allocate(1, 10**30) on 3 blocks", kind=impl.OutOfBlocks)
    check(a.num_free_blocks(), 3, "num_free_blocks() after it")


@graded(1, 1, "the list allocate returns is the caller's: changing it changes nothing inside")
def test_allocate_returns_a_copy(impl):
    a = impl.BlockAllocator(4, 2)
    got = a.allocate(1, 3)
    got.append(99)
    got[0] = 42
    check(a.block_table(1), [0, 1], "block_table(1) after the caller changed allocate's list")


@graded(1, 1, "a freed seq_id may be allocated again")
def test_seq_id_reused_after_free(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 2)
    a.free(1)
    check(a.allocate(1, 3), [0, 1], "allocate(1, 3) after free(1)")
    check(a.num_tokens(1), 3, "num_tokens(1)")
