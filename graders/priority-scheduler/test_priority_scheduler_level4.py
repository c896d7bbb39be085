"""Hidden suite, level 4: the learner's own policy, graded by the four rules of the prompt and by
the tail latency of priority 0 on seeded traces, against the reference's baseline policy.

Nothing here compares schedules for equality: any policy that keeps the rules passes the rule
tests, and the score tests compare one figure (the summed P99 of priority 0) at thresholds.
"""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from priority_scheduler_oracle import (SLOW_HINT, bursty_trace, latencies_by_class, nearest_rank, overloaded_trace,
                                       reference, rule_violation)

from kata.checks import baseline, compare_speed, graded
from kata.strict import same


def reqs_of(impl, rows):
    return [impl.Request(*row) for row in rows]


def assert_rules(impl, rows, k, a, slo, rules=(2, 3, 4), what=None):
    reqs = reqs_of(impl, rows)
    report = impl.schedule_with_aging(reqs, k, a, slo)
    problem = rule_violation(reqs, report, k, a, slo, rules)
    call = f"schedule_with_aging({what or rows}, {k}, {a}, {slo})"
    assert problem is None, f"Called {call}. In the result, {problem}; expected every rule of level 4 to hold."
    return report


STREAM = [(1, 0, 0, 4), (2, 0, 3, 2)] + [(10 + i, 4 * i + 1, 0, 4) for i in range(5)]


# --- the rules and the SLO report, one case each --------------------------------


@graded(4, 2, "the prompt's level-4 example keeps every rule and reports its SLOs")
def test_prompt_example(impl):
    report = assert_rules(impl, STREAM, 1, 3, {0: 9, 3: 14}, what="prompt example")
    lat = latencies_by_class(reqs_of(impl, STREAM), {i: o.finish for i, o in report.outcomes.items()})
    expected = {0: nearest_rank(lat[0], 99) <= 9, 3: nearest_rank(lat[3], 99) <= 14}
    assert same(report.slo_met, expected), (
        f"Called schedule_with_aging(prompt example, 1, 3, {{0: 9, 3: 14}}). slo_met was {report.slo_met}, "
        f"expected {expected} for your own outcomes."
    )


@graded(4, 3, "aging: a low-priority request behind an endless urgent stream is not overtaken by requests arriving more than priority * A after it")
def test_aging_lets_the_starved_request_through(impl):
    rows = [(1, 0, 3, 3)] + [(100 + i, 2 * i, 0, 2) for i in range(40)]
    report = assert_rules(impl, rows, 1, 5, {}, rules=(3, 4), what="a priority-3 request behind 40 back-to-back priority-0 requests")
    assert report.outcomes[1].finish <= 20, (
        f"Called schedule_with_aging(a priority-3 request at 0 behind a stream of priority-0 requests, 1, 5, {{}}). "
        f"It finished at {report.outcomes[1].finish}, expected by 20 (requests arriving after 15 may not run while it waits)."
    )


@graded(4, 1, "no requests: empty outcomes and runs, every SLO met")
def test_empty_input(impl):
    report = impl.schedule_with_aging([], 2, 5, {0: 10, 3: 0})
    runs = [r for r in report.runs if r.end > r.start]
    got = (report.outcomes, runs, report.slo_met)
    expected = ({}, [], {0: True, 3: True})
    assert same(got, expected), f"Called schedule_with_aging([], 2, 5, {{0: 10, 3: 0}}). Returned {got}, expected {expected}."


@graded(4, 2, "an SLO met exactly (P99 latency equal to the bound) counts as met: <=, not <")
def test_slo_met_at_equal_bound(impl):
    report = assert_rules(impl, [(1, 2, 0, 5)], 1, 4, {0: 5})
    assert same(report.slo_met, {0: True}), (
        f"Called schedule_with_aging([(1, 2, 0, 5)], 1, 4, {{0: 5}}). slo_met was {report.slo_met}, expected {{0: True}} (latency 5 <= 5)."
    )


