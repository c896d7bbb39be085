"""Seeded synthetic traces for the hidden suite (plain tuples; tests build impl.Request from them).

A trace is chat-like traffic in bursts: lognormal prompt and output lengths, arrivals from a Poisson
process whose rate switches between calm and overload, and a mix of tight and loose time-to-first-
token deadlines. Overload is the point: a policy must choose whom to serve and whom to shed.
"""

from __future__ import annotations

import math
import random

# (id, arrival, prompt_tokens, output_tokens, ttft_deadline)
Row = tuple[str, int, int, int, int]


def _lognormal(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(round(rng.lognormvariate(math.log(median), sigma)))))


def slo_trace(seed: int, n: int = 240, mean_gap: float = 60.0, long_prompts: bool = False) -> list[Row]:
    """Requests with bursts of overload. long_prompts adds a tail of very long prompts (level 4)."""
    rng = random.Random(seed)
    rows: list[Row] = []
    t = 0.0
    for i in range(n):
        burst = (i // 40) % 2 == 1  # every other group of 40 requests arrives 4x faster
        t += rng.expovariate(1.0 / (mean_gap / 4 if burst else mean_gap))
        prompt = _lognormal(rng, 120, 0.8, 4, 900)
        if long_prompts and rng.random() < 0.12:
            prompt = rng.randint(900, 1800)
        output = _lognormal(rng, 40, 0.9, 1, 300)
        if rng.random() < 0.05:
            output = 0
        tight = rng.random() < 0.6
        deadline = rng.randint(300, 1200) if tight else rng.randint(2500, 8000)
        rows.append((f"r{i}", int(t), prompt, output, deadline))
    return rows


def bulk_trace(seed: int, n: int) -> list[tuple[str, int, int, int]]:
    """A long level-1/2 trace: (id, arrival, prompt_tokens, output_tokens), a few per time unit."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append((f"q{i}", i // 4, rng.randint(1, 40), rng.randint(0, 3)))
    return rows
