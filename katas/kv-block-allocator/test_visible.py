"""Visible tests for kv-block-allocator: the prompt's example and a few more.

Run them with `kata check kv-block-allocator`. The hidden suite checks many more cases.
"""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    a = impl.BlockAllocator(num_blocks=6, block_size=4)
    assert a.allocate(1, 6) == [0, 1]
    assert a.fork(1, 2) == [0, 1]
    assert (a.ref_count(0), a.ref_count(1), a.num_free_blocks()) == (2, 2, 4)
    assert a.append(2) == (1, 2)
    assert a.block_table(2) == [0, 2] and a.num_tokens(2) == 7
    assert a.append(1) is None
    assert a.append(1) is None and a.append(1) is None
    assert a.block_table(1) == [0, 1, 3] and a.num_free_blocks() == 2
    assert a.free(1) == [1, 3]
    assert a.num_free_blocks() == 4
    with pytest.raises(impl.OutOfBlocks):
        a.allocate(3, 17)
    assert a.num_free_blocks() == 4
    assert a.allocate(3, 16) == [1, 3, 4, 5]


@pytest.mark.level(1)
def test_full_shared_block_is_not_copied(impl):
    a = impl.BlockAllocator(num_blocks=4, block_size=2)
    a.allocate(7, 2)
    a.fork(7, 8)
    assert a.append(8) is None  # block 0 is full: the token goes to a new block
    assert a.block_table(8) == [0, 1]
    assert a.ref_count(0) == 2


@pytest.mark.level(1)
def test_invalid_arguments(impl):
    with pytest.raises(ValueError, match="block_size"):
        impl.BlockAllocator(4, 0)
    a = impl.BlockAllocator(4, 2)
    with pytest.raises(ValueError, match="num_tokens"):
        a.allocate(1, True)
    with pytest.raises(KeyError):
        a.append(5)
