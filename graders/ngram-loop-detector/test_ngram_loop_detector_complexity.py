"""Hidden suite: feed costs O(n) per token however large the window, timed against the reference.

60,000 tokens from a small vocabulary (so n-grams repeat and the detector fires often), n = 4,
window = 5,000, fed in chunks of 1 to 400 tokens. Recounting the window per token is about
window / n times slower. The implementation fails only beyond 10 times the reference's best CPU
time (kata.checks.check_speed); a run that has clearly lost stops early, and a failure is
confirmed by a second measurement.
"""

import random

import pytest

from kata.checks import check_speed, graded, reference_at

TOKENS = 60_000
N, WINDOW, THRESHOLD = 4, 5000, 3


_reference = reference_at(__file__, "solutions/ngram-loop-detector.py")  # call only inside a baseline measure


def _chunks():
    rng = random.Random(2824)
    stream = [rng.randrange(12) for _ in range(TOKENS)]
    chunks, i = [], 0
    while i < TOKENS:
        k = rng.randint(1, 400)
        chunks.append(stream[i:i + k])
        i += k
    return chunks


def _feed(chunks):
    """Feed every chunk to a detector; the number of times it fired."""
    return lambda detector: sum(len(detector.feed(chunk)) for chunk in chunks)


@graded(1, 5, "60,000 tokens with window 5,000: O(n) per token, within 10x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(30)
def test_scales(impl):
    chunks = _chunks()
    check_speed(f"feed on each of {len(chunks)} chunks ({TOKENS:,} tokens) of LoopDetector({N}, {WINDOW}, {THRESHOLD})",
                _feed(chunks), _feed(chunks), "the number of times it fired",
                impl_setup=lambda: impl.LoopDetector(N, WINDOW, THRESHOLD),
                ref_setup=lambda: _reference().LoopDetector(N, WINDOW, THRESHOLD), floor=0.0, runs=2, confirm=True,
                hint="keep the window's n-gram counts up to date; do not recount the window per token")
