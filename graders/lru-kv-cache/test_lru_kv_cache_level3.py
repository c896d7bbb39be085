"""Hidden suite, level 3: get_or_put, and every method safe under concurrent use.

The threaded tests start their threads behind a barrier inside `racing(impl)`: threads switch as
often as the interpreter allows (sys.setswitchinterval(1e-6), restored after), and each thread
gives up the interpreter whenever it enters a function of the implementation's file, so an
unlocked section of code is interleaved with others nearly every time rather than now and then.
Afterwards the tests check the invariants PROMPT.md promises, then evict everything twice: a
corrupted recency list fails those evictions. Workloads are seeded (each thread performs the same
operations every run); a correct, locked implementation passes every run, and the unlocked
solutions of the bug zoo fail every run.
"""

import random
import threading
import time

import pytest
from lru_kv_cache_model import racing, run_threads

from kata.checks import graded
from kata.strict import same


def _check_invariants(cache, pool, capacity, where):
    """The promises of PROMPT.md that can be read from outside, after the threads have stopped.

    Reads entries with `in` and get_block (neither changes recency or statistics), then puts two
    entries of `capacity` blocks each: the first must evict exactly the entries present, the second
    exactly the first. Those eviction walks find a corrupted linked list. keys() comes last, on the
    one-entry cache, and in a thread with a time limit, since on a list with a cycle it never returns.
    """
    present = [key for key in pool if key in cache]
    assert same(len(cache), len(present)), f"{where}: len(cache) is {len(cache)}, but {len(present)} keys are `in` the cache."
    sizes = _sizes(cache, present)
    assert same(cache.used_blocks, sum(sizes.values())), f"{where}: used_blocks is {cache.used_blocks}, but the entries' sizes add up to {sum(sizes.values())}."
    assert cache.used_blocks <= capacity, f"{where}: used_blocks is {cache.used_blocks}, above the capacity {capacity}."
    for key, want in (("flush-1", sorted(present)), ("flush-2", ["flush-1"])):
        try:
            flushed = sorted(cache.put(key, [0] * capacity))
        except Exception as exc:  # noqa: BLE001 - a corrupted list often fails this way
            raise AssertionError(
                f"{where}: called put({key!r}, {capacity} blocks) to evict everything. It raised {exc!r}, "
                f"expected it to evict {want!r} (the recency list is corrupted)."
            ) from None
        assert same(flushed, want), (
            f"{where}: called put({key!r}, {capacity} blocks). It evicted {flushed!r} (sorted), expected "
            f"{want!r} (the recency list and the dict disagree)."
        )
    state = (len(cache), cache.used_blocks)
    assert same(state, (1, capacity)), f"{where}: after put('flush-2', ...), (len, used_blocks) returned {state!r}, expected (1, {capacity})."
    keys = _keys_within(cache, 2.0)
    assert same(keys, ["flush-2"]), f"{where}: after put('flush-2', ...), keys() returned {keys!r}, expected ['flush-2']."


