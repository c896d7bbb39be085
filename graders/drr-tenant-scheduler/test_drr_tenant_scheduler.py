"""Hidden suite for drr-tenant-scheduler, level 1: deficit round robin, P99 waits, validation.

Results are compared as plain values (`_flat`), every number required to be an `int`, so a
dataclass's own `==` never decides and a float that equals an int is a mistake.
"""

import pytest
from hypothesis import example, given, strategies as st

from kata.checks import check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(80)


# --- helpers ----------------------------------------------------------------------


def _num(x):
    """An int stays itself; anything else becomes a string that no expected value equals."""
    return x if type(x) is int else f"<{type(x).__name__} {x!r}>"


def _flat(result):
    """(outcomes as sorted (key, id, tenant, start, finish), p99 as sorted (tenant, value))."""
    outs = sorted(((_num(k), _num(o.id), o.tenant, _num(o.start), _num(o.finish))
                   for k, o in dict.items(result.outcomes)), key=repr)  # a dict's own items
    p99 = sorted(((t, _num(v)) for t, v in dict.items(result.p99_wait)), key=repr)
    return outs, p99


def oracle(spec, weights, quantum):
    """The prompt's rules, literally and slowly: arrivals found by scanning every request at every
    free instant, the active list a plain list, turns marked by a set. spec: [(id, tenant,
    arrival, cost)]. Returns _flat's shape."""
    queued = set()
    queues = {}
    deficit = {}
    active = []
    started = set()  # tenants whose current turn has been credited
    start = {}
    t = min((a for _, _, a, _ in spec), default=0)
    while len(start) < len(spec):
        arrived = sorted((a, i, tn, c) for i, tn, a, c in spec if a <= t and i not in queued)
        for a, i, tn, c in arrived:
            queued.add(i)
            if not queues.get(tn):
                queues[tn] = []
                deficit[tn] = 0
                active.append(tn)
            queues[tn].append((i, c))
        if not active:
            t = min(a for i, _, a, _ in spec if i not in queued)
            continue
        while True:
            h = active[0]
            if h not in started:
                deficit[h] += quantum * weights[h]
                started.add(h)
            i, c = queues[h][0]
            if c <= deficit[h]:
                break
            active.append(active.pop(0))
            started.discard(h)
        queues[h].pop(0)
        deficit[h] -= c
        start[i] = t
        t += c
        if not queues[h]:
            active.pop(0)
            deficit[h] = 0
            started.discard(h)
    outs = sorted(((i, i, tn, start[i], start[i] + c) for i, tn, a, c in spec), key=repr)
    waits = {}
    for i, tn, a, c in spec:
        waits.setdefault(tn, []).append(start[i] - a)
    p99 = []
    for tn, w in waits.items():
        w = sorted(w)
        rank = 1
        while rank * 100 < 99 * len(w):  # smallest rank with rank >= 0.99 * n
            rank += 1
        p99.append((tn, w[rank - 1]))
    return outs, sorted(p99, key=repr)


def _reqs(impl, spec):
    return [impl.Request(*s) for s in spec]


def _check_run(impl, spec, weights, quantum, expected=None):
    got = _flat(impl.schedule_drr(_reqs(impl, spec), dict(weights), quantum))
    want = oracle(spec, weights, quantum)
    if expected is not None:
        assert same(want, expected), "grader self-check: the oracle disagrees with the stated answer"
    assert same(got, want), (
        f"Called schedule_drr({spec!r} as Requests, {weights!r}, {quantum!r}). "
        f"Returned {got!r}, expected {want!r}.")
    return got


def _starts(got):
    """{id: start} from a _flat result."""
    return {o[1]: o[3] for o in got[0]}


EXAMPLE = [(1, "A", 0, 3), (2, "A", 0, 3), (3, "B", 1, 2), (4, "A", 2, 1), (5, "B", 2, 1), (6, "C", 3, 4),
           (7, "B", 20, 2)]
EXAMPLE_W = {"A": 2, "B": 1, "C": 1}


# --- the worked example and the core rules --------------------------------------------------


