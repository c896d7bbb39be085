"""Hidden suite: latency_report is linear in the lines, timed against the reference.

55,000 shuffled lines of 5,000 requests (about ten lines each, with duplicates and malformed
lines). Rescanning the lines per request, or keeping every timestamp in a list that is searched
for each new line, is far more than 10x slower. The implementation fails only beyond 10 times
the reference's best CPU time (kata.checks.check_speed); a failure is confirmed by a second
measurement.
"""

import random

import pytest

from kata.checks import check_speed, graded, reference_at

REQUESTS = 5_000


_reference = reference_at(__file__, "solutions/token-latency-log.py")  # call only inside a baseline measure


def _workload():
    rng = random.Random(2826)
    lines = []
    for k in range(REQUESTS):
        t = rng.randrange(10**6)
        lines.append(f"{t} req-{k} start")
        for i in range(8):
            lines.append(f"{t + 50 + 20 * i + rng.randrange(5)} req-{k} token {i}")
        lines.append(f"{t + 400} req-{k} end")
    lines += [lines[rng.randrange(len(lines))] for _ in range(REQUESTS // 2)]  # duplicates
    lines += ["garbage line"] * (REQUESTS // 2)
    rng.shuffle(lines)
    return lines


@graded(1, 5, "55,000 shuffled lines of 5,000 requests: one pass, within 10x of the reference")
@pytest.mark.complexity
@pytest.mark.timeout(30)
def test_scales(impl):
    lines = _workload()
    check_speed(f"latency_report on {len(lines):,} lines of {REQUESTS:,} requests", impl.latency_report,
                lambda mine: _reference().latency_report(mine), impl_setup=lambda: list(lines),
                ref_setup=lambda: list(lines), floor=0.0, runs=2, confirm=True, hint="one pass with a dict per request")
