"""Seeded synthetic request traces: the same name and seed give the same trace, byte for byte.

    make_workload("chat", num_requests=1000, seed=0, rate=20.0)  -> list[Request]

Workloads:
    chat           Poisson arrivals; prompt and output lengths lognormal, like chat traffic
                   (median prompt 128 tokens, median output 200, long right tails).
    bursty         the chat lengths, but arrivals come in bursts (gamma inter-arrival times with
                   a coefficient of variation of ~3): queues build up, then drain.
    shared-prefix  every prompt starts with one of 4 system prompts of 512 tokens, followed by a
                   short user turn: the case prefix caching exists for.

Those are open-loop: arrival times are fixed in advance, however slow the server. A closed loop
(`make_closed_loop`) is N users, each sending a request, waiting for its answer, thinking, then
sending the next: a slow server slows the arrivals down, as real chat users do. Its arrival times
exist only while it is simulated (kata/engine/cluster.py). Each user's first request comes after
a first think time, so the users start spread out rather than all at t = 0.

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


# --- closed loop -------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Turn:
    """One request of a closed-loop user, sent `think_time_s` after the previous answer finished
    (after t = 0 for the first)."""

    num_prompt_tokens: int
    output_len: int
    think_time_s: float


@dataclass(slots=True, frozen=True)
class ClosedLoop:
    """N users' turns, in order: users[u][k] is user u's k-th request."""

    users: tuple[tuple[Turn, ...], ...]

    @property
    def num_requests(self) -> int:
        return sum(map(len, self.users))

    @property
    def max_seq_len(self) -> int:
        """The longest prompt + output of any turn."""
        return max(t.num_prompt_tokens + t.output_len for user in self.users for t in user)


def make_closed_loop(num_users: int, requests_per_user: int, *, think_time_s: float = 10.0,
                     prompt_median: int = 512, prompt_max: int = 2048, output_median: int = 256,
                     output_max: int = 512, seed: int = 0) -> ClosedLoop:
    """N users sending `requests_per_user` requests each. Lengths are lognormal around their
    medians (sigma 0.6), clipped to [2, prompt_max] and [1, output_max]; think times are
    exponential with mean `think_time_s`.

        make_closed_loop(1000, 2, seed=0).num_requests  -> 2000
    """
    if num_users < 1 or requests_per_user < 1:
        raise ValueError(f"need num_users >= 1 and requests_per_user >= 1; got {num_users}, "
                         f"{requests_per_user}")
    if not think_time_s > 0:
        raise ValueError(f"think_time_s must be > 0, got {think_time_s!r}")
    if not (2 <= prompt_median <= prompt_max and 1 <= output_median <= output_max):
        raise ValueError("need 2 <= prompt_median <= prompt_max and 1 <= output_median <= "
                         f"output_max; got {prompt_median}, {prompt_max}, {output_median}, "
                         f"{output_max}")
    rng = np.random.default_rng(seed)
    shape = (num_users, requests_per_user)
    prompts = np.clip(rng.lognormal(np.log(prompt_median), 0.6, shape).astype(int), 2, prompt_max)
    outputs = np.clip(rng.lognormal(np.log(output_median), 0.6, shape).astype(int), 1, output_max)
    thinks = rng.exponential(think_time_s, shape)
    return ClosedLoop(tuple(
        tuple(Turn(int(p), int(o), float(t)) for p, o, t in zip(prompts[u], outputs[u], thinks[u], strict=True))
        for u in range(num_users)))
