"""Hidden suite: plan_buckets is O(n log k), timed against the reference in the same process.

Two workloads of 40,000 requests: 5,000 boundaries with small batches (a scan of the boundaries per
request is ~100x slower than bisect), and 4 boundaries with batches of thousands (a sum or max
recomputed over the open batch per request is quadratic). The implementation fails only beyond
10 times the reference's best CPU time (kata.checks.check_speed); a failure is confirmed by a
second measurement.
"""

import random

import pytest

from kata.checks import check_speed, graded, reference_at

N = 40_000


_reference = reference_at(__file__, "solutions/length-bucket-batcher.py")  # call only inside a baseline measure


def _workload(many_buckets):
    rng = random.Random(28 + many_buckets)
    if many_buckets:
        bounds = sorted(rng.sample(range(1, 200_000), 5000))
        mbt, mbs = bounds[-1] * 16, 16
    else:
        bounds = [256, 1024, 4096, 16384]
        mbt, mbs = 16384 * 5000, 5000
    spec = [(f"r{i}", rng.randint(1, bounds[-1])) for i in range(N)]
    return spec, bounds, mbt, mbs


def _compare(impl, many_buckets, what, hint):
    spec, bounds, mbt, mbs = _workload(many_buckets)
    check_speed(f"plan_buckets on {N:,} requests {what}", lambda reqs: impl.plan_buckets(reqs, bounds, mbt, mbs),
                lambda reqs: _reference().plan_buckets(reqs, bounds, mbt, mbs),
                impl_setup=lambda: [impl.Request(i, t) for i, t in spec],
                ref_setup=lambda: [_reference().Request(i, t) for i, t in spec], floor=0.0, runs=2, confirm=True,
                hint=hint)


@graded(1, 4, "40,000 requests over 5,000 boundaries: the bucket is found by binary search, within 10x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(30)
def test_many_boundaries(impl):
    _compare(impl, True, "over 5,000 boundaries", "find the bucket by binary search, not a scan")


@graded(1, 4, "40,000 requests in batches of up to 5,000: each request costs O(1) besides the bucket search")
@pytest.mark.complexity
@pytest.mark.timeout(30)
def test_large_batches(impl):
    _compare(impl, False, "in 4 buckets with batches of up to 5,000",
             "keep running counts, do not re-sum the batch")
