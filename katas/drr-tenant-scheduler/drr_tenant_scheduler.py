"""Fair queuing across tenants by deficit round robin: your solution goes here. Read PROMPT.md first.

Standard library only. Keep the three dataclasses as they are.

Example:
    schedule_drr([Request(1, "a", 0, 2), Request(2, "b", 0, 1)], {"a": 1, "b": 1}, 2)
    -> DRRResult({1: Outcome(1, "a", 0, 2), 2: Outcome(2, "b", 2, 3)}, {"a": 0, "b": 2})
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    id: int  # unique
    tenant: str  # a key of weights
    arrival: int  # >= 0
    cost: int  # time units on the server, >= 1


@dataclass(frozen=True)
class Outcome:
    id: int
    tenant: str
    start: int
    finish: int  # start + cost


@dataclass(frozen=True)
class DRRResult:
    outcomes: dict[int, Outcome]  # request id -> its outcome, one entry per request
    p99_wait: dict[str, int]  # tenant -> nearest-rank P99 of start - arrival, tenants with requests


def schedule_drr(requests: list[Request], weights: dict[str, int], quantum: int) -> DRRResult:
    """Run one server by deficit round robin over the tenants' FIFO queues.

    A tenant earns quantum * weights[tenant] when its turn starts, dispatches its first request
    while cost <= deficit, and otherwise goes to the end of the active list keeping its deficit;
    an emptied queue resets the deficit to 0. Raises ValueError whose message begins with the
    name of the first broken rule (arrival, cost, tenant, quantum).
    """
    # TODO
    raise NotImplementedError
