"""Hidden suite, level 1: the LRU core (capacity in blocks, recency, eviction, validation, stats)."""

import pytest
from lru_kv_cache_model import filled, snapshot

from kata.checks import graded
from kata.strict import same


# --- constructor ---------------------------------------------------------------


@graded(1, 2, "a new cache is empty, with zero statistics, and reports its capacity")
def test_new_cache_is_empty(impl):
    cache = impl.KVBlockCache(5)
    got = (len(cache), cache.used_blocks, cache.keys(), cache.stats(), cache.capacity)
    want = (0, 0, [], {"hits": 0, "misses": 0, "evictions": 0}, 5)
    assert same(got, want), (
        "Called KVBlockCache(5), then (len, used_blocks, keys(), stats(), capacity). "
        f"Returned {got!r}, expected {want!r}."
    )


@graded(1, 2, "capacity and used_blocks are read-only: assigning either raises AttributeError and changes nothing")
@pytest.mark.parametrize("name", ["capacity", "used_blocks"])
def test_read_only_properties(impl, name):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2]))
    try:
        setattr(cache, name, 100)
    except AttributeError:
        pass
    else:
        pytest.fail(f"Assigned cache.{name} = 100 on KVBlockCache(4) holding 3 blocks: no AttributeError, "
                    f"expected one ({name} is a read-only property).", pytrace=False)
    got = (cache.capacity, cache.used_blocks, cache.put("c", [3, 4]), cache.keys())
    want = (4, 3, ["a"], ["c", "b"])
    assert same(got, want), (
        f"After the refused assignment to {name}: (capacity, used_blocks, put('c', [3, 4]), keys()) = {got!r}, "
        f"expected {want!r}."
    )


@graded(1, 1, "capacity 0 raises ValueError naming capacity")
def test_capacity_zero_rejected(impl):
    with pytest.raises(ValueError, match="capacity"):
        impl.KVBlockCache(0)


@graded(1, 1, "a negative capacity raises ValueError naming capacity")
def test_capacity_negative_rejected(impl):
    with pytest.raises(ValueError, match="capacity"):
        impl.KVBlockCache(-3)


@graded(1, 1, "capacity True (a bool) raises ValueError, though bool is an int subclass")
def test_capacity_bool_rejected(impl):
    with pytest.raises(ValueError, match="capacity"):
        impl.KVBlockCache(True)


@graded(1, 1, "capacity of another type (4.0, '4', None) raises ValueError")
@pytest.mark.parametrize("bad", [4.0, "4", None], ids=["float", "str", "None"])
def test_capacity_non_int_rejected(impl, bad):
    with pytest.raises(ValueError, match="capacity"):
        impl.KVBlockCache(bad)


@graded(1, 1, "capacity 1, the smallest, holds one 1-block entry")
def test_capacity_one(impl):
    cache = impl.KVBlockCache(1)
    first = cache.put("a", [0])
    second = cache.put("b", [1])
    assert same((first, second), ([], ["a"])), (
        f"Called put('a', [0]) then put('b', [1]) on a 1-block cache. Returned {first!r} and "
        f"{second!r}, expected [] and ['a']."
    )


# --- get and put ---------------------------------------------------------------


@graded(1, 1, "get returns the stored block ids on a hit and None on a miss")
def test_get_hit_and_miss(impl):
    cache = filled(impl, 8, ("a", [3, 1, 2]))
    hit, miss = cache.get("a"), cache.get("b")
    assert same((hit, miss), ([3, 1, 2], None)), (
        f"Called get('a') then get('b') after put('a', [3, 1, 2]). Returned {hit!r} and {miss!r}, "
        "expected [3, 1, 2] and None."
    )


@graded(1, 3, "a get hit makes the entry MRU, so the next eviction takes another entry")
def test_get_makes_entry_mru(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]), ("c", [2]))
    cache.get("a")
    evicted = cache.put("d", [3])
    assert same(evicted, ["b"]), (
        "Called get('a') on a full cache holding a, b, c (a least recent), then put('d', [3]). "
        f"Returned {evicted!r}, expected ['b']."
    )
    assert same(cache.keys(), ["d", "a", "c"]), f"Called keys(). Returned {cache.keys()!r}, expected ['d', 'a', 'c']."


@graded(1, 1, "a get miss changes no recency")
def test_get_miss_changes_nothing(impl):
    cache = filled(impl, 4, ("a", [0]), ("b", [1]))
    cache.get("zzz")
    assert same(cache.keys(), ["b", "a"]), f"Called get('zzz') (a miss), then keys(). Returned {cache.keys()!r}, expected ['b', 'a']."


