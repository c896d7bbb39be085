"""Authoring check, run by hand (not collected: no test_ prefix): for every workload the suite
judges in full, the window of passing plans, measured by sweeping GPUs per replica and replicas
(the reference plan's other settings kept), must be at least as wide as level 1's. A plan passes
when the engine says it holds the SLO and costs at most cost_factor times the reference plan.
The width is the number of distinct GPU counts (replicas * tensor_parallel_size) that pass.

    python graders/serving-plan/serving_plan_windows.py      # about a minute; prints each window
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from serving_plan_oracle import JUDGED, REFERENCE  # noqa: E402

from kata.engine.config import MODEL_PRESETS  # noqa: E402
from kata.engine.design import evaluate  # noqa: E402


def window(key) -> dict[int, list[tuple[int, int]]]:
    """GPU count -> the (tensor_parallel_size, replicas) that pass on that workload."""
    lv, ref = JUDGED[key], REFERENCE[key]
    limit = lv.cost_factor * evaluate(ref, lv).cost
    heads = MODEL_PRESETS[lv.model].num_kv_heads
    most = int(ref.num_gpus * lv.cost_factor) + 2  # cost grows with the GPUs: none past this
    passing: dict[int, list[tuple[int, int]]] = {}
    for tp in (t for t in (1, 2, 4, 8) if heads % t == 0):
        for replicas in range(1, most // tp + 1):
            plan = replace(ref, tensor_parallel_size=tp, replicas=replicas)
            try:
                report = evaluate(plan, lv)
            except ValueError:  # does not fit memory
                continue
            if report.slo_held and report.cost <= limit:
                passing.setdefault(tp * replicas, []).append((tp, replicas))
    return dict(sorted(passing.items()))


def main() -> None:
    widths, outside = {}, []
    for key in JUDGED:
        w = window(key)
        widths[key] = len(w)
        if REFERENCE[key].num_gpus not in w:
            outside.append(key)
        print(f"{key!s:14} width {len(w)}: " + ", ".join(
            f"{g} GPUs {' '.join(f'{tp}x{r}' for tp, r in c)}" for g, c in w.items()))
    low = {k: v for k, v in widths.items() if v < widths[1]}
    assert not low, f"windows narrower than level 1's ({widths[1]}): {low}"
    assert not outside, f"reference plans outside their own windows: {outside}"


if __name__ == "__main__":
    main()
