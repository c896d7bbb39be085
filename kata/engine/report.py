"""How `kata engine run` and `kata engine compare` print a run: a metrics table (one column per
run) and a one-line chart of KV use over time. Standard library only at import; rich loads inside
_metrics_table, so `kata --help` stays fast (kata.engine.arith is standard library too).

    kv_chart([(0.0, 0.1), (1.0, 0.5), (2.0, 1.0)])  -> '▁▄█'
"""

from __future__ import annotations

from kata.engine.arith import cdiv

SPARK = " ▁▂▃▄▅▆▇█"

ROWS = [  # (label, metric field, format)
    ("requests", "num_requests", "{:.0f}"),
    ("output tokens/s", "output_tokens_per_s", "{:,.0f}"),
    ("requests/s", "requests_per_s", "{:.2f}"),
    ("TTFT p50/p90/p99 s", ("ttft_p50", "ttft_p90", "ttft_p99"), "{:.3f}"),
    ("TPOT p50/p90/p99 ms", ("tpot_p50", "tpot_p90", "tpot_p99"), "ms"),
    ("E2E p50/p90/p99 s", ("e2e_p50", "e2e_p90", "e2e_p99"), "{:.2f}"),
    ("KV use mean/peak", ("kv_utilization_mean", "kv_utilization_peak"), "%"),
    ("KV waste *", "kv_waste", "%"),
    ("preemptions", "num_preemptions", "{:.0f}"),
    ("TTFT over the {slo:g} s SLO", "ttft_slo_violations", "{:.0f}"),  # engine.metrics.TTFT_SLO_S
    ("prefix-cache hits", "prefix_cache_hit_rate", "%"),
    ("simulated time s", "makespan_s", "{:.2f}"),
    ("steps", "num_steps", "{:,.0f}"),
]
WASTE_NOTE = ("* reserved KV slots holding no token (time-weighted): under paging, the unfilled "
              "end of each last block")


def _fmt(metrics, field, fmt) -> str:
    fields = field if isinstance(field, tuple) else (field,)
    values = [getattr(metrics, f) for f in fields]
    # " / " between the parts: a narrow column wraps at the spaces, never inside a number
    if fmt == "%":
        return " / ".join(f"{v:.1%}" for v in values)
    if fmt == "ms":
        return " / ".join(f"{v * 1e3:.1f}" for v in values)
    return " / ".join(fmt.format(v) for v in values)


def _metrics_table(columns: dict):
    from rich.table import Table

    from kata.engine.metrics import TTFT_SLO_S  # (numpy: loaded by then, the runs are done)

    table = Table()
    table.add_column("metric", ratio=1)
    for name in columns:
        table.add_column(name, justify="right", overflow="fold", ratio=1)
    for label, field, fmt in ROWS:
        table.add_row(label.format(slo=TTFT_SLO_S), *(_fmt(m, field, fmt) for m in columns.values()))
    return table


def kv_chart(samples: list[tuple[float, float]], width: int = 60) -> str:
    """A one-line chart of KV utilisation over time. Example: '▁▃▅███▇▅▂'."""
    if not samples:
        return ""
    values = [u for _, u in samples]
    step = max(1, cdiv(len(values), width))
    cols = [max(values[i:i + step]) for i in range(0, len(values), step)]
    return "".join(SPARK[min(len(SPARK) - 1, round(v * (len(SPARK) - 1)))] for v in cols)


def _print_chart(console, label: str, metrics) -> None:
    end = metrics.kv_usage_over_time[-1][0] if metrics.kv_usage_over_time else 0.0
    console.print(f"KV blocks in use over time, {label} (0 to {end:.1f} s, full height = 100%):")
    console.print(f"  |{kv_chart(metrics.kv_usage_over_time)}|")