@graded(1, 3, "an entry that makes the cache exactly full evicts nothing (<=, not <)")
def test_exactly_full_evicts_nothing(impl):
    cache = filled(impl, 5, ("a", [0, 1]), ("b", [2]))
    evicted = cache.put("c", [3, 4])
    assert same(evicted, []), f"Called put('c', [3, 4]) with 3 of 5 blocks used. Returned {evicted!r}, expected []."
    assert cache.used_blocks == 5 and len(cache) == 3, (
        f"After filling the cache exactly: used_blocks {cache.used_blocks}, len {len(cache)}; expected 5 and 3."
    )


@graded(1, 2, "one block over capacity evicts the LRU entry")
def test_one_over_evicts_lru(impl):
    cache = filled(impl, 4, ("a", [0, 1]), ("b", [2, 3]))
    evicted = cache.put("c", [4])
    assert same(evicted, ["a"]), f"Called put('c', [4]) on a full cache (a least recent). Returned {evicted!r}, expected ['a']."
    assert same(cache.used_blocks, 3), f"used_blocks is {cache.used_blocks}, expected 3."


@graded(1, 2, "several evictions are returned in eviction order, LRU first")
def test_evicts_several_in_lru_order(impl):
    cache = filled(impl, 4, ("a", [0]), ("b", [1]), ("c", [2]), ("d", [3]))
    cache.get("a")  # order now a, d, c, b (MRU first)
    evicted = cache.put("e", [4, 5, 6])
    assert same(evicted, ["b", "c", "d"]), (
        f"Called put('e', 3 blocks) on a full 4-block cache with recency a, d, c, b. Returned {evicted!r}, "
        "expected ['b', 'c', 'd']."
    )


@graded(1, 2, "eviction stops as soon as used_blocks <= capacity: no extra victim")
def test_evicts_only_as_many_as_needed(impl):
    cache = filled(impl, 6, ("a", [0, 1]), ("b", [2]), ("c", [3]), ("d", [4, 5]))
    evicted = cache.put("e", [6, 7, 8])
    assert same(evicted, ["a", "b"]), (
        f"Called put('e', 3 blocks) on a full 6-block cache (a:2, b:1, c:1, d:2, a least recent). "
        f"Returned {evicted!r}, expected ['a', 'b']."
    )


@graded(1, 2, "an entry exactly as large as the capacity is accepted and evicts every other entry")
def test_entry_equal_to_capacity(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]))
    evicted = cache.put("c", [2, 3, 4])
    assert same(evicted, ["a", "b"]), f"Called put('c', 3 blocks) on a 3-block cache. Returned {evicted!r}, expected ['a', 'b']."
    assert same(cache.keys(), ["c"]), f"Called keys(). Returned {cache.keys()!r}, expected ['c']."


@graded(1, 3, "an entry larger than the capacity raises ValueError and leaves the cache unchanged")
def test_entry_larger_than_capacity_rejected(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]))
    cache.get("zzz")
    before = snapshot(cache)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("c", [2, 3, 4, 5])
    after = snapshot(cache)
    assert same(after, before), f"Called put('c', 4 blocks) on a 3-block cache (it raised). State became {after!r}, expected {before!r}."


# --- replacing ------------------------------------------------------------------


@graded(1, 2, "replacing an entry releases its old blocks, stores the new ones and makes it MRU")
def test_replace_updates_size_and_recency(impl):
    cache = filled(impl, 6, ("a", [0, 1, 2]), ("b", [3]))
    evicted = cache.put("a", [9])
    got = (evicted, cache.used_blocks, len(cache), cache.keys(), cache.get("a"))
    want = ([], 2, 2, ["a", "b"], [9])
    assert same(got, want), (
        "Called put('a', [9]) over a 3-block 'a'; then (result, used_blocks, len, keys(), get('a')). "
        f"Returned {got!r}, expected {want!r}."
    )


@graded(1, 3, "a replace that needs room evicts other entries, never the key being replaced")
def test_replace_never_evicts_itself(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]), ("c", [2]))  # a is LRU
    evicted = cache.put("a", [5, 6, 7])
    assert same(evicted, ["b", "c"]), (
        f"Called put('a', 3 blocks) over the LRU entry 'a' in a full 3-block cache holding a, b, c. "
        f"Returned {evicted!r}, expected ['b', 'c']."
    )
    assert same(cache.get("a"), [5, 6, 7]), f"Called get('a'). Returned {cache.get('a')!r}, expected [5, 6, 7]."


@graded(1, 2, "a replace is not an eviction: the eviction counter does not change")
def test_replace_is_not_an_eviction(impl):
    cache = filled(impl, 4, ("a", [0]), ("b", [1]))
    cache.put("a", [2, 3])
    cache.put("b", [4])
    stats = cache.stats()
    assert same(stats["evictions"], 0), f"Called put('a', ...) and put('b', ...) as replaces. stats() returned {stats!r}, expected 0 evictions."