def _keys_within(cache, seconds):
    """cache.keys(), called in a daemon thread that may take at most `seconds`."""
    box = []
    thread = threading.Thread(target=lambda: box.append(cache.keys()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"Called keys(). It did not return within {seconds:.0f} s, expected a list (the recency list has a cycle)."
    return box[0]


def _sizes(cache, keys):
    """Entry sizes read through get_block (no recency or statistics change)."""
    sizes = {}
    for key in keys:
        n = 0
        while True:
            try:
                cache.get_block(key, n)
            except IndexError:
                break
            n += 1
        sizes[key] = n
    return sizes


# --- get_or_put, one thread -----------------------------------------------------------


@graded(3, 2, "get_or_put of a present key is a hit: no factory call, entry made MRU, a copy returned")
def test_get_or_put_hit(impl):
    cache = impl.KVBlockCache(2)
    cache.put("a", [1])
    cache.put("b", [2])
    calls = []
    got = cache.get_or_put("a", lambda: calls.append(1) or [9])
    got.append(5)
    evicted = cache.put("c", [3])
    assert same((calls, evicted), ([], ["b"])), f"Called get_or_put('a', f) with 'a' present, then put('c', [3]). Factory calls {len(calls)}, evicted {evicted!r}; expected 0 calls and ['b']."
    again = cache.get("a")
    assert same(again, [1]), f"Changed the list get_or_put returned, then get('a'). Returned {again!r}, expected [1]."
    stats = cache.stats()
    assert stats["hits"] == 2 and stats["misses"] == 0, f"stats() returned {stats!r}, expected 2 hits and 0 misses."


@graded(3, 2, "get_or_put of an absent key calls the factory once, inserts as MRU and counts a miss and its evictions")
def test_get_or_put_miss(impl):
    cache = impl.KVBlockCache(3)
    cache.put("a", [1])
    cache.put("b", [2])
    calls = []

    def factory():
        calls.append(1)
        return [7, 8]

    got = cache.get_or_put("c", factory)
    state = (got, len(calls), cache.keys(), cache.stats())
    want = ([7, 8], 1, ["c", "b"], {"hits": 0, "misses": 1, "evictions": 1})
    assert same(state, want), f"Called get_or_put('c', f -> [7, 8]) on a 3-block cache holding a, b. Returned (result, calls, keys(), stats()) {state!r}, expected {want!r}."


@graded(3, 1, "get_or_put of an absent key stores a copy of the factory's list and returns another")
def test_get_or_put_miss_does_not_alias(impl):
    cache = impl.KVBlockCache(4)
    made = [7, 8]
    got = cache.get_or_put("a", lambda: made)
    made.append(9)
    got.append(5)
    stored = cache.get("a")
    assert same(stored, [7, 8]), f"Called get_or_put('a', f -> made) on an empty cache, then appended to both `made` and the returned list, then get('a'). Returned {stored!r}, expected [7, 8]: the cache keeps its own copy."
    assert got is not made, "get_or_put returned the factory's own list object: it must return a new list."


@graded(3, 1, "get_or_put with a key that is not a str raises TypeError")
def test_get_or_put_key_type(impl):
    cache = impl.KVBlockCache(3)
    with pytest.raises(TypeError, match="key"):
        cache.get_or_put(3, lambda: [1])


@graded(3, 2, "a factory result that put would reject raises ValueError; nothing inserted, the miss counted")
@pytest.mark.parametrize("result", [[], [1, 2, 3, 4], (1,), [-1]], ids=["empty", "too-large", "tuple", "negative"])
def test_get_or_put_rejected_result(impl, result):
    cache = impl.KVBlockCache(3)
    cache.put("a", [0])
    with pytest.raises(ValueError):
        cache.get_or_put("b", lambda: result)
    state = ("b" in cache, cache.keys(), cache.used_blocks, cache.stats())
    want = (False, ["a"], 1, {"hits": 0, "misses": 1, "evictions": 0})
    assert same(state, want), f"Called get_or_put('b', f -> {result!r}) (it raised). Returned ('b' in cache, keys(), used_blocks, stats()) {state!r}, expected {want!r}."


@graded(3, 1, "get_or_put propagates CacheFullError and evicts nothing")
def test_get_or_put_cache_full(impl):
    cache = impl.KVBlockCache(3)
    cache.put("a", [0, 1])
    cache.put("b", [2])
    cache.pin("a")
    with pytest.raises(impl.CacheFullError):
        cache.get_or_put("c", lambda: [3, 4])
    assert same(cache.keys(), ["b", "a"]), f"Called get_or_put('c', f -> 2 blocks) with 2 of 3 blocks pinned (it raised), then keys(). Returned {cache.keys()!r}, expected ['b', 'a']."


@graded(3, 2, "a factory that raises propagates, and the next get_or_put for that key runs its own factory (no hang)")
@pytest.mark.timeout(15)
def test_get_or_put_after_factory_error(impl):
    cache = impl.KVBlockCache(3)

    def broken():
        raise RuntimeError("prefill failed")

    with pytest.raises(RuntimeError):
        cache.get_or_put("a", broken)
    results = []
    errors = run_threads([lambda: results.append(cache.get_or_put("a", lambda: [4]))], timeout=5)
    assert not errors, f"The second get_or_put('a', f -> [4]) raised {errors[0]!r}, expected [4]."
    assert same(results, [[4]]), f"Called get_or_put('a', f -> [4]) after a failed factory. Returned {results!r}, expected [[4]]."
    stats = cache.stats()
    assert same(stats, {"hits": 0, "misses": 2, "evictions": 0}), f"stats() returned {stats!r}, expected 2 misses."


# --- get_or_put under contention ---------------------------------------------------------


@graded(3, 4, "8 threads ask for one absent key at once: the slow factory runs exactly once, all get its blocks")
@pytest.mark.timeout(15)
def test_factory_runs_once_under_contention(impl):
    cache = impl.KVBlockCache(16)
    calls = []

    def slow_factory():
        calls.append(1)
        time.sleep(0.05)
        return [3, 1, 4]

    results = []
    with racing(impl):
        errors = run_threads([lambda: results.append(cache.get_or_put("p", slow_factory))] * 8)
    assert not errors, f"A thread's get_or_put raised {errors[0]!r}."
    assert same(len(calls), 1), f"8 threads called get_or_put('p', slow_factory) at once. The factory ran {len(calls)} times, expected 1."
    assert same(results, [[3, 1, 4]] * 8), f"The 8 calls returned {results!r}, expected [3, 1, 4] each."
    stats = cache.stats()
    assert same(stats, {"hits": 7, "misses": 1, "evictions": 0}), f"stats() returned {stats!r}, expected 7 hits and 1 miss."


@graded(3, 3, "8 threads ask for 12 keys in different orders: each key's factory runs exactly once")
@pytest.mark.timeout(15)
def test_factory_runs_once_per_key(impl):
    cache = impl.KVBlockCache(64)
    keys = [f"prefix-{i}" for i in range(12)]
    calls = {key: 0 for key in keys}
    lock = threading.Lock()

    def factory_for(key):
        def factory():
            with lock:
                calls[key] += 1
            time.sleep(0.002)
            return [keys.index(key)]
        return factory

    def worker(seed):
        order = keys[:]
        random.Random(seed).shuffle(order)
        for key in order:
            got = cache.get_or_put(key, factory_for(key))
            assert same(got, [keys.index(key)]), f"get_or_put({key!r}) returned {got!r}, expected {[keys.index(key)]!r}"

    with racing(impl):
        errors = run_threads([lambda s=s: worker(s) for s in range(8)])
    assert not errors, f"A thread failed: {errors[0]!r}."
    extra = {key: n for key, n in calls.items() if n != 1}
    assert not extra, f"Factory call counts per key (should all be 1): {extra!r}."
    stats = cache.stats()
    assert same(stats, {"hits": 84, "misses": 12, "evictions": 0}), f"stats() returned {stats!r}, expected 84 hits and 12 misses."


@graded(3, 2, "a caller waiting on a factory that fails then runs its own factory")
@pytest.mark.timeout(15)
def test_waiter_runs_own_factory_after_failure(impl):
    cache = impl.KVBlockCache(8)
    started = threading.Event()
    outcomes = {}

    def failing():
        started.set()
        time.sleep(0.1)
        raise RuntimeError("prefill failed")

    def first():
        try:
            cache.get_or_put("p", failing)
            outcomes["first"] = "returned"
        except RuntimeError:
            outcomes["first"] = "raised"

    def second():
        started.wait(5)
        outcomes["second"] = cache.get_or_put("p", lambda: [6, 6])

    errors = run_threads([first, second], timeout=5)
    assert not errors, f"A thread failed: {errors[0]!r}."
    assert same(outcomes, {"first": "raised", "second": [6, 6]}), (
        "One thread's factory for 'p' raised while a second thread asked for 'p'. "
        f"Outcomes {outcomes!r}, expected the first to raise and the second to return [6, 6]."
    )
    assert same(cache.get("p"), [6, 6]), f"Called get('p'). Returned {cache.get('p')!r}, expected [6, 6]."


# --- hammering -------------------------------------------------------------------------------
# Each run is sized to the fewest calls that still catch its races every time: measured over 40
# runs each, an unlocked get, put or remove, a lock without in-flight tracking and no lock at all
# are caught 40 times of 40 by the tests that target them (the mixed test needs its 300 calls a
# thread for an unlocked remove: 39 of 40 at 200). Racing makes every call cost a thread switch.


def _mixed_worker(cache, seed, pool, ops, tally):
    """Seeded random put/get/in/get_or_put/remove on a shared key pool; tally what it saw."""
    rng = random.Random(seed)
    gets = evicted = 0
    for _ in range(ops):
        key = rng.choice(pool)
        roll = rng.random()
        if roll < 0.35:
            evicted += len(cache.put(key, [rng.randrange(100)] * rng.randint(1, 6)))
        elif roll < 0.75:
            gets += 1
            got = cache.get(key)
            assert got is None or 1 <= len(got) <= 6, f"get({key!r}) returned {got!r}, expected None or 1..6 block ids"
        elif roll < 0.85:
            gets += 1
            cache.get_or_put(key, lambda: [1, 2])
        elif roll < 0.95:
            _ = key in cache
            _ = len(cache)
        else:
            try:
                cache.remove(key)
            except KeyError:
                pass
    tally.append((gets, evicted))


@graded(3, 4, "6 threads hammer put/get/get_or_put/remove on shared keys: the entries, sizes and totals stay consistent")
@pytest.mark.timeout(15)
def test_concurrent_mixed_operations(impl):
    capacity = 24
    cache = impl.KVBlockCache(capacity)
    pool = [f"k{i}" for i in range(12)]
    tally = []
    with racing(impl):
        errors = run_threads([lambda s=s: _mixed_worker(cache, 1000 + s, pool, 300, tally) for s in range(6)], timeout=10)
    assert not errors, f"A thread raised {errors[0]!r} while 6 threads shared the cache."
    stats = cache.stats()
    gets = sum(g for g, _ in tally)
    evicted = sum(e for _, e in tally)
    assert same(stats["hits"] + stats["misses"], gets), f"hits + misses is {stats['hits'] + stats['misses']}, but {gets} get and get_or_put calls were made."
    assert stats["evictions"] >= evicted, f"stats() counts {stats['evictions']} evictions, but put returned {evicted} evicted keys."
    _check_invariants(cache, pool, capacity, "After 6 threads of mixed operations")


@graded(3, 3, "threads pin, read and unpin entries while others evict: a pinned entry is never evicted")
@pytest.mark.timeout(15)
def test_concurrent_pins_are_respected(impl):
    capacity = 40
    cache = impl.KVBlockCache(capacity)
    violations = []

    def reader(seed):
        rng = random.Random(seed)
        for i in range(30):
            key = f"r{seed}-{i % 5}"
            cache.get_or_put(key, lambda: [seed, i % 5])
            try:
                cache.pin(key)
            except KeyError:  # evicted between get_or_put and pin: allowed
                continue
            for _ in range(rng.randint(1, 3)):
                if key not in cache:
                    violations.append(key)
                cache.get_block(key, 1)
            cache.unpin(key)

    def writer(seed):
        rng = random.Random(seed)
        for i in range(60):
            try:
                cache.put(f"w{seed}-{i % 20}", [i] * rng.randint(1, 4))
            except impl.CacheFullError:
                pass

    with racing(impl):
        errors = run_threads([lambda s=s: reader(s) for s in range(4)] + [lambda s=s: writer(s) for s in range(4, 8)], timeout=10)
    assert not errors, f"A thread raised {errors[0]!r}."
    assert not violations, f"A pinned entry disappeared while pinned, {len(violations)} times (first {violations[0]!r})."
    pool = [f"r{s}-{j}" for s in range(4) for j in range(5)] + [f"w{s}-{j}" for s in range(4, 8) for j in range(20)]
    assert all(cache.pin_count(key) == 0 for key in pool if key in cache), "After every pin was undone, some entry still has a pin count above 0."
    _check_invariants(cache, pool, capacity, "After pin/unpin under contention")


@graded(3, 2, "threads get the same one or two hot keys at once (3 rounds): no hit or miss is lost and the recency list stays whole")
@pytest.mark.timeout(15)
def test_concurrent_gets_on_hot_keys(impl):
    # Two threads touching the same entry at once is where an unlocked get breaks the list, so the
    # keys are few; each round is a fresh cache, so one lucky interleaving cannot hide a race.
    for round_ in range(3):
        hot = 1 + round_ % 2
        threads = 3 + round_ % 2
        cache = impl.KVBlockCache(50)
        for i in range(hot):
            cache.put(f"k{i}", [i])

        def worker(seed, hot=hot, cache=cache):
            rng = random.Random(seed)
            for _ in range(100):
                cache.get(f"k{rng.randrange(hot + 1)}")  # k{hot} is a miss

        with racing(impl):
            errors = run_threads([lambda s=s: worker(100 * round_ + s) for s in range(threads)], timeout=10)
        assert not errors, f"A thread raised {errors[0]!r}."
        where = f"Round {round_ + 1}: {threads} threads made 100 get calls each on {hot} hot keys"
        stats = cache.stats()
        assert same(stats["hits"] + stats["misses"], 100 * threads), f"{where}; stats() returned {stats!r}."
        _check_invariants(cache, [f"k{i}" for i in range(hot + 1)], 50, where)


@graded(3, 3, "threads get_or_put many keys into a small cache (constant eviction): totals stay consistent")
@pytest.mark.timeout(15)
def test_concurrent_get_or_put_with_eviction(impl):
    capacity = 10
    cache = impl.KVBlockCache(capacity)
    pool = [f"k{i}" for i in range(40)]
    tally = []

    def worker(seed):
        rng = random.Random(seed)
        for _ in range(50):
            key = rng.choice(pool)
            size = 1 + pool.index(key) % 3
            got = cache.get_or_put(key, lambda: [7] * size)
            assert same(got, [7] * size), f"get_or_put({key!r}) returned {got!r}, expected {[7] * size!r}"
        tally.append(1)

    with racing(impl):
        errors = run_threads([lambda s=s: worker(s) for s in range(6)], timeout=10)
    assert not errors, f"A thread raised {errors[0]!r}."
    stats = cache.stats()
    assert same(stats["hits"] + stats["misses"], 300), f"6 threads made 300 get_or_put calls; stats() returned {stats!r}."
    assert same(stats["misses"] - stats["evictions"], len(cache)), (
        f"With no removes, misses ({stats['misses']}) - evictions ({stats['evictions']}) must equal len(cache) ({len(cache)})."
    )
    _check_invariants(cache, pool, capacity, "After concurrent get_or_put with eviction")
