"""Turn a run into the figures serving engineers quote: latency percentiles, throughput, memory.

Per request (simulated seconds):
    TTFT  time to first token      = first_token_time - arrival_time
    TPOT  time per output token    = (finish_time - first_token_time) / (num_output_tokens - 1)
    E2E   end-to-end latency       = finish_time - arrival_time
Per step, weighted by the step's duration:
    KV utilisation   blocks in use / all blocks
    KV waste         reserved token slots holding no token / reserved slots. Under paging this
                     is the internal fragmentation of each sequence's last block; when a request
                     reserves its maximum length up front it is mostly the unused reservation.
Counters: preemptions, prefix-cache hit rate (prompt tokens found cached / prompt tokens looked up),
and requests whose TTFT broke the SLO (TTFT_SLO_S, a 2-second time to first token).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import numpy as np

from kata.engine.sequence import Sequence

TTFT_SLO_S = 2.0  # a request whose first token takes longer breaks the SLO


class MetricsRecorder:
    """Collects one sample per step; cheap enough for 100k-request simulations."""

    def __init__(self) -> None:
        # (end time, duration, blocks in use, tokens held, slots reserved) per step
        self.samples: list[tuple[float, float, int, int, int]] = []

    def record_step(self, now: float, duration: float, used_blocks: int, tokens: int,
                    reserved: int) -> None:
        self.samples.append((now, duration, used_blocks, tokens, reserved))

    def columns(self) -> tuple[np.ndarray, ...]:
        """(times, durations, used_blocks, tokens, reserved) as float64 arrays."""
        data = np.asarray(self.samples, dtype=np.float64).reshape(-1, 5)
        return tuple(data.T)


@dataclass(slots=True)
class Metrics:
    num_requests: int
    num_steps: int
    makespan_s: float  # first arrival to last finish
    output_tokens_per_s: float
    total_tokens_per_s: float  # prompt + output
    requests_per_s: float
    ttft_p50: float
    ttft_p90: float
    ttft_p99: float
    tpot_p50: float
    tpot_p90: float
    tpot_p99: float
    e2e_p50: float
    e2e_p90: float
    e2e_p99: float
    kv_utilization_mean: float
    kv_utilization_peak: float
    kv_waste: float
    num_preemptions: int
    prefix_cache_hit_rate: float
    ttft_slo_violations: int  # requests with TTFT > TTFT_SLO_S
    # (time, utilisation) samples for a chart, at most ~200 points
    kv_usage_over_time: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return asdict(self)


def _percentiles(values: np.ndarray) -> tuple[float, float, float]:
    if not len(values):
        return (float("nan"),) * 3
    p50, p90, p99 = np.percentile(np.asarray(values, dtype=np.float64), [50, 90, 99])
    return float(p50), float(p90), float(p99)


def summarize(seqs: Iterable[Sequence], recorder: MetricsRecorder, *, num_blocks: int,
              num_preemptions: int, cache_hit_tokens: int, cache_query_tokens: int) -> Metrics:
    """Metrics of a finished run. `seqs`: every finished sequence."""
    # One pass over the sequences into columns; the rest is array arithmetic (the same float64
    # operations as per-sequence Python, so the same results).
    rows = [(s.arrival_time, s.first_token_time, s.finish_time, s.num_output_tokens,
             s.num_prompt_tokens) for s in seqs if s.finish_time is not None]
    arrival, first, finish, n_out, n_in = np.array(rows, dtype=np.float64).reshape(-1, 5).T
    ttft = first - arrival
    several = n_out > 1
    tpot = (finish[several] - first[several]) / (n_out[several] - 1)
    e2e = finish - arrival
    start = float(arrival.min()) if len(rows) else 0.0
    end = float(finish.max()) if len(rows) else 0.0
    makespan = max(end - start, 1e-12)
    out_tokens = int(n_out.sum())  # integers, exact in float64
    in_tokens = int(n_in.sum())

    times, dur, used, tokens, reserved = recorder.columns()
    total = dur.sum()
    util = used / num_blocks
    held = reserved > 0
    waste = np.where(held, 1.0 - tokens / np.where(held, reserved, 1.0), 0.0)
    weights = dur * held
    step = max(1, len(util) // 200)
    chart = [(float(t), float(u)) for t, u in zip(times[::step], util[::step])]
    return Metrics(
        num_requests=len(rows),
        num_steps=len(dur),
        makespan_s=makespan,
        output_tokens_per_s=out_tokens / makespan,
        total_tokens_per_s=(out_tokens + in_tokens) / makespan,
        requests_per_s=len(seqs) / makespan,
        ttft_p50=_percentiles(ttft)[0], ttft_p90=_percentiles(ttft)[1],
        ttft_p99=_percentiles(ttft)[2],
        tpot_p50=_percentiles(tpot)[0], tpot_p90=_percentiles(tpot)[1],
        tpot_p99=_percentiles(tpot)[2],
        e2e_p50=_percentiles(e2e)[0], e2e_p90=_percentiles(e2e)[1], e2e_p99=_percentiles(e2e)[2],
        kv_utilization_mean=float((util * dur).sum() / total) if total else 0.0,
        kv_utilization_peak=float(util.max()) if len(util) else 0.0,
        kv_waste=float((waste * weights).sum() / weights.sum()) if weights.sum() else 0.0,
        num_preemptions=num_preemptions,
        prefix_cache_hit_rate=cache_hit_tokens / cache_query_tokens if cache_query_tokens else 0.0,
        ttft_slo_violations=int((ttft > TTFT_SLO_S).sum()),
        kv_usage_over_time=chart,
    )
