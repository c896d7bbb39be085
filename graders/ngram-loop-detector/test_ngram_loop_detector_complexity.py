"""Hidden suite: feed costs O(n) per token however large the window, timed against the reference.

60,000 tokens from a small vocabulary (so n-grams repeat and the detector fires often), n = 4,
window = 5,000, fed in chunks of 1 to 400 tokens. Recounting the window per token is about
window / n times slower. The implementation fails only beyond FACTOR times the reference's best
time; a run that has clearly lost stops early, and a failure is confirmed by a second measurement.
"""

import random
import time
from pathlib import Path

import pytest

from kata.checks import baseline, load_reference
from kata.strict import same

FACTOR = 10
TOKENS = 60_000
N, WINDOW, THRESHOLD = 4, 5000, 3
SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "ngram-loop-detector.py"
INF = float("inf")


def _reference():
    """The reference, only inside a baseline measure (in a batch it runs apart)."""
    return load_reference(SOLUTION, "ngram_loop_detector_reference")


def _chunks():
    rng = random.Random(2824)
    stream = [rng.randrange(12) for _ in range(TOKENS)]
    chunks, i = [], 0
    while i < TOKENS:
        k = rng.randint(1, 400)
        chunks.append(stream[i:i + k])
        i += k
    return chunks


def _run(module, chunks, budget=INF):
    """(seconds, fired count); INF once the run exceeds `budget`."""
    d = module.LoopDetector(N, WINDOW, THRESHOLD)
    fired = 0
    start = time.process_time()
    for chunk in chunks:
        fired += len(d.feed(chunk))
        if time.process_time() - start > budget:
            return INF, fired
    return time.process_time() - start, fired


@pytest.mark.level(1)
@pytest.mark.points(5)
@pytest.mark.complexity
@pytest.mark.timeout(30)
@pytest.mark.edge("60,000 tokens with window 5,000: O(n) per token, within 10x of the reference")
def test_scales(impl):
    chunks = _chunks()

    def measure():
        runs = [_run(_reference(), chunks) for _ in range(2)]
        return min(r[0] for r in runs), runs[0][1]
    ref, want = baseline("the best of two times, and the count", measure)
    got, fired = _run(impl, chunks, 2 * FACTOR * ref)
    if got > FACTOR * ref:  # a loaded machine can stall one run: confirm
        got, fired = _run(impl, chunks, 2 * FACTOR * ref)
    shown = f"more than {2 * FACTOR}x the reference" if got == INF else f"{got * 1000:.0f} ms"
    assert got <= FACTOR * ref, (
        f"Fed {TOKENS} tokens in {len(chunks)} chunks to LoopDetector({N}, {WINDOW}, {THRESHOLD}). Took {shown}, "
        f"expected at most {FACTOR}x the reference's {ref * 1000:.0f} ms (keep the window's n-gram counts "
        "up to date; do not recount the window per token).")
    assert same(fired, want), f"Fired {fired} times on the timed stream, expected {want}."
