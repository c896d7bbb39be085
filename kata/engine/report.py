"""How `kata engine run` and `kata engine compare` print a run: a metrics table (one column per
run) and a one-line chart of KV use over time. Standard library only at import; rich loads inside
_metrics_table, so `kata --help` stays fast (kata.engine.arith is standard library too).

    kv_chart([(0.0, 0.1), (1.0, 0.5), (2.0, 1.0)])  -> '▁▄█'
"""

from __future__ import annotations

from kata.engine.arith import cdiv

SPARK = " ▁▂▃▄▅▆▇█"

ROWS = [  # (label, metric field, format)
    ("requests", "num_requests", "{:,.0f}"),
    ("output tokens/s", "output_tokens_per_s", "{:,.0f}"),
    ("requests/s", "requests_per_s", "{:.2f}"),
    ("TTFT p50/p90/p99 s", ("ttft_p50", "ttft_p90", "ttft_p99"), "sig"),
    ("TPOT p50/p90/p99 ms", ("tpot_p50", "tpot_p90", "tpot_p99"), "ms"),
    ("E2E p50/p90/p99 s", ("e2e_p50", "e2e_p90", "e2e_p99"), "sig"),
    ("KV use mean/peak", ("kv_utilization_mean", "kv_utilization_peak"), "%"),
    ("KV waste *", "kv_waste", "%"),
    ("preemptions", "num_preemptions", "{:,.0f}"),
    ("TTFT over the {slo:g} s SLO", "ttft_slo_violations", "{:,.0f}"),  # engine.metrics.TTFT_SLO_S
    ("prefix-cache hits", "prefix_cache_hit_rate", "%"),
    ("simulated time s", "makespan_s", "{:.2f}"),
    ("steps", "num_steps", "{:,.0f}"),
]
WASTE_NOTE = ("* reserved KV slots holding no token (time-weighted): under paging, the unfilled "
              "end of each last block")


def _sig(v: float) -> str:
    """About three significant figures, never an exponent: 0.2051 -> '0.205', 1.275 -> '1.27',
    77.38 -> '77.4', 155.4 -> '155', 12345.6 -> '12,346'."""
    a = abs(v)
    return f"{v:,.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 1 else f"{v:.3f}"


def _fmt(metrics, field, fmt) -> str:
    """A cell: its parts joined by "/" with no spaces, short enough that three runs' columns fit 80
    columns unwrapped (the table keeps each cell on one line)."""
    fields = field if isinstance(field, tuple) else (field,)
    values = [getattr(metrics, f) for f in fields]
    if fmt == "%":
        return "/".join(f"{v:.1%}" for v in values)
    if fmt == "ms":
        return "/".join(_sig(v * 1e3) for v in values)
    if fmt == "sig":
        return "/".join(_sig(v) for v in values)
    return "/".join(fmt.format(v) for v in values)


def _metrics_table(columns: dict):
    from rich.table import Table

    from kata.engine.metrics import TTFT_SLO_S  # (numpy: loaded by then, the runs are done)

    import textwrap

    labels = [label.format(slo=TTFT_SLO_S) for label, _, _ in ROWS]
    cells = {name: [_fmt(m, field, fmt) for _, field, fmt in ROWS] for name, m in columns.items()}
    table = Table()
    # a label takes its own width; a cell of figures never wraps, and a run's name wraps (at its
    # spaces) to its figures' width, so three runs fit 80 columns
    table.add_column("metric", min_width=max(map(len, labels)) if len(columns) < 3 else 17)
    for name, column in cells.items():
        width = max(12, *map(len, column))
        table.add_column(textwrap.fill(name, width), justify="right", no_wrap=True)
    for i, label in enumerate(labels):
        table.add_row(label, *(column[i] for column in cells.values()))
    return table


def kv_chart(samples: list[tuple[float, float]], width: int = 60, until: float | None = None) -> str:
    """A one-line chart of KV utilisation over time. Example: '▁▃▅███▇▅▂'. With `until`, the
    chart spans 0..until seconds in `width` equal slices (a slice after the run's end is blank),
    so two runs drawn to the same `until` can be compared by eye."""
    if not samples:
        return ""
    if until is not None and until > 0:
        cols = [0.0] * width
        seen = [False] * width
        for t, u in samples:
            i = min(width - 1, int(t / until * width))
            cols[i], seen[i] = max(cols[i], u), True
        last = max((i for i in range(width) if seen[i]), default=-1)
        for i in range(1, last + 1):  # a slice with no sample inside the run holds the one before
            if not seen[i]:
                cols[i] = cols[i - 1]
        return "".join(SPARK[min(len(SPARK) - 1, round(v * (len(SPARK) - 1)))] if i <= last else " "
                       for i, v in enumerate(cols))
    values = [u for _, u in samples]
    step = max(1, cdiv(len(values), width))
    cols = [max(values[i:i + step]) for i in range(0, len(values), step)]
    return "".join(SPARK[min(len(SPARK) - 1, round(v * (len(SPARK) - 1)))] for v in cols)


def _print_chart(console, label: str, metrics) -> None:
    end = metrics.kv_usage_over_time[-1][0] if metrics.kv_usage_over_time else 0.0
    console.print(f"KV blocks in use over time, {label} (0 to {end:.1f} s, full height = 100%):")
    console.print(f"  |{kv_chart(metrics.kv_usage_over_time)}|")
