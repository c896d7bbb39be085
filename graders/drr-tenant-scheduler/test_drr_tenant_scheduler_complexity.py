"""Hidden suite: schedule_drr does O(log n) work per request, timed against the reference.

20,000 requests over 200 tenants, with quantum * weight at least the largest cost (so every turn
dispatches), arriving in bursts that keep hundreds of tenants active. Scanning every request for
arrivals, or every tenant for the next turn, at each pick is tens of times slower. The
implementation fails only beyond 10 times the reference's best CPU time (kata.checks.check_speed);
a failure is confirmed by a second measurement.
"""

import random

import pytest

from kata.checks import check_speed, graded, reference_at

N = 20_000
TENANTS = 200


_reference = reference_at(__file__, "solutions/drr-tenant-scheduler.py")  # call only inside a baseline measure


def _workload():
    rng = random.Random(2828)
    tenants = [f"t{k}" for k in range(TENANTS)]
    weights = {t: rng.randint(1, 4) for t in tenants}
    spec = [(i, rng.choice(tenants), rng.randrange(N) * 3, rng.randint(1, 8)) for i in range(N)]
    return spec, weights, 8


@graded(1, 5, "20,000 requests over 200 tenants: deques and one sort, within 10x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(30)
def test_scales(impl):
    spec, weights, quantum = _workload()
    check_speed(f"schedule_drr on {N:,} requests over {TENANTS} tenants",
                lambda reqs: impl.schedule_drr(reqs, weights, quantum),
                lambda reqs: _reference().schedule_drr(reqs, weights, quantum),
                impl_setup=lambda: [impl.Request(*s) for s in spec],
                ref_setup=lambda: [_reference().Request(*s) for s in spec], floor=0.0, runs=2, confirm=True,
                hint="sort once; deques for the active list and the queues; no scan of every request per pick")