@graded(1, 3, "the prompt's worked example: every outcome and every P99")
def test_prompt_example(impl):
    expected = (sorted([(1, 1, "A", 0, 3), (2, 2, "A", 5, 8), (3, 3, "B", 3, 5), (4, 4, "A", 8, 9),
                        (5, 5, "B", 9, 10), (6, 6, "C", 10, 14), (7, 7, "B", 20, 22)], key=repr),
                sorted([("A", 6), ("B", 7), ("C", 7)], key=repr))
    _check_run(impl, EXAMPLE, EXAMPLE_W, 2, expected)


@graded(1, 2, "one tenant is served FIFO by (arrival, id), whatever the list order")
def test_single_tenant_fifo(impl):
    got = _check_run(impl, [(9, "a", 0, 1), (3, "a", 0, 1), (1, "a", 1, 1), (2, "a", 0, 1)], {"a": 1}, 1)
    assert same(_starts(got), {2: 0, 3: 1, 9: 2, 1: 3})


@graded(1, 2, "equal tenants with quantum 1 and cost 1 alternate")
def test_alternate(impl):
    got = _check_run(impl, [(1, "a", 0, 1), (2, "a", 0, 1), (3, "b", 0, 1), (4, "b", 0, 1)], {"a": 1, "b": 1}, 1)
    assert same(_starts(got), {1: 0, 3: 1, 2: 2, 4: 3})


@graded(1, 2, "a deficit exactly equal to the cost pays for it (<=)")
def test_deficit_equal_to_cost_pays(impl):
    got = _check_run(impl, [(1, "a", 0, 2), (2, "a", 0, 2), (3, "b", 0, 1)], {"a": 1, "b": 1}, 2)
    assert same(_starts(got), {1: 0, 3: 2, 2: 3})


@graded(1, 2, "a turn continues across instants while the deficit lasts, with no new quantum")
def test_turn_continues_without_new_quantum(impl):
    # a: quantum 5 pays for 1 (2) and 2 (2); 3 (2) needs more: b goes first
    got = _check_run(impl, [(1, "a", 0, 2), (2, "a", 0, 2), (3, "a", 0, 2), (4, "b", 1, 1)], {"a": 1, "b": 1}, 5)
    assert same(_starts(got), {1: 0, 2: 2, 4: 4, 3: 5})


@graded(1, 2, "a tenant that cannot pay goes to the end keeping its deficit, and pays on a later turn")
def test_rotation_keeps_deficit(impl):
    # a needs 3 with quantum 1: it saves 1 per turn while b's unit requests run
    spec = [(1, "a", 0, 3)] + [(10 + k, "b", 0, 1) for k in range(5)]
    got = _check_run(impl, spec, {"a": 1, "b": 1}, 1)
    assert same(_starts(got)[1], 2)


@graded(1, 2, "an emptied queue resets the deficit to 0: a tenant rejoining starts from its quantum only")
def test_empty_queue_resets_deficit(impl):
    # a leaves with deficit 2 (reset to 0); at 2 its 5-cost request needs two fresh quanta of 3,
    # so b's request goes first. Keeping the 2 would pay for it at once.
    spec = [(1, "a", 0, 1), (3, "a", 2, 5), (4, "b", 2, 1)]
    got = _check_run(impl, spec, {"a": 1, "b": 1}, 3)
    assert same(_starts(got), {1: 0, 4: 2, 3: 3})


@graded(1, 2, "the deficit of a tenant whose queue empties is 0 when it rejoins, not what it had left")
def test_rejoin_with_zero_deficit(impl):
    # a: quantum 4, serves cost 1, leaves (would keep 3). Rejoins at 1 with cost 4 vs b's cost-4 request.
    spec = [(1, "a", 0, 1), (2, "b", 1, 2), (3, "a", 1, 6), (4, "b", 1, 2)]
    _check_run(impl, spec, {"a": 1, "b": 1}, 4)


@graded(1, 2, "a request arriving at the exact instant another finishes is queued before the pick")
def test_arrival_at_finish_instant(impl):
    # at 3, a has spent its quantum; b arrives exactly at 3 and goes before a's next request
    got = _check_run(impl, [(1, "a", 0, 3), (2, "a", 0, 3), (3, "b", 3, 1)], {"a": 1, "b": 1}, 3)
    assert same(_starts(got), {1: 0, 3: 3, 2: 4})


@graded(1, 2, "a request arriving one unit after the pick is not considered in it")
def test_arrival_after_pick(impl):
    got = _check_run(impl, [(1, "a", 0, 3), (2, "a", 0, 3), (3, "b", 4, 1)], {"a": 1, "b": 1}, 3)
    assert same(_starts(got), {1: 0, 2: 3, 3: 6})


