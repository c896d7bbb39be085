"""Seeded synthetic request traces: the same name and seed give the same trace, byte for byte.

    make_workload("chat", num_requests=1000, seed=0, rate=20.0)  -> list[Request]

Workloads:
    chat           Poisson arrivals; prompt and output lengths lognormal, like chat traffic
                   (median prompt 128 tokens, median output 200, long right tails).
    bursty         the chat lengths, but arrivals come in bursts (gamma inter-arrival times with
                   a coefficient of variation of ~3): queues build up, then drain.
    shared-prefix  every prompt starts with one of 4 system prompts of 512 tokens, followed by a
                   short user turn: the case prefix caching exists for.

Lengths are clipped so prompt + output fits max_model_len. Each request also gets a priority in
{0, 1, 2} (0 most urgent) for the priority policy. Prompt token ids are bytes (with a BOS token
first); `with_token_ids=False` leaves them out, for fast simulations without prefix caching.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kata.engine.config import BOS_TOKEN_ID


@dataclass(slots=True, frozen=True)
class Request:
    request_id: str
    arrival_time: float  # seconds from the start of the trace
    num_prompt_tokens: int
    output_len: int  # tokens it generates (its stop point; ignore_eos)
    prompt_token_ids: tuple[int, ...] | None = None
    priority: int = 0
    cache_salt: str | None = None  # a tenant: its prefix-cache blocks are its own


WORKLOADS = ("chat", "bursty", "shared-prefix")


def make_workload(name: str, num_requests: int, *, seed: int = 0, rate: float = 20.0,
                  max_model_len: int = 4096, with_token_ids: bool = True) -> list[Request]:
    """A trace of `num_requests` requests arriving at `rate` per second on average."""
    if name not in WORKLOADS:
        raise ValueError(f"unknown workload {name!r}; choose one of {', '.join(WORKLOADS)}")
    if num_requests < 1 or rate <= 0 or max_model_len < 8:
        raise ValueError(f"need num_requests >= 1, rate > 0, max_model_len >= 8; got "
                         f"{num_requests}, {rate}, {max_model_len}")
    rng = np.random.default_rng(seed)
    n = num_requests
    # --- arrivals
    if name == "bursty":
        shape = 0.1  # gamma with shape k has CV 1/sqrt(k): ~3.2
        gaps = rng.gamma(shape, 1.0 / (rate * shape), n)
    else:
        gaps = rng.exponential(1.0 / rate, n)  # Poisson process
    arrivals = np.cumsum(gaps) - gaps[0]  # the first request arrives at t = 0
    # --- lengths
    if name == "shared-prefix":
        system_len = min(512, max_model_len // 4)
        user = rng.lognormal(np.log(48), 0.8, n).astype(int) + 1
        prompt_lens = np.minimum(system_len + user, max_model_len // 2)
        output_lens = rng.lognormal(np.log(128), 0.8, n).astype(int) + 1
    else:
        prompt_lens = np.clip(rng.lognormal(np.log(128), 1.0, n).astype(int) + 1, 2,
                              max_model_len // 2)
        output_lens = rng.lognormal(np.log(200), 0.8, n).astype(int) + 1
    output_lens = np.clip(output_lens, 1, max_model_len - prompt_lens)
    priorities = rng.integers(0, 3, n)
    # --- token ids
    ids: list[tuple[int, ...] | None] = [None] * n
    if with_token_ids:
        if name == "shared-prefix":
            systems = [rng.integers(0, 256, system_len - 1) for _ in range(4)]
            which = rng.integers(0, 4, n)
        for i in range(n):
            if name == "shared-prefix":
                rest = rng.integers(0, 256, prompt_lens[i] - system_len)
                body = np.concatenate([systems[which[i]], rest])
            else:
                body = rng.integers(0, 256, prompt_lens[i] - 1)
            ids[i] = (BOS_TOKEN_ID, *body.tolist())
    return [Request(f"{name}-{i}", float(arrivals[i]), int(prompt_lens[i]), int(output_lens[i]),
                    ids[i], int(priorities[i])) for i in range(n)]