@graded(1, 2, "a replace that is too large raises ValueError and keeps the old entry where it was")
def test_replace_too_large_keeps_old_entry(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]))
    with pytest.raises(ValueError):
        cache.put("a", [5, 6, 7, 8])
    got = (cache.get("a"), cache.keys(), cache.used_blocks)
    want = ([0], ["a", "b"], 2)
    assert same(got, want), f"Called put('a', 4 blocks) on a 3-block cache (it raised), then (get('a'), keys(), used_blocks). Returned {got!r}, expected {want!r}."


# --- copies ------------------------------------------------------------------------


@graded(1, 2, "put stores a copy: changing the caller's list afterwards changes nothing")
def test_put_stores_a_copy(impl):
    cache = impl.KVBlockCache(8)
    blocks = [1, 2]
    cache.put("a", blocks)
    blocks.append(3)
    blocks[0] = 99
    got = (cache.get("a"), cache.used_blocks)
    assert same(got, ([1, 2], 2)), f"Called put('a', blocks), then changed blocks. get('a') and used_blocks returned {got!r}, expected ([1, 2], 2)."


@graded(1, 2, "get returns a new list: changing it does not change the entry")
def test_get_returns_a_copy(impl):
    cache = filled(impl, 8, ("a", [1, 2]))
    got = cache.get("a")
    got.append(7)
    again = cache.get("a")
    assert same(again, [1, 2]), f"Called get('a') and appended to the result, then get('a') again. Returned {again!r}, expected [1, 2]."


# --- inspection ----------------------------------------------------------------------


@graded(1, 2, "`in` does not change recency or statistics")
def test_contains_does_not_touch(impl):
    cache = filled(impl, 2, ("a", [0]), ("b", [1]))
    present, absent = "a" in cache, "zzz" in cache
    evicted = cache.put("c", [2])
    assert same((present, absent), (True, False)), f"Called 'a' in cache and 'zzz' in cache. Returned {(present, absent)!r}, expected (True, False)."
    assert same(evicted, ["a"]), f"Called 'a' in cache, then put('c', [2]) on the full cache. Returned {evicted!r}, expected ['a']."
    assert same(cache.stats(), {"hits": 0, "misses": 0, "evictions": 1}), f"stats() returned {cache.stats()!r}, expected 0 hits, 0 misses, 1 eviction."


@graded(1, 2, "keys() lists MRU first and does not change recency")
def test_keys_mru_first_without_touching(impl):
    cache = filled(impl, 3, ("a", [0]), ("b", [1]), ("c", [2]))
    first, second = cache.keys(), cache.keys()
    evicted = cache.put("d", [3])
    assert same(first, ["c", "b", "a"]) and same(second, ["c", "b", "a"]), f"Called keys() twice. Returned {first!r} and {second!r}, expected ['c', 'b', 'a']."
    assert same(evicted, ["a"]), f"Called keys(), then put('d', [3]) on the full cache. Returned {evicted!r}, expected ['a']."


@graded(1, 2, "hits and misses count get calls, evictions count evicted entries; put counts neither hit nor miss")
def test_stats_counts(impl):
    cache = impl.KVBlockCache(2)
    cache.put("a", [0])
    cache.put("b", [1])
    cache.get("a")
    cache.get("a")
    cache.get("x")
    cache.put("c", [2, 3])  # evicts b and a
    got = cache.stats()
    want = {"hits": 2, "misses": 1, "evictions": 2}
    assert same(got, want), f"Called 3 puts, 2 get hits, 1 get miss, and a put evicting 2. stats() returned {got!r}, expected {want!r}."


@graded(1, 1, "stats() returns a new dict each call")
def test_stats_returns_a_new_dict(impl):
    cache = impl.KVBlockCache(2)
    first = cache.stats()
    first["hits"] = 100
    second = cache.stats()
    assert same(second, {"hits": 0, "misses": 0, "evictions": 0}), f"Changed the dict from stats(), then called stats(). Returned {second!r}, expected all zeros."


@graded(1, 1, "get of a key that is not a str (even an unhashable one) is a miss, not an error; `in` is False")
def test_get_non_str_key_is_a_miss(impl):
    cache = filled(impl, 2, ("1", [0]))
    got = cache.get(1)
    assert got is None, f"Called get(1) with key '1' present. Returned {got!r}, expected None."
    assert same(cache.stats()["misses"], 1), f"stats() returned {cache.stats()!r}, expected 1 miss."
    got = cache.get(["1"])
    assert got is None, f"Called get(['1']) (a list key). Returned {got!r}, expected None."
    assert same(cache.stats()["misses"], 2), f"Called get(1), get(['1']). stats() returned {cache.stats()!r}, expected 2 misses."
    found = (1 in cache, None in cache)
    assert same(found, (False, False)), f"Called 1 in cache and None in cache with key '1' present. Returned {found!r}, expected (False, False)."