@graded(1, 2, "a newly active tenant joins the end of the active list, behind tenants that rotated")
def test_new_tenant_joins_end(impl):
    spec = [(1, "a", 0, 2), (2, "a", 0, 2), (3, "b", 0, 2), (4, "b", 0, 2), (5, "c", 1, 1)]
    got = _check_run(impl, spec, {"a": 1, "b": 1, "c": 1}, 2)
    assert same(_starts(got), {1: 0, 3: 2, 5: 4, 2: 5, 4: 7})


@graded(1, 2, "tenants activated at the same instant join in (arrival, id) order, not name or list order")
def test_same_instant_activation_order(impl):
    spec = [(5, "a", 0, 1), (2, "z", 0, 1), (3, "m", 0, 1)]
    got = _check_run(impl, spec, {"a": 1, "z": 1, "m": 1}, 1)
    assert same(_starts(got), {2: 0, 3: 1, 5: 2})


@graded(1, 2, "weights multiply the quantum: weight 3 serves three unit requests per turn")
def test_weights_multiply_quantum(impl):
    spec = [(k, "heavy", 0, 1) for k in range(1, 7)] + [(k, "light", 0, 1) for k in range(11, 14)]
    got = _check_run(impl, spec, {"heavy": 3, "light": 1}, 1)
    assert same(_starts(got), {1: 0, 2: 1, 3: 2, 11: 3, 4: 4, 5: 5, 6: 6, 12: 7, 13: 8})


@graded(1, 1, "the server is first free at the earliest arrival, not at 0")
def test_first_arrival_late(impl):
    _check_run(impl, [(1, "a", 7, 2)], {"a": 1}, 2, ([(1, 1, "a", 7, 9)], [("a", 0)]))


@graded(1, 2, "an idle server jumps to the next arrival; the deficit of a tenant that left is gone")
def test_idle_gap(impl):
    _check_run(impl, [(1, "a", 0, 1), (2, "a", 10, 2), (3, "b", 10, 1)], {"a": 2, "b": 1}, 1,
               (sorted([(1, 1, "a", 0, 1), (2, 2, "a", 10, 12), (3, 3, "b", 12, 13)], key=repr),
                [("a", 0), ("b", 2)]))


@graded(1, 2, "an idle gap of 10**18 time units costs nothing, and times past 2**53 stay exact")
@pytest.mark.timeout(5)
def test_huge_times_exact(impl):
    big = 10**18 + 1
    _check_run(impl, [(1, "a", 0, 1), (2, "a", big, 3), (3, "b", big, 2)], {"a": 1, "b": 1}, 3,
               (sorted([(1, 1, "a", 0, 1), (2, 2, "a", big, big + 3), (3, 3, "b", big + 3, big + 5)], key=repr),
                [("a", 0), ("b", 3)]))


@graded(1, 1, "a quantum past 2**53 is exact")
@pytest.mark.timeout(5)
def test_huge_quantum(impl):
    q = 2**60 + 1
    _check_run(impl, [(1, "a", 0, q), (2, "b", 0, 1), (3, "a", 0, 1)], {"a": 1, "b": 1}, q)


@graded(1, 2, "a lone tenant paying a cost of several quanta past 2**53 earns exactly the whole quanta it needs, "
              "and keeps the exact remainder for its next request")
@pytest.mark.timeout(5)
def test_lone_tenant_huge_quanta_exact(impl):
    q = 2**55 + 1  # cost - one quantum = q + 1, which a float rounds to q: one turn short
    spec = [(1, "a", 0, 2 * q + 1), (2, "a", 0, q - 1), (3, "b", 1, 1)]
    got = _check_run(impl, spec, {"a": 1, "b": 1}, q)
    assert same(_starts(got), {1: 0, 2: 2 * q + 1, 3: 3 * q})


@graded(1, 1, "a single tenant whose request needs several quanta is credited once per turn")
def test_single_tenant_many_turns(impl):
    _check_run(impl, [(1, "a", 0, 7), (2, "a", 0, 1)], {"a": 1}, 2,
               (sorted([(1, 1, "a", 0, 7), (2, 2, "a", 7, 8)], key=repr), [("a", 7)]))