@graded(4, 1, "an SLO one below the P99 latency is missed")
def test_slo_missed(impl):
    report = assert_rules(impl, [(1, 2, 0, 5)], 1, 4, {0: 4})
    assert same(report.slo_met, {0: False}), (
        f"Called schedule_with_aging([(1, 2, 0, 5)], 1, 4, {{0: 4}}). slo_met was {report.slo_met}, expected {{0: False}} (latency 5 > 4)."
    )


@graded(4, 2, "the SLO is judged on P99 by nearest rank (of 3 values, the largest), not the median or the mean")
def test_slo_uses_p99(impl):
    rows = [(1, 0, 0, 1), (2, 0, 0, 2), (3, 0, 0, 10)]  # 3 slots: latencies 1, 2, 10 whatever the policy
    for bound, expected in ((9, False), (10, True)):
        report = assert_rules(impl, rows, 3, 4, {0: bound})
        assert same(report.slo_met, {0: expected}), (
            f"Called schedule_with_aging({rows}, 3, 4, {{0: {bound}}}). slo_met was {report.slo_met}, "
            f"expected {{0: {expected}}} (P99 of [1, 2, 10] is 10)."
        )


@graded(4, 2, "the SLO is judged on P99 by nearest rank: of 101 latencies that is the second largest, not the maximum")
def test_slo_uses_p99_of_101(impl):
    # one slot, 101 priority-0 requests arriving 10 apart, each done before the next arrives: whatever
    # the policy, rules 1 and 3 make each run from its arrival, so the latencies are the durations:
    # 99 of 1, one of 5, one of 9. P99 rank (99 * 101 + 99) // 100 = 100 of 101 -> 5 (the maximum is 9).
    rows = [(i, 10 * i, 0, 1) for i in range(99)] + [(99, 990, 0, 5), (100, 1000, 0, 9)]
    for bound, expected in ((4, False), (5, True), (8, True)):
        report = assert_rules(impl, rows, 1, 2, {0: bound}, what="101 priority-0 requests with latencies 1 (x99), 5, 9")
        assert same(report.slo_met, {0: expected}), (
            f"Called schedule_with_aging(101 priority-0 requests with latencies 1 (x99), 5 and 9, 1, 2, {{0: {bound}}}). "
            f"slo_met was {report.slo_met}, expected {{0: {expected}}} (P99 of 101 values is rank 100: 5)."
        )


@graded(4, 1, "a priority in slo with no requests has met its SLO")
def test_slo_class_without_requests(impl):
    report = assert_rules(impl, [(1, 0, 0, 3)], 1, 4, {0: 3, 2: 0})
    assert same(report.slo_met, {0: True, 2: True}), (
        f"Called schedule_with_aging([(1, 0, 0, 3)], 1, 4, {{0: 3, 2: 0}}). slo_met was {report.slo_met}, expected {{0: True, 2: True}}."
    )


@graded(4, 1, "slo_met has exactly the keys of slo: priorities without an SLO are not reported")
def test_slo_met_keys(impl):
    report = assert_rules(impl, [(1, 0, 0, 3), (2, 0, 1, 3)], 2, 4, {1: 100})
    assert same(report.slo_met, {1: True}), (
        f"Called schedule_with_aging([(1, 0, 0, 3), (2, 0, 1, 3)], 2, 4, {{1: 100}}). slo_met was {report.slo_met}, expected {{1: True}}."
    )


@graded(4, 1, "zero-duration requests: start == finish >= arrival, and they too may not wait while a slot idles")
def test_zero_duration_requests(impl):
    assert_rules(impl, [(1, 0, 2, 4), (2, 1, 0, 0), (3, 4, 1, 0), (4, 4, 3, 2)], 1, 2, {0: 3})


