"""Hidden suite, level 2: pin counts, eviction around pinned entries, CacheFullError, get_block, remove."""

import pytest
from lru_kv_cache_model import filled, snapshot

from kata.checks import graded
from kata.strict import same


# --- eviction around pinned entries ------------------------------------------------


@graded(2, 3, "a pinned LRU entry is skipped; the next unpinned entry is evicted")
def test_pinned_entry_is_skipped(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]), ("c", [2]))
    cache.pin("a")
    evicted = cache.put("d", [3])
    assert same(evicted, ["b"]), f"Called pin('a') (the LRU entry), then put('d', [3]) on the full cache. Returned {evicted!r}, expected ['b']."


@graded(2, 2, "a skipped pinned entry keeps its place in the recency order")
def test_pinned_entry_keeps_its_place(impl):
    cache = filled(impl, 4, ("a", [0]), ("b", [1]), ("c", [2]), ("d", [3]))
    cache.pin("b")
    evicted = cache.put("e", [4, 5])
    assert same(evicted, ["a", "c"]), f"Called pin('b'), then put('e', 2 blocks) on a full cache (recency d, c, b, a). Returned {evicted!r}, expected ['a', 'c']."
    assert same(cache.keys(), ["e", "d", "b"]), f"Called keys(). Returned {cache.keys()!r}, expected ['e', 'd', 'b']."


@graded(2, 2, "several pinned entries are all skipped, wherever they sit")
def test_several_pinned_skipped(impl):
    cache = filled(impl, 5, ("a", [0]), ("b", [1]), ("c", [2]), ("d", [3]), ("e", [4]))
    cache.pin("a")
    cache.pin("c")
    cache.pin("e")
    evicted = cache.put("f", [5, 6])
    assert same(evicted, ["b", "d"]), f"Called pin on a, c, e, then put('f', 2 blocks) on a full cache. Returned {evicted!r}, expected ['b', 'd']."


@graded(2, 3, "CacheFullError when pinned entries leave too little room, and nothing is evicted first")
def test_cache_full_error_evicts_nothing(impl):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2]))
    cache.pin("a")
    cache.get("b")
    before = snapshot(cache)
    with pytest.raises(impl.CacheFullError):
        cache.put("c", [3, 4, 5])
    after = snapshot(cache)
    assert same(after, before), f"Called put('c', 3 blocks) with 2 of 4 blocks pinned (it raised). State became {after!r}, expected {before!r}."


@graded(2, 2, "a replace refused with CacheFullError leaves the old entry where it was in the recency order")
def test_cache_full_replace_keeps_recency(impl):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2]), ("c", [3]))
    cache.pin("a")
    before = snapshot(cache)
    with pytest.raises(impl.CacheFullError):
        cache.put("b", [4, 5, 6])  # 2 pinned + 3 > 4
    after = snapshot(cache)
    assert same(after, before), (f"Called put('b', 3 blocks) with a (2 of 4 blocks) pinned (it raised). "
                                 f"State became {after!r}, expected {before!r} (b must not become MRU).")


@graded(2, 2, "the blocks of every pinned entry add up: two pinned entries leave too little room for a third")
def test_pinned_blocks_of_several_entries_add_up(impl):
    cache = filled(impl, 10, ("a", [0, 1, 2]), ("b", [3, 4, 5]), ("c", [6]))
    cache.pin("a")
    cache.pin("b")
    before = snapshot(cache)
    with pytest.raises(impl.CacheFullError):
        cache.put("d", [7, 8, 9, 10, 11])  # 3 + 3 pinned + 5 = 11 > 10
    after = snapshot(cache)
    assert same(after, before), f"Called put('d', 5 blocks) with a (3 blocks) and b (3 blocks) pinned, capacity 10 (it raised). State became {after!r}, expected {before!r}."
    evicted = cache.put("d", [7, 8, 9, 10])  # 3 + 3 + 4 = 10 fits once c is evicted
    assert same(evicted, ["c"]), f"Called put('d', 4 blocks) with a and b (3 blocks each) pinned, capacity 10. Returned {evicted!r}, expected ['c']."


@graded(2, 2, "pinned blocks + new entry == capacity fits (the limit is <=)")
def test_pinned_plus_new_exactly_capacity_fits(impl):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2]), ("c", [3]))
    cache.pin("a")
    evicted = cache.put("d", [4, 5])
    assert same(evicted, ["b", "c"]), f"Called put('d', 2 blocks) with 2 of 4 blocks pinned. Returned {evicted!r}, expected ['b', 'c']."


@graded(2, 1, "an entry larger than the capacity raises ValueError, not CacheFullError, even with pins")
def test_value_error_checked_before_cache_full(impl):
    cache = filled(impl, 3, ("a", [0, 1]))
    cache.pin("a")
    with pytest.raises(ValueError) as info:
        cache.put("b", [1, 2, 3, 4])
    assert not isinstance(info.value, impl.CacheFullError), (
        f"Called put('b', 4 blocks) on a 3-block cache with 2 blocks pinned. Raised {info.value!r}, "
        "expected a ValueError that is not a CacheFullError."
    )


