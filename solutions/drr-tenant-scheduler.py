"""Weighted fair queuing across tenants by deficit round robin: reference solution.

One server. Tenants with waiting requests sit in a round-robin deque; the tenant at its head earns
quantum * weight when its turn starts and serves requests while its deficit covers their cost.
Arrivals are merged in (arrival, id) order each time the server is free.

Example:
    schedule_drr([Request(1, "a", 0, 2), Request(2, "b", 0, 1)], {"a": 1, "b": 1}, 2)
    -> DRRResult({1: Outcome(1, "a", 0, 2), 2: Outcome(2, "b", 2, 3)}, {"a": 0, "b": 2})
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    id: int
    tenant: str
    arrival: int
    cost: int


@dataclass(frozen=True)
class Outcome:
    id: int
    tenant: str
    start: int
    finish: int


@dataclass(frozen=True)
class DRRResult:
    outcomes: dict[int, Outcome]
    p99_wait: dict[str, int]


def _is_int(x) -> bool:
    return type(x) is int  # a bool is not an int here


def _check(requests, weights, quantum) -> None:
    for r in requests:  # each item fully before the next: the first broken rule wins
        if not _is_int(r.arrival) or r.arrival < 0:
            raise ValueError(f"arrival must be an int >= 0, got {r.arrival!r} (request {r.id})")
        if not _is_int(r.cost) or r.cost < 1:
            raise ValueError(f"cost must be an int >= 1, got {r.cost!r} (request {r.id})")
    for r in requests:
        if r.tenant not in weights:
            raise ValueError(f"tenant {r.tenant!r} (request {r.id}) has no weight")
    if not _is_int(quantum) or quantum < 1:
        raise ValueError(f"quantum must be an int >= 1, got {quantum!r}")


def _percentile99(values: list[int]) -> int:
    """Nearest rank: the value at 1-based rank ceil(99 * n / 100) of the sorted values."""
    ordered = sorted(values)
    return ordered[(99 * len(ordered) + 99) // 100 - 1]


def schedule_drr(requests: list[Request], weights: dict[str, int], quantum: int) -> DRRResult:
    _check(requests, weights, quantum)
    pending = sorted(requests, key=lambda r: (r.arrival, r.id))
    queues: dict[str, deque[Request]] = {}  # tenant -> its waiting requests, FIFO
    deficit: dict[str, int] = {}
    active: deque[str] = deque()  # tenants with waiting requests, round-robin order
    in_turn = False  # whether active[0] has started its turn (and been credited)
    outcomes: dict[int, Outcome] = {}
    now, nxt = 0, 0
    while nxt < len(pending) or active:
        if not active:  # idle: jump to the next arrival
            now = max(now, pending[nxt].arrival)
        while nxt < len(pending) and pending[nxt].arrival <= now:
            r = pending[nxt]
            nxt += 1
            if not queues.get(r.tenant):
                queues[r.tenant] = deque()
                deficit[r.tenant] = 0
                active.append(r.tenant)
            queues[r.tenant].append(r)
        while True:  # pick: rotate until the head tenant can pay for its first request
            tenant = active[0]
            if not in_turn:
                deficit[tenant] += quantum * weights[tenant]
                in_turn = True
            head = queues[tenant][0]
            if head.cost <= deficit[tenant]:
                break
            active.rotate(-1)  # turn over: to the back, keeping its deficit
            in_turn = False
        queues[tenant].popleft()
        deficit[tenant] -= head.cost
        outcomes[head.id] = Outcome(head.id, tenant, now, now + head.cost)
        now += head.cost
        if not queues[tenant]:  # served its last waiting request: leaves, deficit back to 0
            active.popleft()
            deficit[tenant] = 0
            in_turn = False
    waits: dict[str, list[int]] = {}
    for r in requests:
        waits.setdefault(r.tenant, []).append(outcomes[r.id].start - r.arrival)
    return DRRResult(outcomes, {t: _percentile99(w) for t, w in waits.items()})
