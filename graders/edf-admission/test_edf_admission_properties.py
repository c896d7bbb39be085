"""Hidden suite, level 1: random job sets against the slow oracle, the promise that every admitted
job meets its deadline, and the timed workload against the reference."""

import random

import pytest
from edf_admission_oracle import SLOW_HINT, check, check_schedule, oracle, reference
from hypothesis import example, given
from hypothesis import strategies as st

from kata.checks import check_speed, digest, graded, property_settings

PROPERTY = property_settings(80)
JOB = st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 12), st.integers(1, 5), st.integers(0, 25))
JOBS = st.lists(JOB, max_size=9, unique_by=lambda spec: spec[0])


@graded(1, 6, "random job sets (ties, same instants, overload) match a unit-by-unit oracle")
@PROPERTY
@given(specs=JOBS)
@example(specs=[("b", 1, 1, 9), ("a", 1, 1, 9), ("c", 0, 3, 3)])
@example(specs=[("a", 0, 4, 10), ("b", 1, 2, 4), ("c", 2, 3, 6), ("d", 3, 1, 3), ("e", 5, 2, 12),
                ("f", 5, 2, 11), ("g", 6, 1, 10)])
def test_matches_oracle(impl, specs):
    jobs = [impl.Job(*spec) for spec in specs]
    check_schedule(impl.schedule(jobs), oracle(jobs), f"schedule({specs!r})")


@graded(1, 3, "every admitted job finishes by its deadline, no earlier than arrival + duration")
@PROPERTY
@given(specs=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 9), st.integers(0, 60)), max_size=20))
def test_admitted_meet_deadlines(impl, specs):
    jobs = [impl.Job(f"j{i}", *spec) for i, spec in enumerate(specs)]
    got = impl.schedule(jobs)
    by_id = {job.id: job for job in jobs}
    check(type(got) is impl.Schedule, True, f"schedule({specs!r}) returns a Schedule")
    late = [i for i, end in dict.items(got.finish) if end > by_id[i].deadline]  # a dict's own items
    check(late, [], f"schedule({specs!r}): admitted jobs finishing after their deadline")
    early = [i for i, end in dict.items(got.finish) if end < by_id[i].arrival + by_id[i].duration]
    check(early, [], f"schedule({specs!r}): admitted jobs finishing before arrival + duration")


# --- the timed workload ----------------------------------------------------------

N = 20_000


def _workload(module):
    """20,000 jobs, overloaded about 3x, slack up to 600: about a hundred pending at once."""
    rng = random.Random(2026)
    jobs, t = [], 0
    for i in range(N):
        t += rng.randint(0, 3)
        duration = rng.randint(1, 8)
        jobs.append(module.Job(f"j{i}", t, duration, t + duration + rng.randint(0, 600)))
    return jobs


def _digest(result):
    return digest((result.finish, result.rejected))


@graded(1, 5, "20,000 jobs, a hundred pending: within 10x of the reference (no re-simulation per arrival)")
@pytest.mark.complexity
@pytest.mark.timeout(60)
def test_large_trace_speed(impl):
    mine = _workload(impl)
    check_speed("schedule(20,000 jobs)", lambda: impl.schedule(mine), lambda theirs: reference().schedule(theirs),
                "the result (finish or rejected)", ref_setup=lambda: _workload(reference()), answer=_digest,
                hint=SLOW_HINT)