@graded(4, 1, "all requests of one priority: the rules hold (a policy that keeps them serves in arrival order)")
def test_one_priority(impl):
    rows = [(10 - i, i // 2, 2, 3 + i % 3) for i in range(8)]
    assert_rules(impl, rows, 2, 1, {2: 50})


# --- invalid input --------------------------------------------------------------

INVALID = [
    (1, 0, {}, "aging_interval"),
    (1, -2, {}, "aging_interval"),
    (1, True, {}, "aging_interval"),
    (0, 5, {}, "num_slots"),
    (1, 5, {0: -1}, "slo"),
    (1, 5, {-1: 10}, "slo"),
    (1, 5, None, "slo"),
    (1, 5, [(0, 10)], "slo"),
    (1, 2.0, {}, "aging_interval"),
    (1, None, {}, "aging_interval"),
    (1, "5", {}, "aging_interval"),
    (2.0, 5, {}, "num_slots"),
    (None, 5, {}, "num_slots"),
    (1, 5, {0: 2.0}, "slo"),
    (1, 5, {0: True}, "slo"),
    (1, 5, {True: 10}, "slo"),
]


@graded(4, 1, "invalid arguments raise ValueError naming the argument")
@pytest.mark.parametrize("k, a, slo, word", INVALID, ids=[f"{w}-{i}" for i, (*_, w) in enumerate(INVALID)])
def test_invalid_arguments(impl, k, a, slo, word):
    with pytest.raises(ValueError, match=word):
        impl.schedule_with_aging([impl.Request(1, 0, 0, 1)], k, a, slo)


# --- the rules on generated traces ------------------------------------------------

request_rows = st.integers(0, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 40), min_size=n, max_size=n, unique=True),
        st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(0, 6)), min_size=n, max_size=n),
    ).map(lambda t: [(i, *rest) for i, rest in zip(*t)])
)
slos = st.dictionaries(st.integers(0, 3), st.integers(0, 20), max_size=3)
traces = dict(rows=request_rows, k=st.integers(1, 3), a=st.integers(1, 6), slo=slos)


@graded(4, 3, "rule 1 on generated traces: every request gets exactly its duration after its arrival; outcomes match the runs")
@settings(max_examples=30)
@given(**traces)
@example(rows=[(1, 0, 2, 4), (2, 2, 0, 2)], k=1, a=5, slo={})
def test_rule1_work(impl, rows, k, a, slo):
    assert_rules(impl, rows, k, a, slo, rules=())


@graded(4, 2, "rule 2 on generated traces: never more than num_slots requests run at once")
@settings(max_examples=30)
@given(**traces)
@example(rows=[(1, 0, 2, 4), (2, 0, 1, 4), (3, 1, 0, 2)], k=2, a=5, slo={})
def test_rule2_slot_limit(impl, rows, k, a, slo):
    assert_rules(impl, rows, k, a, slo, rules=(2,))


@graded(4, 3, "rule 3 on generated traces: no slot idles while a request waits")
@settings(max_examples=30)
@given(**traces)
@example(rows=[(1, 0, 2, 4), (2, 1, 0, 0), (3, 4, 1, 0)], k=1, a=2, slo={})
@example(rows=[(1, 0, 0, 3), (2, 3, 0, 2), (3, 1, 2, 2)], k=1, a=1, slo={})
def test_rule3_no_idle_slot(impl, rows, k, a, slo):
    assert_rules(impl, rows, k, a, slo, rules=(3,))


@graded(4, 3, "rule 4 on generated traces: no request waits while one that arrived more than priority * A after it runs")
@settings(max_examples=30)
@given(**traces)
@example(rows=[(1, 0, 3, 2), (2, 0, 0, 4), (3, 4, 0, 4), (4, 8, 0, 4)], k=1, a=1, slo={})
def test_rule4_no_starvation(impl, rows, k, a, slo):
    assert_rules(impl, rows, k, a, slo, rules=(4,))


@graded(4, 2, "slo_met on generated traces: P99 by nearest rank of the returned outcomes, <= the bound, True for empty classes")
@settings(max_examples=30)
@given(**traces)
@example(rows=[(1, 0, 0, 3)], k=1, a=1, slo={0: 3, 1: 0})
def test_slo_report(impl, rows, k, a, slo):
    assert_rules(impl, rows, k, a, slo, rules=())


# --- the score: tail latency against the reference --------------------------------

SEEDS = (1, 2, 3, 4)
TRACE_N, TRACE_K, TRACE_A, TRACE_LOAD = 1500, 4, 40, 0.75
TRACE_SLO = {0: 30, 1: 120, 3: 600}