# --- validation -------------------------------------------------------------------------


@graded(1, 1, "put with a key that is not a str raises TypeError naming key")
@pytest.mark.parametrize("bad", [1, None, ("a",)], ids=["int", "None", "tuple"])
def test_put_key_not_str(impl, bad):
    cache = impl.KVBlockCache(2)
    with pytest.raises(TypeError, match="key"):
        cache.put(bad, [0])
    assert same(len(cache), 0), f"Called put({bad!r}, [0]) (it raised). len(cache) is {len(cache)}, expected 0."


@graded(1, 1, "put with a bad key and bad blocks at once raises TypeError for the key (key is checked first)")
@pytest.mark.parametrize("bad_blocks", [[], [True], [0, -1], (0,), [0] * 9], ids=["empty", "bool", "negative", "tuple", "too-large"])
def test_put_bad_key_checked_before_bad_blocks(impl, bad_blocks):
    cache = impl.KVBlockCache(4)
    try:
        cache.put(5, bad_blocks)
    except TypeError as e:
        assert "key" in str(e), f"Called put(5, {bad_blocks!r}). Raised TypeError({str(e)!r}), expected it to name key."
    except Exception as e:  # noqa: BLE001 - any other type is the mistake to report
        pytest.fail(f"Called put(5, {bad_blocks!r}). Raised {type(e).__name__}({e}), expected TypeError naming key "
                    "(key is checked before blocks).", pytrace=False)
    else:
        pytest.fail(f"Called put(5, {bad_blocks!r}). It returned, expected TypeError naming key.", pytrace=False)


@graded(1, 1, "the empty string is a valid key")
def test_empty_string_key(impl):
    cache = impl.KVBlockCache(2)
    cache.put("", [0])
    got = (cache.get(""), "" in cache, cache.keys())
    assert same(got, ([0], True, [""])), f"Called put('', [0]), then get(''), '' in cache, keys(). Returned {got!r}, expected ([0], True, [''])."


@graded(1, 1, "an empty block list raises ValueError naming blocks")
def test_blocks_empty_rejected(impl):
    cache = impl.KVBlockCache(2)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", [])
    assert "a" not in cache, "Called put('a', []) (it raised). 'a' in cache returned True, expected False."


@graded(1, 1, "blocks that is not a list (a tuple, a str, None) raises ValueError naming blocks")
@pytest.mark.parametrize("bad", [(0, 1), "01", None], ids=["tuple", "str", "None"])
def test_blocks_not_a_list_rejected(impl, bad):
    cache = impl.KVBlockCache(4)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", bad)


@graded(1, 1, "a negative block id raises ValueError naming blocks")
def test_blocks_negative_rejected(impl):
    cache = impl.KVBlockCache(4)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", [0, -1])


@graded(1, 1, "a block id that is not an int (True, 1.0, '1') raises ValueError naming blocks")
@pytest.mark.parametrize("bad", [True, 1.0, "1"], ids=["bool", "float", "str"])
def test_blocks_non_int_rejected(impl, bad):
    cache = impl.KVBlockCache(4)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", [2, bad])


@graded(1, 2, "block id 0 is valid")
def test_block_id_zero_accepted(impl):
    cache = impl.KVBlockCache(4)
    cache.put("a", [0])
    cache.put("b", [0, 0])
    got = (cache.get("a"), cache.get("b"), cache.used_blocks)
    assert same(got, ([0], [0, 0], 3)), f"Called put('a', [0]) and put('b', [0, 0]), then get both and used_blocks. Returned {got!r}, expected ([0], [0, 0], 3)."


@graded(1, 1, "duplicate block ids are allowed and each counts toward the size")
def test_duplicate_ids_count(impl):
    cache = filled(impl, 3, ("a", [0]))
    evicted = cache.put("b", [7, 7, 7])
    assert same(evicted, ["a"]), f"Called put('b', [7, 7, 7]) with 1 of 3 blocks used. Returned {evicted!r}, expected ['a']."


@graded(1, 2, "an invalid put over an existing key leaves the cache exactly as it was")
def test_invalid_put_changes_nothing(impl):
    cache = filled(impl, 4, ("a", [0]), ("b", [1]))
    before = snapshot(cache)
    for bad in ([], [1, -2], (3,)):
        with pytest.raises(ValueError):
            cache.put("a", bad)
    after = snapshot(cache)
    assert same(after, before), f"Called put('a', bad) three times (each raised). State became {after!r}, expected {before!r}."
    assert same(cache.get("a"), [0]), f"Called get('a'). Returned {cache.get('a')!r}, expected [0]."