# --- replacing pinned entries ----------------------------------------------------------


@graded(2, 2, "replacing a pinned entry keeps its pin count")
def test_replace_pinned_keeps_pin_count(impl):
    cache = filled(impl, 4, ("a", [0]))
    cache.pin("a")
    cache.pin("a")
    cache.put("a", [1, 2])
    got = cache.pin_count("a")
    assert same(got, 2), f"Called pin('a') twice, then put('a', [1, 2]), then pin_count('a'). Returned {got!r}, expected 2."


@graded(2, 3, "a pinned entry's own old blocks do not block its replace")
def test_replace_pinned_own_blocks_not_counted(impl):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2]))
    cache.pin("a")
    evicted = cache.put("a", [3, 4, 5, 6])
    assert same(evicted, ["b"]), f"Called put('a', 4 blocks) over pinned 'a' (2 blocks) in a 4-block cache. Returned {evicted!r}, expected ['b']."
    assert same(cache.used_blocks, 4), f"used_blocks is {cache.used_blocks}, expected 4."


@graded(2, 2, "a pinned entry that grows by replace holds its new size against later puts")
def test_replace_pinned_new_size_counts(impl):
    cache = filled(impl, 5, ("a", [0]))
    cache.pin("a")
    cache.put("a", [1, 2, 3])
    with pytest.raises(impl.CacheFullError):
        cache.put("b", [4, 5, 6])
    evicted = cache.put("b", [4, 5])
    assert same(evicted, []), f"Called put('b', 2 blocks) with pinned 'a' now 3 of 5 blocks. Returned {evicted!r}, expected []."


@graded(2, 2, "a pinned entry that shrinks by replace frees room for later puts")
def test_replace_pinned_shrinks(impl):
    cache = filled(impl, 4, ("a", [0, 1, 2]))
    cache.pin("a")
    cache.put("a", [3])
    evicted = cache.put("b", [4, 5, 6])
    assert same(evicted, []), f"Called put('b', 3 blocks) with pinned 'a' shrunk to 1 of 4 blocks. Returned {evicted!r}, expected []."


# --- pin counts ---------------------------------------------------------------------------


@graded(2, 2, "pin is a count: pinned twice and unpinned once is still pinned")
def test_pin_is_a_count(impl):
    cache = filled(impl, 2, ("a", [0]), ("b", [1]))
    cache.pin("a")
    cache.pin("a")
    cache.unpin("a")
    evicted = cache.put("c", [2])
    assert same(evicted, ["b"]), f"Called pin('a') twice and unpin('a') once, then put('c', [2]) on the full cache. Returned {evicted!r}, expected ['b']."
    assert same(cache.pin_count("a"), 1), f"Called pin_count('a'). Returned {cache.pin_count('a')!r}, expected 1."


@graded(2, 2, "an entry unpinned back to 0 can be evicted again")
def test_unpinned_entry_is_evictable(impl):
    cache = filled(impl, 2, ("a", [0]), ("b", [1]))
    cache.pin("a")
    cache.unpin("a")
    evicted = cache.put("c", [2])
    assert same(evicted, ["a"]), f"Called pin('a'), unpin('a'), then put('c', [2]) on the full cache. Returned {evicted!r}, expected ['a']."


@graded(2, 2, "unpin of an entry whose pin count is 0 raises ValueError, and the count stays 0")
def test_unpin_unpinned_raises(impl):
    cache = filled(impl, 2, ("a", [0]))
    with pytest.raises(ValueError):
        cache.unpin("a")
    got = cache.pin_count("a")
    assert same(got, 0), f"Called unpin('a') on an unpinned entry (it raised), then pin_count('a'). Returned {got!r}, expected 0."


@graded(2, 1, "pin, unpin and pin_count of an absent key raise KeyError")
@pytest.mark.parametrize("method", ["pin", "unpin", "pin_count"])
def test_pin_absent_key(impl, method):
    cache = filled(impl, 2, ("a", [0]))
    with pytest.raises(KeyError):
        getattr(cache, method)("zzz")


@graded(2, 2, "pin and unpin change neither recency nor statistics")
def test_pin_does_not_touch(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]), ("c", [2]))
    cache.pin("a")
    cache.unpin("a")
    cache.pin_count("a")
    got = (cache.keys(), cache.stats())
    want = (["c", "b", "a"], {"hits": 0, "misses": 0, "evictions": 0})
    assert same(got, want), f"Called pin, unpin, pin_count on 'a', then keys() and stats(). Returned {got!r}, expected {want!r}."


@graded(2, 1, "an entry evicted and put again starts with pin count 0")
def test_reinserted_entry_has_no_pins(impl):
    cache = filled(impl, 1, ("a", [0]))
    cache.put("b", [1])  # evicts a
    cache.put("a", [2])  # evicts b
    got = cache.pin_count("a")
    assert same(got, 0), f"Called pin_count('a') on a freshly re-inserted entry. Returned {got!r}, expected 0."


