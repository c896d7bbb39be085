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

Percentiles (p50, p90, p99, p99.9) interpolate linearly between the two nearest ranks, numpy's
default: `percentile(values, q)` sorts the n values and reads position (n - 1) * q / 100, so
percentile([1, 2, 3, 4], 50) -> 2.5 and percentile(range(1, 1001), 99.9) -> 999.001.
Goodput (`Slo.goodput`) is the requests per second that met every limit of an SLO.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
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
    ttft_p999: float
    tpot_p999: float
    e2e_p999: float
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


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0 <= q <= 100), linear between the nearest ranks; NaN when empty.

    Example: percentile([10, 20, 30, 40], 99.9) -> 39.97 (position 3 * 0.999 = 2.997).
    """
    data = np.asarray(list(values), dtype=np.float64)
    if not 0 <= q <= 100:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    return float(np.percentile(data, q)) if len(data) else float("nan")


def _percentiles(values: np.ndarray) -> tuple[float, float, float, float]:
    if not len(values):
        return (float("nan"),) * 4
    p50, p90, p99, p999 = np.percentile(np.asarray(values, dtype=np.float64), [50, 90, 99, 99.9])
    return float(p50), float(p90), float(p99), float(p999)


@dataclass(slots=True, frozen=True)
class Slo:
    """A latency SLO: each limit in seconds (None: not part of it), held at `percentile`.

    A request meets it when its TTFT <= ttft_s, its TPOT <= tpot_s (a one-token request has no
    TPOT and meets that limit) and its E2E <= e2e_s. A run holds it when the run's percentile of
    each limited latency is within the limit.
        Slo(percentile=99.9, e2e_s=2.0)  ->  99.9% of requests finish within 2 s
    """

    percentile: float = 99.0
    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None

    def __post_init__(self) -> None:
        if not 0 < self.percentile <= 100:
            raise ValueError(f"Slo.percentile must be in (0, 100], got {self.percentile!r}")
        for name in ("ttft_s", "tpot_s", "e2e_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"Slo.{name} must be > 0 or None, got {value!r}")

    def met_by(self, seq: Sequence) -> bool:
        """Whether one finished request met every limit."""
        first, finish = _stamp(seq.first_token_time), _stamp(seq.finish_time)
        ttft, e2e = first - seq.arrival_time, finish - seq.arrival_time
        n = seq.num_output_tokens
        tpot = (finish - first) / (n - 1) if n > 1 else 0.0
        return ((self.ttft_s is None or ttft <= self.ttft_s)
                and (self.tpot_s is None or tpot <= self.tpot_s)
                and (self.e2e_s is None or e2e <= self.e2e_s))

    def goodput(self, seqs: list[Sequence], makespan_s: float) -> float:
        """Requests per second that met the SLO. Example: 990 of 1,000 over 100 s -> 9.9."""
        return sum(map(self.met_by, seqs)) / makespan_s if makespan_s > 0 else 0.0

    def held_by(self, seqs: list[Sequence]) -> bool:
        """Whether the runs' percentile of each limited latency is within its limit."""
        return all(limit is None or self.observed(seqs, name) <= limit
                   for name, limit in (("ttft", self.ttft_s), ("tpot", self.tpot_s),
                                       ("e2e", self.e2e_s)))

    def observed(self, seqs: list[Sequence], name: str) -> float:
        """The run's "ttft", "tpot" or "e2e" at this SLO's percentile (TPOT over requests of
        two or more output tokens, as in Metrics)."""
        return percentile(latencies(seqs, name), self.percentile)


def _stamp(t: float | None) -> float:
    """A finished request's first_token_time or finish_time: set by the time it finishes."""
    assert t is not None, "latencies are of finished requests"
    return t


def latencies(seqs: Iterable[Sequence], name: str) -> list[float]:
    """Every finished request's "ttft", "tpot" or "e2e", in seconds, in the order given."""
    if name == "ttft":
        return [_stamp(s.first_token_time) - s.arrival_time for s in seqs]
    if name == "e2e":
        return [_stamp(s.finish_time) - s.arrival_time for s in seqs]
    if name == "tpot":
        return [(_stamp(s.finish_time) - _stamp(s.first_token_time)) / (s.num_output_tokens - 1)
                for s in seqs if s.num_output_tokens > 1]
    raise ValueError(f"name must be ttft, tpot or e2e; got {name!r}")

def _latency_fields(name: str, values: np.ndarray) -> dict[str, float]:
    p50, p90, p99, p999 = _percentiles(values)
    return {f"{name}_p50": p50, f"{name}_p90": p90, f"{name}_p99": p99, f"{name}_p999": p999}


def summarize(seqs: Collection[Sequence], recorder: MetricsRecorder, *, num_blocks: int,
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
    chart = [(float(t), float(u)) for t, u in zip(times[::step], util[::step], strict=True)]
    return Metrics(
        num_requests=len(rows),
        num_steps=len(dur),
        makespan_s=makespan,
        output_tokens_per_s=out_tokens / makespan,
        total_tokens_per_s=(out_tokens + in_tokens) / makespan,
        requests_per_s=len(seqs) / makespan,
        **_latency_fields("ttft", ttft), **_latency_fields("tpot", tpot),
        **_latency_fields("e2e", e2e),
        kv_utilization_mean=float((util * dur).sum() / total) if total else 0.0,
        kv_utilization_peak=float(util.max()) if len(util) else 0.0,
        kv_waste=float((waste * weights).sum() / weights.sum()) if weights.sum() else 0.0,
        num_preemptions=num_preemptions,
        prefix_cache_hit_rate=cache_hit_tokens / cache_query_tokens if cache_query_tokens else 0.0,
        ttft_slo_violations=int((ttft > TTFT_SLO_S).sum()),
        kv_usage_over_time=chart,
    )
