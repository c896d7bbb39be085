"""Several replicas of the engine behind a router, simulated together on one clock.

A serving deployment runs R copies of the model (replicas), each an `LLMEngine` with its own KV
pool and scheduler, and a router that sends each arriving request to one of them. The router
sees only what a real one sees when the request arrives: how much work each replica holds.

    round-robin               request i goes to replica i mod R, whatever their load
    least-outstanding-tokens  to the replica holding the fewest outstanding tokens (prompt +
                              output tokens of its requests not finished yet); ties go to the
                              lowest replica index

The replicas share one simulated clock: the loop always advances whichever comes first, the next
arrival or the replica whose next step starts earliest, and an arrival at the instant a step
starts joins that step. A closed-loop workload (workloads.ClosedLoop) makes its arrivals here:
a user's next request arrives its think time after the previous one finished.

    cluster = Cluster(EngineConfig(compute=False, hardware="H100"), replicas=4,
                      router="least-outstanding-tokens")
    cluster.run_closed_loop(make_closed_loop(1000, 2)).metrics.e2e_p999  -> seconds

What it leaves out: the router's own latency and network time (a request reaches its replica the
instant it arrives), and replicas of different sizes.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from kata.engine.config import EngineConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.metrics import Metrics, summarize
from kata.engine.sequence import SamplingParams, Sequence
from kata.engine.workloads import ClosedLoop, Request

ROUTERS = ("round-robin", "least-outstanding-tokens")


# --- routers -------------------------------------------------------------------------------


class RoundRobin:
    """Request i to replica i mod R. Example: 5 requests over 2 replicas -> 0, 1, 0, 1, 0."""

    def __init__(self, num_replicas: int) -> None:
        self.num_replicas, self._next = num_replicas, 0

    def choose(self, outstanding: list[int]) -> int:
        i = self._next
        self._next = (i + 1) % self.num_replicas
        return i


class LeastOutstandingTokens:
    """The replica with the fewest outstanding tokens, the lowest index on a tie.
    Example: outstanding [300, 120, 120] -> 1."""

    def __init__(self, num_replicas: int) -> None:
        self.num_replicas = num_replicas

    def choose(self, outstanding: list[int]) -> int:
        return min(range(len(outstanding)), key=outstanding.__getitem__)


def make_router(name: str, num_replicas: int):
    if name not in ROUTERS:
        raise ValueError(f"router must be one of {', '.join(ROUTERS)}; got {name!r}")
    if type(num_replicas) is not int or num_replicas < 1:
        raise ValueError(f"replicas must be an int >= 1, got {num_replicas!r}")
    return (RoundRobin if name == "round-robin" else LeastOutstandingTokens)(num_replicas)


# --- the simulation -----------------------------------------------------------------------


@dataclass(slots=True)
class ClusterResult:
    """A cluster run. `metrics` covers every request; its KV figures (use, waste, the chart) are
    those of the busiest replica (the highest peak KV use, the lowest index on a tie)."""

    metrics: Metrics
    seqs: list[Sequence]  # every finished request, all replicas
    per_replica: list[Metrics]
    assignments: list[int] = field(default_factory=list)  # replica of each request, routing order
    busiest_replica: int = 0
    wall_time_s: float = 0.0


class Cluster:
    def __init__(self, config: EngineConfig, replicas: int, router: str = "round-robin") -> None:
        if config.compute:
            raise ValueError("Cluster simulates only: set EngineConfig(compute=False)")
        self.router = make_router(router, replicas)
        self.engines = [LLMEngine(replace(config)) for _ in range(replicas)]
        self.outstanding = [0] * replicas  # tokens of unfinished requests, per replica
        self.assignments: list[int] = []
        self._ready = [0.0] * replicas  # latest arrival routed to each replica
        # (time, order, (request id, prompt tokens, output tokens)) heap
        self._arrivals: list[tuple[float, int, tuple[str, int, int]]] = []
        self._order = 0
        self._where: dict[str, tuple[int, int]] = {}  # request id -> (replica, tokens)

    # --- entry points

    def run(self, requests: Iterable[Request]) -> ClusterResult:
        """An open-loop trace: every arrival time is fixed in advance."""
        for r in requests:
            self._schedule(r.arrival_time, (r.request_id, r.num_prompt_tokens, r.output_len))
        return self._loop(on_finish=None)

    def run_closed_loop(self, loop: ClosedLoop) -> ClusterResult:
        """N users: each request arrives its turn's think time after the previous one finished."""
        turns = loop.users

        def on_finish(seq: Sequence) -> None:
            user, k = map(int, seq.request_id[1:].split("-"))
            if k + 1 < len(turns[user]):
                nxt = turns[user][k + 1]
                assert seq.finish_time is not None  # called with a finished sequence
                self._schedule(seq.finish_time + nxt.think_time_s,
                               (f"u{user}-{k + 1}", nxt.num_prompt_tokens, nxt.output_len))

        for user, user_turns in enumerate(turns):
            if user_turns:
                first = user_turns[0]
                self._schedule(first.think_time_s,
                               (f"u{user}-0", first.num_prompt_tokens, first.output_len))
        return self._loop(on_finish)

    # --- internals

    def _schedule(self, at: float, request: tuple[str, int, int]) -> None:
        heapq.heappush(self._arrivals, (float(at), self._order, request))
        self._order += 1

    def _route(self, at: float, request: tuple[str, int, int]) -> None:
        request_id, num_prompt, num_output = request
        i = self.router.choose(list(self.outstanding))
        tokens = num_prompt + num_output
        self.outstanding[i] += tokens
        self.assignments.append(i)
        self._where[request_id] = (i, tokens)
        self._ready[i] = max(self._ready[i], at)
        self.engines[i].add_request(
            None, SamplingParams(max_tokens=num_output, ignore_eos=True),
            num_prompt_tokens=num_prompt, arrival_time=at, request_id=request_id)

    def _next_step(self) -> tuple[int, float]:
        """(replica, time its next step starts), or (-1, inf) when none has work."""
        best, best_t = -1, float("inf")
        for i, engine in enumerate(self.engines):
            if engine.has_unfinished():
                t = max(engine.clock, self._ready[i])
                if t < best_t:
                    best, best_t = i, t
        return best, best_t

    def _loop(self, on_finish) -> ClusterResult:
        start, arrivals = time.perf_counter(), self._arrivals
        while True:
            i, t = self._next_step()
            if arrivals and arrivals[0][0] <= t:  # an arrival joins the step starting then
                at, _, request = heapq.heappop(arrivals)
                self._route(at, request)
                continue
            if i < 0:
                break
            engine = self.engines[i]
            done_before = len(engine.finished_seqs)
            engine.step()
            for seq in engine.finished_seqs[done_before:]:
                self.outstanding[i] -= self._where[seq.request_id][1]
                if on_finish is not None:
                    on_finish(seq)
        return self._result(time.perf_counter() - start)

    def _result(self, wall: float) -> ClusterResult:
        per = [e.metrics() for e in self.engines]
        busiest = max(range(len(per)), key=lambda i: (per[i].kv_utilization_peak, -i))
        seqs = [s for e in self.engines for s in e.finished_seqs]
        b = self.engines[busiest]
        bm = b.block_manager
        metrics = summarize(seqs, b.recorder, num_blocks=bm.num_blocks,
                            num_preemptions=sum(m.num_preemptions for m in per),
                            cache_hit_tokens=sum(e.block_manager.num_cache_hit_tokens
                                                 for e in self.engines),
                            cache_query_tokens=sum(e.block_manager.num_cache_query_tokens
                                                   for e in self.engines))
        return ClusterResult(metrics, seqs, per, list(self.assignments), busiest, wall)
