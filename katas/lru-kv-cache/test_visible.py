"""Visible tests for lru-kv-cache: the prompt's examples and a few more.

Run them with `kata check lru-kv-cache`. The hidden suite checks many more cases.
"""

import threading
import time

import pytest

# --- level 1 -----------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_example_level1(impl):
    cache = impl.KVBlockCache(4)
    assert cache.put("a", [0, 1]) == []
    assert cache.put("b", [2]) == []
    assert cache.used_blocks == 3
    assert cache.keys() == ["b", "a"]
    assert cache.get("a") == [0, 1]
    assert cache.keys() == ["a", "b"]
    assert cache.put("c", [3, 4]) == ["b"]
    assert cache.keys() == ["c", "a"]
    assert cache.put("a", [5]) == []
    assert cache.used_blocks == 3
    assert cache.keys() == ["a", "c"]
    assert cache.get("b") is None
    assert "c" in cache
    assert cache.keys() == ["a", "c"]
    assert cache.stats() == {"hits": 1, "misses": 1, "evictions": 1}


@pytest.mark.level(1)
def test_exactly_full_evicts_nothing(impl):
    cache = impl.KVBlockCache(4)
    cache.put("a", [0, 1])
    evicted = cache.put("b", [2, 3])
    assert evicted == [], f"Called put('b', [2, 3]) with 2 of 4 blocks used. Returned {evicted!r}, expected []."
    assert len(cache) == 2


@pytest.mark.level(1)
def test_evicts_several_in_lru_order(impl):
    cache = impl.KVBlockCache(3)
    cache.put("a", [0])
    cache.put("b", [1])
    cache.put("c", [2])
    evicted = cache.put("d", [3, 4])
    assert evicted == ["a", "b"], f"Called put('d', [3, 4]) on a full cache. Returned {evicted!r}, expected ['a', 'b']."


@pytest.mark.level(1)
def test_invalid_input(impl):
    with pytest.raises(ValueError, match="capacity"):
        impl.KVBlockCache(0)
    cache = impl.KVBlockCache(2)
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", [])
    with pytest.raises(ValueError, match="blocks"):
        cache.put("a", [0, 1, 2])
    with pytest.raises(TypeError, match="key"):
        cache.put(1, [0])
    assert len(cache) == 0


# --- level 2 -----------------------------------------------------------------


@pytest.mark.level(2)
def test_prompt_example_level2(impl):
    cache = impl.KVBlockCache(4)
    cache.put("a", [0, 1])
    cache.put("b", [2])
    cache.pin("a")
    assert cache.put("c", [3, 4]) == ["b"]
    assert cache.keys() == ["c", "a"]
    with pytest.raises(impl.CacheFullError):
        cache.put("d", [5, 6, 7])
    assert cache.keys() == ["c", "a"]
    assert cache.get_block("a", 1) == 1
    with pytest.raises(IndexError):
        cache.get_block("a", 2)
    cache.unpin("a")
    with pytest.raises(ValueError):
        cache.unpin("a")


@pytest.mark.level(2)
def test_negative_index_is_out_of_range(impl):
    cache = impl.KVBlockCache(4)
    cache.put("a", [10, 11])
    with pytest.raises(IndexError, match="index"):
        cache.get_block("a", -1)


@pytest.mark.level(2)
def test_remove(impl):
    cache = impl.KVBlockCache(4)
    cache.put("a", [0, 1])
    cache.pin("a")
    with pytest.raises(ValueError):
        cache.remove("a")
    cache.unpin("a")
    assert cache.remove("a") == [0, 1]
    assert len(cache) == 0 and cache.used_blocks == 0
    with pytest.raises(KeyError):
        cache.remove("a")


# --- level 3 -----------------------------------------------------------------


@pytest.mark.level(3)
def test_get_or_put_single_thread(impl):
    cache = impl.KVBlockCache(4)
    assert cache.get_or_put("p", lambda: [7, 8]) == [7, 8]
    assert cache.get_or_put("p", lambda: [9]) == [7, 8]
    assert cache.stats() == {"hits": 1, "misses": 1, "evictions": 0}


@pytest.mark.level(3)
@pytest.mark.timeout(30)
def test_prompt_example_level3(impl):
    calls = []

    def load():
        calls.append(1)
        time.sleep(0.05)
        return [7, 8]

    cache = impl.KVBlockCache(8)
    barrier = threading.Barrier(4)
    results = []

    def worker():
        barrier.wait()
        results.append(cache.get_or_put("p", load))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == [[7, 8]] * 4
    assert len(calls) == 1, f"4 threads called get_or_put('p', load) at once. The factory ran {len(calls)} times, expected 1."
    assert cache.stats() == {"hits": 3, "misses": 1, "evictions": 0}
