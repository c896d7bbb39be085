"""Hidden suite: get and put must be O(1), timed against the reference in the same process.

Two phases, each timed on its own: n puts fill an empty n-block cache with one-block entries, then
a seeded mix of get hits (at random places in the recency order), get misses and puts that each
evict one entry is replayed. The implementation fails only if a phase is more than FACTOR times
slower than the reference's best CPU time (kata.checks.compare_speed): an O(n) scan per operation
(a list kept in recency order, a walk to find the LRU entry, a sum over the entries) is 20x to
hundreds of times slower at these sizes, while an O(1) design of any style stays well inside. A
phase stops early once it has clearly lost, so a slow implementation costs seconds, not minutes; a
failure is confirmed by a second measurement.
"""

import random
from collections import OrderedDict

import pytest

from kata.checks import compare_speed, graded, reference_at
from kata.strict import same

FACTOR = 10
OPS = 6000


_reference = reference_at(__file__, "solutions/lru-kv-cache.py")  # call only inside a baseline measure


def _workload(n, seed, pinned):
    """(fill, ops): the keys to put first, then ('get', key) / ('put', key) steps.

    Simulated here with an OrderedDict (the grader may use one) so that every get hit picks a key
    that is really present, at a random position in the recency order. `pinned` keys are put first
    and stay pinned, so they sit at the LRU end and every eviction has to skip them.
    """
    rng = random.Random(seed)
    fill = [f"k{i}" for i in range(n)]
    order = OrderedDict((key, None) for key in fill)  # LRU first
    present = list(fill)  # for sampling; kept in step with `order` by swap-remove
    where = {key: i for i, key in enumerate(present)}
    protected = set(fill[:pinned])
    ops = []
    fresh = n
    for _ in range(OPS):
        roll = rng.random()
        if roll < 0.45:
            key = present[rng.randrange(len(present))]
            order.move_to_end(key)
            ops.append(("get", key))
        elif roll < 0.55:
            ops.append(("get", f"missing{rng.randrange(1000)}"))
        else:
            key = f"k{fresh}"
            fresh += 1
            order[key] = None
            victim = next(k for k in order if k not in protected)
            del order[victim]
            i = where.pop(victim)
            last = present.pop()
            if last != victim:
                present[i] = last
                where[last] = i
            where[key] = len(present)
            present.append(key)
            ops.append(("put", key))
    return fill, ops


def _filled(module, n, fill, pinned=0):
    """An n-block cache of `module` filled with one-block entries, the first `pinned` keys pinned."""
    cache = module.KVBlockCache(n)
    for i, key in enumerate(fill):
        cache.put(key, [i])
    for key in fill[:pinned]:
        cache.pin(key)
    return cache


def _replay(cache, ops):
    """Replay ops on a full cache; the number of puts that did not evict exactly one entry."""
    one = [0]
    bad_puts = 0
    for op, key in ops:
        if op == "get":
            cache.get(key)
        elif len(cache.put(key, one)) != 1:
            bad_puts += 1
    return bad_puts


def _compare(impl, n, pinned, what):
    fill, ops = _workload(n, seed=2024 + pinned, pinned=pinned)
    how = dict(factor=FACTOR, floor=0.0, runs=2, confirm=True)
    compare_speed(f"put {n} times to fill an empty {n}-block cache with one-block entries",
                  lambda: _filled(impl, n, fill), lambda: _filled(_reference(), n, fill),
                  answer=lambda cache: None, hint="put must be O(1), not a scan over the entries", **how)
    bad_puts, _ = compare_speed(
        f"get and put replayed {len(ops)} times on a full cache of {n} one-block entries{what}",
        lambda cache: _replay(cache, ops), lambda cache: _replay(cache, ops),
        impl_setup=lambda: _filled(impl, n, fill, pinned), ref_setup=lambda: _filled(_reference(), n, fill, pinned),
        hint="get and put must be O(1), not a scan over the entries", **how)
    assert same(bad_puts, 0), f"{bad_puts} puts into the full cache of one-block entries did not evict exactly one entry."


@graded(1, 5, f"get and put are O(1): 20000 entries, {OPS} operations, within {FACTOR}x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(15)
def test_get_and_put_are_constant_time(impl):
    _compare(impl, n=20000, pinned=0, what="")


@graded(2, 3, "with 2 pinned entries at the LRU end, put stays O(1): it may skip the pinned, not scan every entry")
@pytest.mark.complexity
@pytest.mark.timeout(15)
def test_put_with_few_pins_is_constant_time(impl):
    _compare(impl, n=8000, pinned=2, what=", 2 of them pinned at the LRU end")