@graded(1, 2, "a lone tenant that cannot pay starts a new turn at once, adding a quantum, and keeps what is left")
def test_lone_tenant_new_turn_keeps_deficit(impl):
    # a alone: 2 + 2 + 2 = 6 pays for cost 5 at 0, leaving 1, which pays for 2 at 5 when b has
    # joined; then a cannot pay for 3 and b (arrived at 5) goes first.
    spec = [(1, "a", 0, 5), (2, "a", 0, 1), (3, "a", 0, 1), (4, "b", 5, 1)]
    got = _check_run(impl, spec, {"a": 1, "b": 1}, 2)
    assert same(_starts(got), {1: 0, 2: 5, 4: 6, 3: 7})


@graded(1, 1, "a cost 10 times quantum * weight is paid after 10 turns")
def test_cost_ten_quanta(impl):
    # a (weight 2) needs 10 turns of 2 for cost 20; b's unit requests run one per turn meanwhile
    spec = [(1, "a", 0, 20)] + [(10 + k, "b", 0, 1) for k in range(12)]
    got = _check_run(impl, spec, {"a": 2, "b": 1}, 1)
    assert same(_starts(got)[1], 9)


# --- P99 -----------------------------------------------------------------------------------


@graded(1, 2, "P99 of 100 waits is the 99th smallest, not the largest")
def test_p99_of_100(impl):
    spec = [(k, "a", 0, 1) for k in range(100)]  # waits 0..99
    got = _check_run(impl, spec, {"a": 1}, 1)
    assert same(got[1], [("a", 98)])


@graded(1, 2, "P99 of 101 waits is rank 100; of 2 waits, the larger")
def test_p99_ranks(impl):
    got = _check_run(impl, [(k, "a", 0, 1) for k in range(101)], {"a": 1}, 1)
    assert same(got[1], [("a", 99)])
    got = _check_run(impl, [(1, "b", 0, 5), (2, "b", 0, 1)], {"b": 1}, 5)
    assert same(got[1], [("b", 5)])


@graded(1, 1, "a tenant in weights with no request has no p99_wait key")
def test_p99_only_tenants_with_requests(impl):
    _check_run(impl, [(1, "a", 0, 1)], {"a": 1, "idle": 5}, 1, ([(1, 1, "a", 0, 1)], [("a", 0)]))


@graded(1, 1, "no requests: empty outcomes and empty p99_wait")
def test_empty(impl):
    _check_run(impl, [], {"a": 1}, 3, ([], []))


@graded(1, 1, "the result is the stub's dataclasses: a DRRResult of dicts, Outcome values keyed by id")
def test_result_types(impl):
    res = impl.schedule_drr(_reqs(impl, EXAMPLE), dict(EXAMPLE_W), 2)
    kinds = (type(res) is impl.DRRResult, type(res.outcomes) is dict, type(res.p99_wait) is dict,
             all(type(o) is impl.Outcome and o.id == k for k, o in res.outcomes.items()))
    assert same(kinds, (True, True, True, True)), f"Called schedule_drr on the prompt's example. Returned {res!r}."


@graded(1, 1, "the arguments are not modified")
def test_arguments_unchanged(impl):
    reqs = _reqs(impl, list(reversed(EXAMPLE)))
    ids = [r.id for r in reqs]
    weights = dict(EXAMPLE_W)
    got = _flat(impl.schedule_drr(reqs, weights, 2))
    assert same(([r.id for r in reqs], weights), (ids, EXAMPLE_W)), "schedule_drr changed its requests or weights."
    assert same(got, oracle(list(reversed(EXAMPLE)), EXAMPLE_W, 2)), (
        f"Called schedule_drr on the prompt's example. Returned {got!r}, a wrong schedule.")


# --- property -------------------------------------------------------------------------------


@st.composite
def _cases(draw):
    tenants = ["a", "b", "c"][: draw(st.integers(1, 3))]
    n = draw(st.integers(0, 12))
    # ids i * 3 % 17 are unique and out of arrival order
    spec = [(i * 3 % 17, draw(st.sampled_from(tenants)), draw(st.integers(0, 12)), draw(st.integers(1, 6)))
            for i in range(n)]
    weights = {t: draw(st.integers(1, 3)) for t in tenants}
    return spec, weights, draw(st.integers(1, 5))


