"""Deadline scheduler with admission control: the reference solution.

The admitted unfinished jobs live in one list sorted in EDF order, each as [key, work left, job];
the server always runs the first. Between arrivals the clock advances by working off the front of
that list. An arrival is admitted when, with it inserted, the running sum of work left from now
stays within every job's deadline (O(p) for p pending jobs).

Example:
    schedule([Job("A", 0, 4, 10), Job("B", 1, 2, 4)])
    -> Schedule({"A": 6, "B": 3}, {})
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    id: str
    arrival: int
    duration: int
    deadline: int


@dataclass
class Schedule:
    finish: dict[str, int]
    rejected: dict[str, str]


def _check_int(value, name: str, minimum: int) -> None:
    if type(value) is not int or value < minimum:  # type() is int: rejects bool and 2.0
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _validate(jobs) -> None:
    seen = set()
    for job in jobs:  # each job fully before the next; its id last
        _check_int(job.arrival, "arrival", 0)
        _check_int(job.duration, "duration", 1)
        _check_int(job.deadline, "deadline", 0)
        if job.id in seen:
            raise ValueError(f"id {job.id!r} appears twice")
        seen.add(job.id)


class _Server:
    """The clock, the pending jobs in EDF order, and the finish times so far."""

    def __init__(self) -> None:
        self.now = 0
        self.pending: list[list] = []   # [(deadline, arrival, id), work left, job], EDF order
        self.finish: dict[str, int] = {}

    def run_until(self, t: int | None) -> None:
        """Do the work up to time t (None: until nothing is left), then set the clock to t."""
        while self.pending and (t is None or self.now < t):
            entry = self.pending[0]
            step = entry[1] if t is None else min(entry[1], t - self.now)
            self.now += step
            entry[1] -= step
            if entry[1] == 0:
                self.pending.pop(0)
                self.finish[entry[2].id] = self.now
        if t is not None:
            self.now = t  # idle until t when nothing was left

    def fits(self, job: Job) -> bool:
        """Whether every pending job, and `job` inserted in EDF order, finishes by its deadline."""
        key = (job.deadline, job.arrival, job.id)
        pos = bisect.bisect(self.pending, [key])
        end = self.now
        for i, entry in enumerate(self.pending):
            if i == pos:
                end += job.duration
                if end > job.deadline:
                    return False
            end += entry[1]
            if end > entry[2].deadline:
                return False
        if pos == len(self.pending):
            end += job.duration
            return end <= job.deadline
        return True

    def admit(self, job: Job) -> None:
        bisect.insort(self.pending, [(job.deadline, job.arrival, job.id), job.duration, job])


def schedule(jobs: list[Job]) -> Schedule:
    _validate(jobs)
    server = _Server()
    rejected: dict[str, str] = {}
    for job in sorted(jobs, key=lambda j: j.arrival):  # stable: list order among equal arrivals
        server.run_until(job.arrival)
        if job.arrival + job.duration > job.deadline:
            rejected[job.id] = "too_late"
        elif not server.fits(job):
            rejected[job.id] = "overload"
        else:
            server.admit(job)
    server.run_until(None)
    return Schedule(server.finish, rejected)
