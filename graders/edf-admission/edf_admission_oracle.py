"""Shared helpers of the edf-admission hidden suite: a slow oracle written from PROMPT.md, the
reference loaded for side-by-side timing, and the comparison of a Schedule field by field.

`oracle` shares no code with the reference: it steps the clock one time unit at a time, and decides
an arrival by simulating, unit by unit, EDF over the pending jobs plus the new one. Slow and
obviously right, for small inputs.
"""

from __future__ import annotations

import importlib.util
import resource
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

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
    """(finish, rejected, timeline) for small integer inputs."""
    arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival, i))
    pending, finish, rejected, units = {}, {}, {}, []
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
            units.append((t, first))
            pending[first][1] -= 1
            if pending[first][1] == 0:
                del pending[first]
                finish[first] = t + 1
        t += 1
    timeline = []
    for start, ident in units:
        if timeline and timeline[-1][2] == ident and timeline[-1][1] == start:
            timeline[-1] = (timeline[-1][0], start + 1, ident)
        else:
            timeline.append((start, start + 1, ident))
    return finish, rejected, timeline


def check_schedule(got, want, call: str) -> None:
    """got: a Schedule; want: (finish, rejected, timeline). Field by field, type-strict."""
    __tracebackhide__ = True
    for name, expected in zip(("finish", "rejected", "timeline"), want, strict=True):
        value = getattr(got, name, "<missing>")
        assert same(value, expected), f"Called {call}. Returned .{name} == {value!r}, expected {expected!r}."


def check(got, expected, call: str) -> None:
    __tracebackhide__ = True
    assert same(got, expected), f"Called {call}. Returned {got!r}, expected {expected!r}."


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
_reference_module = []  # loaded once


def reference():
    """The reference solution, imported under its own module name (not the learner's)."""
    if not _reference_module:
        spec = importlib.util.spec_from_file_location("edf_admission_reference", SOLUTION)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while being built
        spec.loader.exec_module(module)
        _reference_module.append(module)
    return _reference_module[0]


class TooSlow(BaseException):
    """Raised inside the implementation once it runs past its CPU budget (a BaseException, so a
    bare `except Exception` in the implementation cannot swallow it)."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def _cpu_budget(seconds: float):
    def on_prof(signum, frame):
        raise TooSlow()

    old = signal.signal(signal.SIGPROF, on_prof)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5):
    """Run the reference, then the implementation with a CPU budget of factor x the reference's
    CPU time (at least `floor` seconds). Returns (the implementation's result, the reference's)."""
    start = _cpu()
    ref_result = ref_fn()
    budget = max(factor * (_cpu() - start), floor)
    start = _cpu()
    try:
        with _cpu_budget(budget):
            result = impl_fn()
    except TooSlow:
        raise AssertionError(f"Called {call}. Still running after {budget:.2f} s of CPU time, expected "
                             f"it within {factor:g}x the reference's time: is the schedule re-simulated "
                             f"from the start, or every job scanned, at each arrival?") from None
    used = _cpu() - start
    assert used <= budget, f"Called {call}. Took {used:.2f} s of CPU time, expected at most {budget:.2f} s."
    return result, ref_result
