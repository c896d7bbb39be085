"""The traces `kata engine run --batcher/--scheduler` adds, to show where a plug-in policy differs
from the reference. The trace you ask for often leaves the KV pool half empty, where every
admission order and every victim choice gives the same rows; these two do not:

* memory pressure: the same workload, 300 requests, on 600 blocks with swap: sequences are
  preempted and swapped, so admission and victim choices change preemptions, TTFT and waste;
* a burst: the bursty workload at twice the rate, 300 requests, 1,024 blocks, counted against
  the 2-second TTFT SLO (engine.metrics.TTFT_SLO_S).

Both are simulated (no tensors): the figures are the same on any machine.

    for title, overrides, workload, rate in stress_scenarios("chat", 20.0):
        config = build_config(**{**options, **overrides})
"""

from __future__ import annotations

from kata.engine.metrics import TTFT_SLO_S

STRESS_REQUESTS = 300


def stress_scenarios(workload: str, rate: float) -> list[tuple[str, dict, str, float]]:
    """[(title, config overrides, workload, rate)] of the two extra traces."""
    return [
        (f"memory pressure: {workload}, {STRESS_REQUESTS} requests at {rate:g}/s, 600 blocks, swap",
         dict(num_blocks=600, preemption="swap", compute=False), workload, rate),
        (f"burst: bursty, {STRESS_REQUESTS} requests at {2 * rate:g}/s, 1,024 blocks, "
         f"{TTFT_SLO_S:g} s TTFT SLO",
         dict(num_blocks=1024, compute=False), "bursty", 2 * rate),
    ]
