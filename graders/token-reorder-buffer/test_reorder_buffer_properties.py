"""Hidden suite, level 1: random call sequences against the slow model, and the timed workload."""

import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from reorder_buffer_oracle import SLOW_HINT, Model, check, reference

from kata.checks import check_speed, graded, property_settings

PROPERTY = property_settings(80)
CALL = st.one_of(
    st.tuples(st.just("push"), st.integers(0, 14), st.sampled_from(["x", "y", ""]), st.integers(0, 3)),
    st.tuples(st.just("push"), st.integers(0, 14), st.just("z"), st.integers(0, 3)),
    st.tuples(st.just("tick"), st.integers(0, 4)),
)


@graded(1, 8, "random pushes and ticks (out of order, duplicates, late tokens, both skips), then close, match a slow model")
@PROPERTY
@given(capacity=st.integers(1, 4), max_wait=st.integers(0, 6), calls=st.lists(CALL, max_size=30), close=st.booleans())
@example(capacity=3, max_wait=5, calls=[("push", 0, "A", 0), ("push", 2, "C", 1), ("push", 2, "C", 1), ("push", 1, "B", 1),
                                        ("push", 5, "F", 1), ("push", 4, "E", 1), ("push", 6, "G", 1), ("push", 7, "H", 1),
                                        ("push", 3, "D", 1), ("push", 10, "K", 1), ("tick", 4), ("tick", 1)], close=True)
def test_matches_model(impl, capacity, max_wait, calls, close):
    b, m = impl.ReorderBuffer(capacity, max_wait), Model(capacity, max_wait)
    log, now = [f"b = ReorderBuffer({capacity}, {max_wait})"], 0
    for call in calls:
        now += call[-1]  # the last field is the time step, so now never goes back
        args = (call[1], call[2], now) if call[0] == "push" else (now,)
        log.append(f"{call[0]}{args!r}")
        check(getattr(b, call[0])(*args), getattr(m, call[0])(*args), "; ".join(log[-10:]))
        check(b.stats(), m.stats(), "; ".join(log[-10:]) + "; stats()")
    if close:
        log.append("close()")
        check(b.close(), m.close(), "; ".join(log[-10:]))
        check(b.stats(), m.stats(), "; ".join(log[-10:]) + "; stats()")


# --- the timed workload ----------------------------------------------------------

PUSHES, CAPACITY, MAX_WAIT = 100_000, 5_000, 6_000


def _workload():
    """100,000 pushes: seq i arrives about i plus up to 4,000 positions late, 0.2% never arrive and
    1% arrive twice, so the buffer stays thousands of tokens deep behind each missing one."""
    rng = random.Random(2026)
    keyed = []
    for seq in range(PUSHES):
        if rng.random() < 0.002:
            continue
        keyed.append((seq + rng.randint(0, 4000), seq))
        if rng.random() < 0.01:
            keyed.append((seq + rng.randint(0, 6000), seq))
    keyed.sort()
    return [seq for _, seq in keyed]


def _replay(module, seqs):
    b = module.ReorderBuffer(CAPACITY, MAX_WAIT)
    released = 0
    for now, seq in enumerate(seqs):
        released += len(b.push(seq, "t", now))
    released += len(b.close())
    return released, b.stats()


@graded(1, 5, "100,000 pushes with capacity 5,000 and a deep buffer: within 10x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(60)
def test_large_stream_speed(impl):
    seqs = _workload()
    check_speed("100,000 pushes on ReorderBuffer(5000, 6000), then close()", lambda: _replay(impl, seqs),
                lambda: _replay(reference(), seqs), hint=SLOW_HINT)