@graded(1, 6, "random workloads agree with a slow oracle that follows the prompt's steps literally")
@PROPERTY
@given(_cases())
@example(([(0, "a", 0, 6), (3, "b", 0, 1), (6, "a", 0, 1)], {"a": 1, "b": 2}, 1))
@example(([(0, "a", 0, 2), (3, "b", 2, 2), (6, "a", 2, 2)], {"a": 1, "b": 1}, 2))
def test_matches_oracle(impl, case):
    spec, weights, quantum = case
    _check_run(impl, spec, weights, quantum)


# --- invalid input --------------------------------------------------------------------------

BAD_INT = [True, 2.0, None, "2"]
BAD_IDS = ["bool", "float", "None", "str"]


@graded(1, 2, "a bad arrival (negative, bool, float, None, str) names arrival")
@pytest.mark.parametrize("bad", [-1] + BAD_INT, ids=["negative"] + BAD_IDS)
def test_arrival_invalid(impl, bad):
    check_raises(lambda: impl.schedule_drr([impl.Request(1, "a", bad, 1)], {"a": 1}, 1), "arrival",
                 f"schedule_drr([Request(1, 'a', {bad!r}, 1)], {{'a': 1}}, 1)")


@graded(1, 2, "a bad cost (0, negative, bool, float, None, str) names cost")
@pytest.mark.parametrize("bad", [0, -2] + BAD_INT, ids=["zero", "negative"] + BAD_IDS)
def test_cost_invalid(impl, bad):
    check_raises(lambda: impl.schedule_drr([impl.Request(1, "a", 0, bad)], {"a": 1}, 1), "cost",
                 f"schedule_drr([Request(1, 'a', 0, {bad!r})], {{'a': 1}}, 1)")


@graded(1, 1, "a request whose tenant has no weight names tenant")
def test_tenant_without_weight(impl):
    check_raises(lambda: impl.schedule_drr([impl.Request(1, "a", 0, 1), impl.Request(2, "b", 0, 1)], {"a": 1}, 1),
                 "tenant", "schedule_drr([Request(1, 'a', 0, 1), Request(2, 'b', 0, 1)], {'a': 1}, 1)")


@graded(1, 2, "a bad quantum (0, negative, bool, float, None, str) names quantum")
@pytest.mark.parametrize("bad", [0, -1] + BAD_INT, ids=["zero", "negative"] + BAD_IDS)
def test_quantum_invalid(impl, bad):
    check_raises(lambda: impl.schedule_drr([impl.Request(1, "a", 0, 1)], {"a": 1}, bad), "quantum",
                 f"schedule_drr([Request(1, 'a', 0, 1)], {{'a': 1}}, {bad!r})")


@graded(1, 3, "two broken rules at once: the prompt's order decides (fields item by item, then tenant, then quantum)")
@pytest.mark.parametrize("which", ["item-before-coverage", "arrival-cost", "cost1-arrival2", "cost-tenant-same-item",
                                   "tenant-quantum", "request-quantum", "late-item", "late-tenant"])
def test_validation_order_pairs(impl, which):
    R = impl.Request
    cases = {
        "item-before-coverage": ("cost", ([R(1, "zz", 0, 1), R(2, "a", 0, 0)], {"a": 1}, 1)),
        "arrival-cost": ("arrival", ([R(1, "a", None, None)], {"a": 1}, 1)),
        "cost1-arrival2": ("cost", ([R(1, "a", 0, 0), R(2, "a", -1, 1)], {"a": 1}, 1)),
        "cost-tenant-same-item": ("cost", ([R(1, "zz", 0, -1)], {"a": 1}, 1)),
        "tenant-quantum": ("tenant", ([R(1, "zz", 0, 1)], {"a": 1}, 0)),
        "request-quantum": ("arrival", ([R(1, "a", -1, 1)], {"a": 1}, 0)),
        "late-item": ("cost", ([R(i, "a", i, 1) for i in range(2000)] + [R(5000, "a", 0, 2.5)], {"a": 1}, 1)),
        "late-tenant": ("tenant", ([R(i, "a", i, 1) for i in range(2000)] + [R(5000, "zz", 0, 1)], {"a": 1}, None)),
    }
    name, args = cases[which]
    check_raises(lambda: impl.schedule_drr(*args), name, f"schedule_drr with two broken rules ({which})")
