"""Hidden suite, level 1: random call sequences against the slow model, and the timed workload.

After every call the outcome (value, or which exception) and the whole observable state (tables,
token counts, every block's count, the free count) must equal the model's.
"""

import random

import pytest
from block_allocator_oracle import SLOW_HINT, Model, check, outcome, reference, snapshot
from hypothesis import example, given
from hypothesis import strategies as st

from kata.checks import compare_speed, digest, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(60)
SEQ = st.integers(0, 4)
OPS = st.lists(st.one_of(
    st.tuples(st.just("allocate"), SEQ, st.integers(1, 9)),
    st.tuples(st.just("fork"), SEQ, SEQ),
    st.tuples(st.just("append"), SEQ),
    st.tuples(st.just("append"), SEQ),
    st.tuples(st.just("free"), SEQ),
), max_size=30)


def _run_both(impl, num_blocks, block_size, ops):
    a, m = impl.BlockAllocator(num_blocks, block_size), Model(num_blocks, block_size)
    log = [f"a = BlockAllocator({num_blocks}, {block_size})"]
    for op in ops:
        name, args = op[0], op[1:]
        call = f"{name}({', '.join(map(repr, args))})"
        log.append(call)
        got = outcome(lambda name=name, args=args: getattr(a, name)(*args))
        want = outcome(lambda name=name, args=args: getattr(m, name)(*args))
        check(got, want, "; ".join(log[-8:]) + " (outcome of the last call)")
        check(snapshot(a, list(m.tables), num_blocks), m.snapshot(), "; ".join(log[-8:]) + " (state after it)")


@graded(1, 6, "random allocate/fork/append/free sequences on a small pool match a slow model call by call")
@PROPERTY
@given(num_blocks=st.integers(1, 6), block_size=st.integers(1, 4), ops=OPS)
@example(num_blocks=3, block_size=2, ops=[("allocate", 0, 3), ("fork", 0, 1), ("append", 1), ("append", 0),
                                          ("free", 0), ("append", 1), ("allocate", 2, 2)])
@example(num_blocks=2, block_size=4, ops=[("allocate", 0, 4), ("fork", 0, 1), ("append", 0), ("append", 1)])
def test_matches_model(impl, num_blocks, block_size, ops):
    _run_both(impl, num_blocks, block_size, ops)


@graded(1, 4, "random sequences with heavy sharing (forks of forks, then appends) match the model")
@PROPERTY
@given(block_size=st.integers(1, 3), data=st.data())
def test_matches_model_sharing(impl, block_size, data):
    ops = [("allocate", 0, data.draw(st.integers(1, 5)))]
    ops += data.draw(st.lists(st.tuples(st.just("fork"), SEQ, SEQ), min_size=1, max_size=5))
    ops += data.draw(st.lists(st.one_of(st.tuples(st.just("append"), SEQ), st.tuples(st.just("free"), SEQ)),
                              max_size=20))
    _run_both(impl, 8, block_size, ops)


# --- the timed workload ----------------------------------------------------------

NUM_BLOCKS, BLOCK_SIZE, CALLS = 200_000, 16, 30_000


def _workload():
    """30,000 calls on a 200,000-block pool whose lowest 150,000 blocks one sequence holds, so a
    scan for the lowest free id walks them every time."""
    rng = random.Random(2026)
    ops = [("allocate", 0, 150_000 * BLOCK_SIZE)]
    live, next_id = [], 1
    while len(ops) < CALLS:
        roll = rng.random()
        if roll < 0.25 or not live:
            ops.append(("allocate", next_id, rng.randint(1, 40)))
            live.append(next_id)
            next_id += 1
        elif roll < 0.35:
            ops.append(("fork", rng.choice(live), next_id))
            live.append(next_id)
            next_id += 1
        elif roll < 0.75:
            ops.append(("append", rng.choice(live)))
        else:
            i = rng.randrange(len(live))
            live[i], live[-1] = live[-1], live[i]
            ops.append(("free", live.pop()))
    return ops


def _replay(module, ops):
    a = module.BlockAllocator(NUM_BLOCKS, BLOCK_SIZE)
    results = []
    for name, *args in ops:
        try:
            results.append(getattr(a, name)(*args))
        except Exception as exc:  # noqa: BLE001 - compared by type name below
            results.append(type(exc).__name__)
        results.append(a.num_free_blocks())
    return results


@graded(1, 5, "200,000 blocks, 30,000 calls: within 10x of the reference (a heap of free ids, a free counter)")
@pytest.mark.complexity
@pytest.mark.timeout(60)
def test_large_pool_speed(impl):
    ops = _workload()
    got, want = compare_speed("30,000 calls on BlockAllocator(200000, 16)", lambda: _replay(impl, ops),
                              lambda: _replay(reference(), ops), answer=lambda r: [digest(x) for x in r],
                              hint=SLOW_HINT)
    bad = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if not same(digest(g), w)), None)
    assert bad is None and len(got) == len(want), (
        f"Called the 30,000-call workload. Result {bad} differs from the reference's: "
        + (f"{got[bad]!r}." if bad is not None else f"{len(got)} results, expected {len(want)}."))

