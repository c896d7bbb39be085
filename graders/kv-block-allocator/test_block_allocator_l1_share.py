"""Hidden suite, level 1: fork, copy-on-write append, free and inspection."""

import pytest
from block_allocator_oracle import check, snapshot

from kata.checks import check_raises, graded

BAD_IDS = [-1, True, 1.0, "1", None]


def _pool(impl, num_blocks=8, block_size=4):
    return impl.BlockAllocator(num_blocks, block_size)


# --- fork ------------------------------------------------------------------------


@graded(1, 3, "fork shares every block (count + 1), copies the token count and takes no block")
def test_fork_shares(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    check(a.fork(1, 2), [0, 1], "fork(1, 2) of [0, 1]")
    check((a.ref_count(0), a.ref_count(1), a.num_tokens(2), a.num_free_blocks()), (2, 2, 6, 6),
          "(ref_count(0), ref_count(1), num_tokens(2), num_free_blocks()) after fork(1, 2)")


@graded(1, 2, "a fork of a fork: three sequences hold the blocks (count 3)")
def test_fork_of_fork(impl):
    a = _pool(impl)
    a.allocate(1, 5)
    a.fork(1, 2)
    a.fork(2, 3)
    check([a.ref_count(b) for b in range(3)], [3, 3, 0], "ref_count(0..2) after fork(1, 2), fork(2, 3)")


@graded(1, 2, "fork needs no free block: it succeeds with the pool full")
def test_fork_with_pool_full(impl):
    a = impl.BlockAllocator(2, 4)
    a.allocate(1, 8)
    check(a.fork(1, 2), [0, 1], "fork(1, 2) with 0 blocks free")


@graded(1, 2, "the child's table is its own list: the child's appends never change the parent's table")
def test_fork_child_own_table(impl):
    a = _pool(impl, 8, 2)
    a.allocate(1, 2)       # [0], full
    a.fork(1, 2)
    a.append(2)            # new block for the child only
    a.append(2)
    a.append(2)            # child: [0, 1, 2]
    check((a.block_table(1), a.num_tokens(1)), ([0], 2), "parent (block_table(1), num_tokens(1)) after the child appended")
    check(a.block_table(2), [0, 1, 2], "block_table(2)")


@graded(1, 1, "the list fork returns is the caller's")
def test_fork_returns_a_copy(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    got = a.fork(1, 2)
    got[1] = 77
    check((a.block_table(1), a.block_table(2)), ([0, 1], [0, 1]), "block tables after the caller changed fork's list")


@graded(1, 1, "fork of a parent that is not live raises KeyError")
def test_fork_unknown_parent(impl):
    a = _pool(impl)
    check_raises(lambda: a.fork(3, 4), None, "fork(3, 4) with no live sequence", kind=KeyError)


@graded(1, 2, "fork onto a live child_id (or onto the parent itself) raises ValueError naming child_id, nothing changes")
@pytest.mark.parametrize("child", [1, 2])
def test_fork_child_live(impl, child):
    a = _pool(impl)
    a.allocate(1, 6)
    a.allocate(2, 1)
    before = snapshot(a, [1, 2], 8)
    check_raises(lambda: a.fork(1, child), "child_id", f"fork(1, {child}) with 1 and 2 live", anywhere=True)
    check(snapshot(a, [1, 2], 8), before, f"inspection after the refused fork(1, {child})")


@graded(1, 1, "parent_id not live and child_id live: KeyError (the parent is checked first)")
def test_fork_order_parent_before_child(impl):
    a = _pool(impl)
    a.allocate(2, 1)
    check_raises(lambda: a.fork(1, 2), None, "fork(1, 2) with only 2 live", kind=KeyError)


@graded(1, 1, "child_id of a bad type with an unknown parent: ValueError naming child_id (types before liveness)")
def test_fork_order_types_before_liveness(impl):
    a = _pool(impl)
    check_raises(lambda: a.fork(1, "2"), "child_id", "fork(1, '2') with no live sequence", anywhere=True)


@graded(1, 1, "parent_id and child_id both of bad types: parent_id is named")
def test_fork_order_parent_type_first(impl):
    a = _pool(impl)
    check_raises(lambda: a.fork(None, -1), "parent_id", "fork(None, -1)", anywhere=True)


@graded(1, 1, "parent_id negative or not an int raises ValueError naming parent_id")
@pytest.mark.parametrize("bad", BAD_IDS)
def test_fork_bad_parent(impl, bad):
    a = _pool(impl)
    a.allocate(1, 1)
    check_raises(lambda: a.fork(bad, 2), "parent_id", f"fork({bad!r}, 2)", anywhere=True)


@graded(1, 1, "child_id negative or not an int raises ValueError naming child_id")
@pytest.mark.parametrize("bad", BAD_IDS)
def test_fork_bad_child(impl, bad):
    a = _pool(impl)
    a.allocate(1, 1)
    check_raises(lambda: a.fork(1, bad), "child_id", f"fork(1, {bad!r})", anywhere=True)
    check(a.ref_count(0), 1, f"ref_count(0) after the refused fork(1, {bad!r})")


# --- append ----------------------------------------------------------------------


@graded(1, 2, "a last block not full with count 1 is written in place: None, no block taken")
def test_append_in_place(impl):
    a = _pool(impl)
    a.allocate(1, 5)
    check(a.append(1), None, "append(1) at 5 tokens of block_size 4")
    check((a.block_table(1), a.num_tokens(1), a.num_free_blocks()), ([0, 1], 6, 6), "state after it")


@graded(1, 2, "a full last block: the token goes to a new block (the lowest free id), None")
def test_append_new_block(impl):
    a = _pool(impl)
    a.allocate(1, 4)
    a.allocate(2, 1)
    check(a.append(1), None, "append(1) at 4 tokens of block_size 4")
    check((a.block_table(1), a.num_tokens(1), a.num_free_blocks()), ([0, 2], 5, 5), "state after it")


@graded(1, 3, "a shared last block that is not full is copied: (old, new), the old block loses one reference")
def test_append_copy_on_write(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    a.fork(1, 2)
    check(a.append(1), (1, 2), "append(1) with block 1 shared and holding 2 of 4 tokens")
    got = (a.block_table(1), a.block_table(2), [a.ref_count(b) for b in range(3)], a.num_free_blocks())
    check(got, ([0, 2], [0, 1], [2, 1, 1], 5), "(tables, ref_count(0..2), num_free_blocks()) after it")


@graded(1, 3, "a shared last block that is full is not copied: a new block, None, the full block stays shared")
def test_append_full_shared_block_not_copied(impl):
    a = _pool(impl)
    a.allocate(1, 8)
    a.fork(1, 2)
    check(a.append(2), None, "append(2) with block 1 shared and full")
    got = (a.block_table(2), [a.ref_count(b) for b in range(3)], a.num_free_blocks())
    check(got, ([0, 1, 2], [2, 2, 1], 5), "(block_table(2), ref_count(0..2), num_free_blocks()) after it")


@graded(1, 2, "after a copy-on-write the other holder has count 1 and writes in place")
def test_append_after_copy_in_place(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    a.fork(1, 2)
    a.append(2)
    check(a.append(1), None, "append(1) after sequence 2 copied block 1 away")
    check((a.block_table(1), a.num_free_blocks()), ([0, 1], 5), "(block_table(1), num_free_blocks())")


@graded(1, 2, "three holders: one copy leaves the block shared by two, so the next holder copies too")
def test_append_three_holders(impl):
    a = _pool(impl)
    a.allocate(1, 3)
    a.fork(1, 2)
    a.fork(1, 3)
    check((a.append(3), a.append(2), a.append(1)), ((0, 1), (0, 2), None),
          "append(3), append(2), append(1) with block 0 held by three and not full")
    check([a.ref_count(b) for b in range(3)], [1, 1, 1], "ref_count(0..2) after them")


@graded(1, 3, "append needing a new block (full last block) with none free raises OutOfBlocks and changes nothing")
def test_append_full_out_of_blocks(impl):
    a = impl.BlockAllocator(2, 2)
    a.allocate(1, 4)
    before = snapshot(a, [1], 2)
    check_raises(lambda: a.append(1), None, "append(1) with a full last block and 0 free", kind=impl.OutOfBlocks)
    check(snapshot(a, [1], 2), before, "inspection after the failed append (tokens unchanged too)")


@graded(1, 3, "append needing a copy with none free raises OutOfBlocks and changes nothing")
def test_append_copy_out_of_blocks(impl):
    a = impl.BlockAllocator(2, 4)
    a.allocate(1, 5)
    a.fork(1, 2)
    before = snapshot(a, [1, 2], 2)
    check_raises(lambda: a.append(2), None, "append(2) with block 1 shared, not full, 0 free", kind=impl.OutOfBlocks)
    check(snapshot(a, [1, 2], 2), before, "inspection after the failed append")


@graded(1, 2, "an in-place append needs no free block: it succeeds with the pool full")
def test_append_in_place_with_pool_full(impl):
    a = impl.BlockAllocator(2, 4)
    a.allocate(1, 7)
    check(a.append(1), None, "append(1) at 7 of 8 tokens with 0 free")
    check(a.num_tokens(1), 8, "num_tokens(1)")


@graded(1, 1, "block_size 1: every append needs a new block")
def test_append_block_size_one(impl):
    a = impl.BlockAllocator(3, 1)
    a.allocate(1, 1)
    a.fork(1, 2)
    check((a.append(2), a.append(1)), (None, None), "append(2), append(1) with block_size 1")
    check((a.block_table(1), a.block_table(2)), ([0, 2], [0, 1]), "block tables after them")


@graded(1, 2, "past 2**53: a block holding 1 of 2**60 slots is not full (a float ratio says it is)")
def test_append_exact_integers(impl):
    a = impl.BlockAllocator(3, 2**60)
    a.allocate(1, 2**60 + 1)
    check(a.append(1), None, "append(1) at 2**60 + 1 tokens with block_size 2**60")
    check((a.block_table(1), a.num_tokens(1)), ([0, 1], 2**60 + 2), "(block_table(1), num_tokens(1))")


@graded(1, 1, "append of a sequence that is not live raises KeyError; a bad seq_id raises ValueError naming it")
@pytest.mark.parametrize("bad", [5, *BAD_IDS])
def test_append_bad_seq(impl, bad):
    a = _pool(impl)
    a.allocate(1, 1)
    kind, word = (KeyError, None) if bad == 5 and type(bad) is int else (ValueError, "seq_id")
    check_raises(lambda: a.append(bad), word, f"append({bad!r})", kind=kind, anywhere=True)


# --- free ------------------------------------------------------------------------


@graded(1, 3, "free returns the blocks that became free in block-table order, not sorted")
def test_free_table_order(impl):
    a = impl.BlockAllocator(4, 2)
    a.allocate(1, 4)          # [0, 1]
    a.allocate(2, 2)          # [2]
    a.free(1)
    a.append(2)               # [2, 0]
    a.append(2)
    a.append(2)               # [2, 0, 1]
    check(a.free(2), [2, 0, 1], "free(2) with table [2, 0, 1]")
    check(a.num_free_blocks(), 4, "num_free_blocks() after it")


@graded(1, 3, "free of a sequence sharing blocks returns only the blocks whose count reached 0")
def test_free_shared(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    a.fork(1, 2)
    a.append(2)                # 2: [0, 2]
    check(a.free(1), [1], "free(1) with block 0 also held by 2")
    check(([a.ref_count(b) for b in range(3)], a.num_free_blocks()), ([1, 0, 1], 6), "(ref_count(0..2), num_free_blocks())")
    check(a.free(2), [0, 2], "free(2) after it")


@graded(1, 1, "free of a sequence whose every block is shared returns []")
def test_free_all_shared(impl):
    a = _pool(impl)
    a.allocate(1, 6)
    a.fork(1, 2)
    check(a.free(2), [], "free(2) with both blocks held by 1")
    check(a.num_free_blocks(), 6, "num_free_blocks()")


@graded(1, 1, "free of a freed or unknown sequence raises KeyError; a bad seq_id raises ValueError")
@pytest.mark.parametrize("bad", [1, *BAD_IDS])
def test_free_bad_seq(impl, bad):
    a = _pool(impl)
    a.allocate(1, 1)
    a.free(1)
    kind, word = (KeyError, None) if bad == 1 and type(bad) is int else (ValueError, "seq_id")
    check_raises(lambda: a.free(bad), word, f"free({bad!r}) after free(1)", kind=kind, anywhere=True)
    check(a.num_free_blocks(), 8, "num_free_blocks()")


@graded(1, 1, "a freed sequence is gone: block_table and num_tokens raise KeyError")
def test_freed_sequence_gone(impl):
    a = _pool(impl)
    a.allocate(1, 1)
    a.free(1)
    check_raises(lambda: a.block_table(1), None, "block_table(1) after free(1)", kind=KeyError)
    check_raises(lambda: a.num_tokens(1), None, "num_tokens(1) after free(1)", kind=KeyError)


# --- inspection ------------------------------------------------------------------


@graded(1, 1, "ref_count of a block id out of range or not an int raises ValueError naming block_id")
@pytest.mark.parametrize("bad", [-1, 8, True, 0.0, "0", None])
def test_ref_count_bad(impl, bad):
    a = _pool(impl)
    check_raises(lambda: a.ref_count(bad), "block_id", f"ref_count({bad!r}) on 8 blocks", anywhere=True)


@graded(1, 1, "ref_count of the last block id (num_blocks - 1) is valid")
def test_ref_count_last_block(impl):
    a = impl.BlockAllocator(3, 1)
    a.allocate(1, 3)
    check(a.ref_count(2), 1, "ref_count(2) on 3 blocks, all held")


@graded(1, 1, "block_table and num_tokens check seq_id: ValueError naming it for a bad one")
@pytest.mark.parametrize("bad", BAD_IDS)
def test_inspection_bad_seq(impl, bad):
    a = _pool(impl)
    check_raises(lambda: a.block_table(bad), "seq_id", f"block_table({bad!r})", anywhere=True)
    check_raises(lambda: a.num_tokens(bad), "seq_id", f"num_tokens({bad!r})", anywhere=True)


@graded(1, 1, "block_table and num_tokens of a seq_id never allocated raise KeyError, and change nothing")
def test_inspection_not_live(impl):
    a = _pool(impl)
    a.allocate(1, 3)
    check_raises(lambda: a.block_table(0), None, "block_table(0) with only 1 live", kind=KeyError)
    check_raises(lambda: a.num_tokens(2), None, "num_tokens(2) with only 1 live", kind=KeyError)
    check((a.block_table(1), a.num_tokens(1), a.num_free_blocks()), ([0], 3, 7),
          "block_table(1), num_tokens(1), num_free_blocks() after the refused calls")


@graded(1, 1, "block_table returns a new list each call")
def test_block_table_copy(impl):
    a = _pool(impl)
    a.allocate(1, 5)
    got = a.block_table(1)
    got.clear()
    check(a.block_table(1), [0, 1], "block_table(1) after the caller cleared the previous result")