# --- get_block ---------------------------------------------------------------------------


@graded(2, 1, "get_block returns the id at each valid index, first and last included")
def test_get_block_valid_indices(impl):
    cache = filled(impl, 4, ("a", [10, 11, 12]))
    got = [cache.get_block("a", i) for i in range(3)]
    assert same(got, [10, 11, 12]), f"Called get_block('a', i) for i in 0..2 on [10, 11, 12]. Returned {got!r}, expected [10, 11, 12]."


@graded(2, 2, "index == size raises IndexError naming index")
def test_get_block_index_equal_to_size(impl):
    cache = filled(impl, 4, ("a", [10, 11, 12]))
    with pytest.raises(IndexError, match="index"):
        cache.get_block("a", 3)


@graded(2, 3, "negative indices are not counted from the end: -1 raises IndexError")
@pytest.mark.parametrize("index", [-1, -3, -4])
def test_get_block_negative_index(impl, index):
    cache = filled(impl, 4, ("a", [10, 11, 12]))
    with pytest.raises(IndexError, match="index"):
        cache.get_block("a", index)


@graded(2, 1, "get_block of an absent key raises KeyError, checked before the index")
@pytest.mark.parametrize("index", [0, -1, "x"])
def test_get_block_absent_key(impl, index):
    cache = filled(impl, 4, ("a", [10]))
    with pytest.raises(KeyError):
        cache.get_block("zzz", index)


@graded(2, 1, "an index that is not an int (a bool, a float, a str) raises TypeError naming index")
@pytest.mark.parametrize("index", [True, 1.0, "1"], ids=["bool", "float", "str"])
def test_get_block_index_type(impl, index):
    cache = filled(impl, 4, ("a", [10, 11]))
    with pytest.raises(TypeError, match="index"):
        cache.get_block("a", index)


@graded(2, 2, "get_block changes neither recency nor statistics")
def test_get_block_does_not_touch(impl):
    cache = filled(impl, 2, ("a", [0]), ("b", [1]))
    cache.get_block("a", 0)
    evicted = cache.put("c", [2])
    assert same(evicted, ["a"]), f"Called get_block('a', 0), then put('c', [2]) on the full cache. Returned {evicted!r}, expected ['a']."
    got = cache.stats()
    assert same(got, {"hits": 0, "misses": 0, "evictions": 1}), f"Called stats(). Returned {got!r}, expected 0 hits, 0 misses, 1 eviction."


# --- remove ------------------------------------------------------------------------------


@graded(2, 2, "remove returns the block ids and frees the entry's blocks")
def test_remove_frees_blocks(impl):
    cache = filled(impl, 4, ("a", [5, 6]), ("b", [7]))
    got = cache.remove("a")
    state = (got, cache.used_blocks, len(cache), cache.keys(), "a" in cache)
    want = ([5, 6], 1, 1, ["b"], False)
    assert same(state, want), f"Called remove('a'), then (used_blocks, len, keys(), 'a' in cache). Returned {state!r}, expected {want!r}."
    evicted = cache.put("c", [8, 9, 10])
    assert same(evicted, []), f"Called put('c', 3 blocks) with 1 of 4 blocks used. Returned {evicted!r}, expected []."


@graded(2, 1, "remove of an absent key raises KeyError")
def test_remove_absent_key(impl):
    cache = filled(impl, 4, ("a", [5]))
    with pytest.raises(KeyError):
        cache.remove("zzz")


@graded(2, 2, "remove of a pinned entry raises ValueError and the entry stays")
def test_remove_pinned_raises(impl):
    cache = filled(impl, 4, ("a", [5]), ("b", [6]))
    cache.pin("a")
    before = snapshot(cache)
    with pytest.raises(ValueError):
        cache.remove("a")
    after = snapshot(cache)
    assert same(after, before), f"Called remove('a') on a pinned entry (it raised). State became {after!r}, expected {before!r}."


@graded(2, 1, "remove is not an eviction and changes no statistics")
def test_remove_is_not_an_eviction(impl):
    cache = filled(impl, 4, ("a", [5]))
    cache.remove("a")
    got = cache.stats()
    assert same(got, {"hits": 0, "misses": 0, "evictions": 0}), f"Called remove('a'), then stats(). Returned {got!r}, expected all zeros."


@graded(2, 1, "an entry unpinned and then removed no longer holds pinned room")
def test_removed_entry_releases_pinned_room(impl):
    cache = filled(impl, 4, ("a", [0, 1, 2]))
    cache.pin("a")
    cache.unpin("a")
    cache.remove("a")
    evicted = cache.put("b", [3, 4, 5, 6])
    assert same(evicted, []), f"Called pin, unpin, remove on 'a', then put('b', 4 blocks) on the empty 4-block cache. Returned {evicted!r}, expected []."
