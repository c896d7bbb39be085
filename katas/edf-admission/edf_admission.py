"""Deadline scheduler with admission control: your solution goes here. Read PROMPT.md first.

Standard library only. One preemptive server runs the admitted job with the earliest deadline; a
job is admitted on arrival only if every admitted job (itself included) can still meet its deadline.

Example:
    schedule([Job("A", 0, 4, 10), Job("B", 1, 2, 4)])
    -> Schedule(finish={"A": 6, "B": 3}, rejected={})
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    id: str
    arrival: int    # when it arrives, >= 0
    duration: int   # units of work, >= 1; the server does one unit per time unit
    deadline: int   # it must finish at a time <= deadline, >= 0


@dataclass
class Schedule:
    finish: dict[str, int]                 # every admitted job -> the time its last unit of work ends
    rejected: dict[str, str]               # every rejected job -> "too_late" or "overload"


def schedule(jobs: list[Job]) -> Schedule:
    """Simulate preemptive EDF with admission control (see PROMPT.md for every rule).

    EDF order: (deadline, arrival, id). Jobs are considered in (arrival, list position) order.
    Raises ValueError naming arrival, duration, deadline or id for invalid input: the jobs in
    list order, each fully before the next; within a job arrival, duration, deadline, then a
    duplicate id.
    """
    # TODO
    raise NotImplementedError
