"""Shared helpers of the edf-admission hidden suite: a slow oracle written from PROMPT.md, the
reference loaded for side-by-side timing, and the comparison of a Schedule field by field.

`oracle` shares no code with the reference: it steps the clock one time unit at a time, and decides
an arrival by simulating, unit by unit, EDF over the pending jobs plus the new one. Slow and
obviously right, for small inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kata import checks
from kata.checks import check, load_reference  # noqa: F401 - check: the suite imports it from here
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



def expect_value_error(fn, word: str, call: str) -> None:
    """fn() raises ValueError whose message contains `word`."""
    __tracebackhide__ = True
    try:
        got = fn()
    except ValueError as exc:
        assert word in str(exc), f"Called {call}. Raised ValueError({str(exc)!r}), expected it to name {word!r}."
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"Called {call}. Raised {type(exc).__name__}({exc}), expected ValueError naming {word!r}.",
                    pytrace=False)
    pytest.fail(f"Called {call}. Returned {got!r}, expected ValueError naming {word!r}.", pytrace=False)


# --- the reference, for side-by-side timing -------------------------------------

SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "edf-admission.py"
# what a solution too slow for the timing test most likely does
SLOW_HINT = "is the schedule re-simulated from the start, or every job scanned, at each arrival?"


def reference():
    """The reference solution, imported under its own module name (not the learner's)."""
    return load_reference(SOLUTION, "edf_admission_reference")


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, **how):
    """kata.checks.compare_speed with this kata's hint: (the implementation's result, the
    reference's answer); `how`: its answer= and ref_setup=."""
    __tracebackhide__ = True
    return checks.compare_speed(call, impl_fn, ref_fn, factor, floor, hint=SLOW_HINT, **how)
