"""Shared helpers of the edf-admission hidden suite: a slow oracle written from PROMPT.md, the
reference loaded for side-by-side timing, the hint a slow solution's message gives, and the
comparison of a Schedule field by field.

`oracle` shares no code with the reference: it steps the clock one time unit at a time, and decides
an arrival by simulating, unit by unit, EDF over the pending jobs plus the new one. Slow and
obviously right, for small inputs.
"""

from __future__ import annotations


from kata.checks import check, reference_at  # noqa: F401 - check: the suite imports it from here
from kata.strict import same


def _edf_key(job):
    return (job.deadline, job.arrival, job.id)


def _all_in_time(now, pending):
    """pending: {id: [job, work left]}. Run EDF unit by unit from `now`; True if nobody is late."""
    left = {i: w for i, (job, w) in pending.items()}
    jobs = {i: job for i, (job, w) in pending.items()}
    t = now
    while left:
        first = min(left, key=lambda i: _edf_key(jobs[i]))
        left[first] -= 1
        t += 1
        if left[first] == 0:
            del left[first]
            if t > jobs[first].deadline:
                return False
    return True


def oracle(jobs):
    """(finish, rejected) for small integer inputs."""
    arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival, i))
    pending, finish, rejected = {}, {}, {}
    t, k = 0, 0
    while k < len(arrivals) or pending:
        while k < len(arrivals) and jobs[arrivals[k]].arrival == t:
            job = jobs[arrivals[k]]
            k += 1
            if job.arrival + job.duration > job.deadline:
                rejected[job.id] = "too_late"
                continue
            trial = dict(pending)
            trial[job.id] = [job, job.duration]
            if _all_in_time(t, trial):
                pending[job.id] = [job, job.duration]
            else:
                rejected[job.id] = "overload"
        if pending:
            first = min(pending, key=lambda i: _edf_key(pending[i][0]))
            pending[first][1] -= 1
            if pending[first][1] == 0:
                del pending[first]
                finish[first] = t + 1
        t += 1
    return finish, rejected


def check_schedule(got, want, call: str) -> None:
    """got: a Schedule; want: (finish, rejected). Field by field, type-strict."""
    __tracebackhide__ = True
    for name, expected in zip(("finish", "rejected"), want, strict=True):
        value = getattr(got, name, "<missing>")
        assert same(value, expected), f"Called {call}. Returned .{name} == {value!r}, expected {expected!r}."


# --- the reference, for side-by-side timing -------------------------------------

# what a solution too slow for the timing test most likely does
SLOW_HINT = "is the schedule re-simulated from the start, or every job scanned, at each arrival?"


reference = reference_at(__file__, "solutions/edf-admission.py")  # call only inside a baseline measure
