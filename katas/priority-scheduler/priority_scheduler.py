"""Priority scheduler: your solution goes here. Read PROMPT.md first.

Standard library only (heapq is your friend). The data types below are given: do not change their
fields. Write the functions, one group per level; each level is a separate function, so a level you
have finished keeps working while you write the next one.

Example (level 1, one worker):
    reqs = [Request(1, 0, 1, 4), Request(2, 1, 0, 2), Request(3, 1, 1, 1), Request(4, 2, 0, 3)]
    schedule(reqs)[2]                    -> Outcome(id=2, start=4, finish=6, preemptions=0)
    latency_percentiles(reqs, schedule(reqs)) -> {0: (5, 7), 1: (4, 9)}
"""

from __future__ import annotations

from dataclasses import dataclass

# --- data types (given) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    id: int  # unique, >= 0
    arrival: int  # >= 0
    priority: int  # >= 0; lower = more urgent
    duration: int  # units of work, >= 0; one unit per time unit in a slot


@dataclass(frozen=True, slots=True)
class Outcome:
    id: int
    start: int  # the first instant the request was given a slot
    finish: int  # the instant its last unit of work completed
    preemptions: int = 0  # times it was taken off a slot


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    start: int  # the request held a slot and did work during [start, end)
    end: int


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    outcomes: dict[int, Outcome]  # request id -> Outcome
    checkpoint_overhead: int  # total save time + restore time


@dataclass(frozen=True, slots=True)
class TailReport:
    outcomes: dict[int, Outcome]  # request id -> Outcome
    runs: list[Run]  # every interval of work, any order
    slo_met: dict[int, bool]  # priority (every key of slo) -> P99 latency <= its bound


# --- level 1: one worker, a priority queue ----------------------------------------


def pick_next(waiting: list[Request]) -> Request:
    """The most urgent request: smallest (priority, arrival, id).

    Raises ValueError (message contains 'waiting') if waiting is empty.
    Example: pick_next([Request(1, 0, 1, 4), Request(2, 1, 0, 2)]) -> Request(2, 1, 0, 2)
    """
    # TODO
    raise NotImplementedError


def schedule(requests: list[Request]) -> dict[int, Outcome]:
    """One worker, no preemption: a free worker takes the most urgent arrived request.

    Returns request id -> Outcome(id, start, finish, 0). Raises ValueError naming the bad field.
    Example: schedule([Request(1, 0, 1, 4), Request(2, 1, 0, 2)])
             -> {1: Outcome(1, 0, 4, 0), 2: Outcome(2, 4, 6, 0)}
    """
    # TODO
    raise NotImplementedError


def percentile(values: list[int], p: int) -> int:
    """Nearest rank: the value at 1-based rank (p * n + 99) // 100 of the sorted values.

    p is an int in 1..100 (else ValueError naming 'p'); values must be non-empty (else
    ValueError naming 'values').
    Example: percentile([5, 1, 3, 2], 50) -> 2;  percentile([5, 1, 3, 2], 99) -> 5
    """
    # TODO
    raise NotImplementedError


def latency_percentiles(
    requests: list[Request], outcomes: dict[int, Outcome]
) -> dict[int, tuple[int, int]]:
    """priority -> (P50, P99) of latency (finish - arrival), for every priority with requests.

    Raises ValueError naming 'outcomes' if a request has no outcome.
    Example: see the module docstring.
    """
    # TODO
    raise NotImplementedError


# --- level 2: K slots and preemption ----------------------------------------------


def pick_victim(running: list[Request], incoming: Request) -> Request | None:
    """The running request that incoming preempts when every slot is busy, or None.

    The candidate is the least urgent running request (largest (priority, arrival, id)); it is
    preempted only if incoming.priority < its priority.
    Example: pick_victim([Request(1, 0, 2, 6), Request(2, 0, 1, 4)], Request(3, 2, 0, 3))
             -> Request(1, 0, 2, 6)
    """
    # TODO
    raise NotImplementedError


def schedule_preemptive(requests: list[Request], num_slots: int) -> dict[int, Outcome]:
    """num_slots slots; a waiting request strictly more urgent (by priority) than the least
    urgent running request preempts it. A preempted request keeps its progress.

    Raises ValueError naming 'num_slots' if it is not an int >= 1.
    """
    # TODO
    raise NotImplementedError


# --- level 3: checkpoints cost time -----------------------------------------------


def schedule_with_checkpoints(
    requests: list[Request],
    num_slots: int,
    kv_bytes_per_token: int,
    bandwidth: int,
    incremental: bool,
) -> CheckpointReport:
    """Level 2, plus save time on preemption and restore time on resume (see PROMPT.md).

    kv_bytes_per_token: int >= 0. bandwidth: int >= 1 (bytes per time unit). incremental: bool.
    Moving b bytes takes ceil(b / bandwidth) time units.
    """
    # TODO
    raise NotImplementedError


# --- level 4: aging and the tail --------------------------------------------------


def schedule_with_aging(
    requests: list[Request],
    num_slots: int,
    aging_interval: int,
    slo: dict[int, int],
) -> TailReport:
    """Your policy on the level-2 machine, keeping the four rules of PROMPT.md (nothing starves:
    no request runs while one that arrived more than priority * aging_interval before it waits).

    slo: priority -> P99 latency bound. aging_interval: int >= 1.
    """
    # TODO
    raise NotImplementedError
