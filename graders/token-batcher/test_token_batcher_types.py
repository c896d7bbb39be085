"""Hidden suite of `token-batcher`, every level: the types of every constrained field and parameter,
arguments left as they were passed, and block counts past 2**53.

PROMPT.md: every field and parameter in the invalid-input table must be an int and not a bool
(True, 2.0, "2" and None break its rule too; a ttft_deadline of None is valid at levels 1-2);
functions never modify their arguments; all sizes are ints, so a block count is an exact ceiling.
A Request or EngineConfig may reject a bad value when it is constructed, so each is built inside
the call that kata.checks.check_raises makes.
"""

from __future__ import annotations

import pytest

from kata.checks import check_raises, graded
from kata.strict import same

BAD = (True, 2.0, "2", None)
FIELDS = ("arrival", "prompt_tokens", "output_tokens")
SMALL = dict(num_blocks=8, block_size=4, max_running=2, prefill_cost=1, decode_cost=3)


def _rows(field=None, bad=None, deadline=5):
    rows = [dict(id="ok", arrival=0, prompt_tokens=2, output_tokens=1, ttft_deadline=deadline),
            dict(id="x", arrival=1, prompt_tokens=3, output_tokens=2, ttft_deadline=deadline)]
    if field is not None:
        rows[1][field] = bad
    return rows


def _requests(impl, rows):
    return [impl.Request(**row) for row in rows]


def _field_errors(impl, call, name, fields):
    """For each field and bad value: a request list whose second request has that value."""
    for field in fields:
        for bad in BAD:
            rows = _rows(field, bad)
            check_raises(lambda: call(_requests(impl, rows)), field,
                         f"{name}(requests with {field}={bad!r} in request 'x', ...)", anywhere=True)


def _unchanged(impl, call, name, deadline=5):
    """Requests passed out of arrival order stay in the caller's order, same objects."""
    rows = [dict(id=f"r{i}", arrival=a, prompt_tokens=2, output_tokens=1, ttft_deadline=deadline)
            for i, a in enumerate((3, 0, 2, 0, 1))]
    requests = _requests(impl, rows)
    before = list(requests)
    call(requests)
    got = [r.id for r in requests]
    assert same(got, [row["id"] for row in rows]), f"Called {name} on requests with arrivals 3, 0, 2, 0, 1. The caller's list became {got!r}: functions never modify their arguments."
    assert all(a is b for a, b in zip(requests, before)), f"Called {name}: the caller's list now holds other objects."


# --- level 1 ------------------------------------------------------------------------


@graded(1, 1, "plan_batches: arrival, prompt_tokens, output_tokens of True, 2.0, '2' or None raise ValueError naming the field")
def test_l1_request_field_types(impl):
    _field_errors(impl, lambda reqs: impl.plan_batches(reqs, 4, 100, 2), "plan_batches", FIELDS)


@graded(1, 1, "plan_batches: max_batch_size, max_batch_tokens, window of True, 2.0, '2' or None raise ValueError naming it")
@pytest.mark.parametrize("index,name", [(0, "max_batch_size"), (1, "max_batch_tokens"), (2, "window")])
def test_l1_parameter_types(impl, index, name):
    for bad in BAD:
        params = [4, 100, 2]
        params[index] = bad
        check_raises(lambda: impl.plan_batches(_requests(impl, _rows()), *params), name,
                     f"plan_batches(requests, {', '.join(map(repr, params))})", anywhere=True)


@graded(1, 1, "plan_batches leaves the caller's request list in its order")
def test_l1_arguments_unchanged(impl):
    _unchanged(impl, lambda reqs: impl.plan_batches(reqs, 2, 100, 1), "plan_batches")


# --- level 2 ------------------------------------------------------------------------


@graded(2, 1, "simulate_continuous: request fields of True, 2.0, '2' or None raise ValueError naming the field")
def test_l2_request_field_types(impl):
    _field_errors(impl, lambda reqs: impl.simulate_continuous(reqs, 8, 4, 2), "simulate_continuous", FIELDS)


@graded(2, 1, "simulate_continuous: num_blocks, block_size, max_running of True, 2.0, '2' or None raise ValueError naming it")
@pytest.mark.parametrize("index,name", [(0, "num_blocks"), (1, "block_size"), (2, "max_running")])
def test_l2_parameter_types(impl, index, name):
    for bad in BAD:
        params = [8, 4, 2]
        params[index] = bad
        check_raises(lambda: impl.simulate_continuous(_requests(impl, _rows()), *params), name,
                     f"simulate_continuous(requests, {', '.join(map(repr, params))})", anywhere=True)


@graded(2, 1, "simulate_continuous leaves the caller's request list in its order")
def test_l2_arguments_unchanged(impl):
    _unchanged(impl, lambda reqs: impl.simulate_continuous(reqs, 4, 2, 2), "simulate_continuous")