@pytest.fixture(scope="module")
def tail_cache():
    """id(module) -> (sum of P99s, problem or None), shared by the four tail tests of one pytest
    session. Not a module-level dict: a runner that calls pytest.main again in the same (or a
    forked) process, as mutmut does once per mutant, must not reuse the figures of an earlier run."""
    return {}


def _tail(module, check_rules, cache):
    """Sum over the seeded traces of the P99 latency of priority 0, and the first broken rule."""
    if id(module) in cache:
        return cache[id(module)]
    total, problem = 0, None
    for seed in SEEDS:
        reqs = bursty_trace(module.Request, seed, TRACE_N, TRACE_K, TRACE_LOAD)
        report = module.schedule_with_aging(reqs, TRACE_K, TRACE_A, TRACE_SLO)
        if check_rules and problem is None:
            problem = rule_violation(reqs, report, TRACE_K, TRACE_A, TRACE_SLO)
            if problem is not None:
                problem = f"on seeded trace {seed}, {problem}"
        if set(report.outcomes) != {r.id for r in reqs}:
            return cache.setdefault(id(module), (None, problem or f"on seeded trace {seed}, outcomes are missing"))
        lat = [report.outcomes[r.id].finish - r.arrival for r in reqs if r.priority == 0]
        total += nearest_rank(lat, 99)
    return cache.setdefault(id(module), (total, problem))


def check_tail(impl, ratio, cache):
    ref_total = baseline("the reference's summed P99", lambda: _tail(reference(), False, cache)[0])
    total, problem = _tail(impl, True, cache)
    call = (f"schedule_with_aging on {len(SEEDS)} seeded traces ({TRACE_N} requests, {TRACE_K} slots, "
            f"A={TRACE_A})")
    assert problem is None, f"Called {call}. A rule is broken: {problem}. The tail is only scored for schedules that keep the rules."
    limit = ref_total * ratio
    assert total <= limit, (
        f"Called {call}. The summed P99 latency of priority 0 was {total}, expected at most {limit:g} "
        f"({ratio:.0%} of the baseline's {ref_total})."
    )


@graded(4, 4, "tail score: P99 of priority 0 on seeded traces at or below the baseline's")
@pytest.mark.timeout(120)
def test_tail_at_or_below_baseline(impl, tail_cache):
    check_tail(impl, 1.0, tail_cache)


@graded(4, 3, "tail score: P99 of priority 0 on seeded traces within 10% of the baseline's")
@pytest.mark.timeout(120)
def test_tail_within_10_percent(impl, tail_cache):
    check_tail(impl, 1.10, tail_cache)


@graded(4, 2, "tail score: P99 of priority 0 on seeded traces within 25% of the baseline's")
@pytest.mark.timeout(120)
def test_tail_within_25_percent(impl, tail_cache):
    check_tail(impl, 1.25, tail_cache)


@graded(4, 1, "tail score: P99 of priority 0 on seeded traces within 50% of the baseline's")
@pytest.mark.timeout(120)
def test_tail_within_50_percent(impl, tail_cache):
    check_tail(impl, 1.50, tail_cache)


# --- complexity -----------------------------------------------------------------

N = 8_000


@pytest.mark.complexity
@graded(4, 2, f"{N:,} overloaded requests on 4 slots: within 10x of the reference")
@pytest.mark.timeout(120)
def test_complexity(impl):
    rows = overloaded_trace(lambda *row: row, N, 4, seed=13)
    mine = reqs_of(impl, rows)
    got, _ = compare_speed(f"schedule_with_aging({N:,} overloaded requests, 4, 40, {{0: 50}})",
                           lambda: impl.schedule_with_aging(mine, 4, 40, {0: 50}),
                           lambda theirs: reference().schedule_with_aging(theirs, 4, 40, {0: 50}),
                           ref_setup=lambda: reqs_of(reference(), rows), hint=SLOW_HINT)
    assert same(len(got.outcomes), N), f"Called schedule_with_aging({N:,} requests, ...). Returned {len(got.outcomes)} outcomes, expected {N}."