@graded(2, 1, "block counts are exact ceilings past 2**53: a prompt of 2**53 + 1 tokens needs 2**52 + 1 blocks of 2")
def test_l2_blocks_exact_beyond_2_53(impl):
    n = 2**53 + 1  # float(n) == 2**53: a float ceiling counts one block too few
    got = impl.simulate_continuous([impl.Request("a", 0, n, 0)], 2**52, 2, 1).rejected
    assert same(got, {"a": "exceeds_cache"}), f"Called simulate_continuous([a: prompt {n}, output 0], num_blocks=2**52, block_size=2, 1). Returned rejected {got!r}, expected {{'a': 'exceeds_cache'}}: it needs 2**52 + 1 blocks."
    result = impl.simulate_continuous([impl.Request("a", 0, n, 0)], 2**52 + 1, 2, 1)
    got = [s.blocks_in_use for s in result.steps]
    assert same(got, [2**52 + 1]), f"Called simulate_continuous([a: prompt {n}, output 0], num_blocks=2**52 + 1, block_size=2, 1). Returned blocks_in_use per step {got!r}, expected [{2**52 + 1}]."


# --- level 3 ------------------------------------------------------------------------


def _slo(impl, requests, **config):
    return impl.schedule_slo(requests, impl.EngineConfig(**dict(SMALL, **config)))


@graded(3, 1, "schedule_slo: request fields and ttft_deadline of True, 2.0, '2' (or None) raise ValueError naming the field")
def test_l3_request_field_types(impl):
    _field_errors(impl, lambda reqs: _slo(impl, reqs), "schedule_slo", FIELDS + ("ttft_deadline",))


@graded(3, 1, "schedule_slo: every EngineConfig field of True, 2.0, '2' or None raises ValueError naming it")
@pytest.mark.parametrize("name", list(SMALL))
def test_l3_config_types(impl, name):
    for bad in BAD:
        check_raises(lambda: _slo(impl, _requests(impl, _rows()), **{name: bad}), name,
                     f"schedule_slo(requests, EngineConfig({name}={bad!r}, ...))", anywhere=True)


@graded(3, 1, "schedule_slo leaves the caller's request list in its order")
def test_l3_arguments_unchanged(impl):
    _unchanged(impl, lambda reqs: _slo(impl, reqs), "schedule_slo", deadline=50)


@graded(3, 1, "schedule_slo rejects a prompt of 2**53 + 1 tokens on 2**52 blocks of 2 (an exact ceiling)")
def test_l3_blocks_exact_beyond_2_53(impl):
    n = 2**53 + 1
    got = _slo(impl, [impl.Request("a", 0, n, 0, 5)], num_blocks=2**52, block_size=2, prefill_cost=0).rejected
    assert same(got, {"a": "exceeds_cache"}), f"Called schedule_slo([a: prompt {n}, output 0], num_blocks=2**52, block_size=2). Returned rejected {got!r}, expected {{'a': 'exceeds_cache'}}: it needs 2**52 + 1 blocks."


# --- level 4 ------------------------------------------------------------------------


def _chunked(impl, requests, **config):
    return impl.schedule_chunked(requests, impl.EngineConfig(**{**SMALL, "token_budget": 8, **config}))


@graded(4, 1, "schedule_chunked and tpot_percentiles: request fields of True, 2.0, '2' or None raise ValueError naming the field")
def test_l4_request_field_types(impl):
    _field_errors(impl, lambda reqs: _chunked(impl, reqs), "schedule_chunked", FIELDS + ("ttft_deadline",))
    _field_errors(impl, lambda reqs: impl.tpot_percentiles(reqs, impl.Schedule()), "tpot_percentiles", FIELDS)


@graded(4, 1, "schedule_chunked: a token_budget of True, 2.0, '2' or None raises ValueError naming token_budget")
def test_l4_token_budget_types(impl):
    for bad in BAD:
        # max_running 1: True == 1 passes a `>= max_running` check that forgets the type
        check_raises(lambda: _chunked(impl, _requests(impl, _rows()), max_running=1, token_budget=bad), "token_budget",
                     f"schedule_chunked(requests, EngineConfig(token_budget={bad!r}, max_running=1, ...))",
                     anywhere=True)


@graded(4, 1, "schedule_chunked and tpot_percentiles leave the caller's request list in its order")
def test_l4_arguments_unchanged(impl):
    _unchanged(impl, lambda reqs: _chunked(impl, reqs), "schedule_chunked", deadline=50)
    _unchanged(impl, lambda reqs: impl.tpot_percentiles(reqs, impl.Schedule()), "tpot_percentiles")
