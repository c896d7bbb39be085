"""Visible tests for replica-router: the prompt's examples and a few more.

Run them with `kata check replica-router`. The hidden suite checks many more cases, and every
level's hidden tests run again when you submit a later level.
"""

import pytest


def run(impl, rows):
    """rows: (query, expected output) pairs; checks solution() on the whole list."""
    queries = [list(q) for q, _ in rows]
    expected = [out for _, out in rows]
    got = impl.solution(queries)
    assert isinstance(got, list) and len(got) == len(expected), (
        f"Called solution({queries}). Returned {got!r}, expected {expected!r}.")
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == e, f"Query {i + 1}, {queries[i]}, returned {g!r}, expected {e!r}."


# --- level 1 -----------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_example_level1(impl):
    run(impl, [
        (["ADD_REPLICA", "r1", "2"], "true"),
        (["ADD_REPLICA", "r2", "1"], "true"),
        (["ADD_REPLICA", "r1", "5"], "false"),
        (["ROUTE", "a", "acme"], "r1"),
        (["ROUTE", "b", "acme"], "r2"),
        (["ROUTE", "c", "beta"], "r1"),
        (["ROUTE", "d", "beta"], "queued"),
        (["ROUTE", "a", "beta"], ""),
        (["COMPLETE", "b"], "true"),
        (["STATUS", "d"], "r2"),
        (["COMPLETE", "b"], "false"),
        (["STATUS", "b"], ""),
    ])


@pytest.mark.level(1)
def test_load_is_running_over_capacity(impl):
    run(impl, [
        (["ADD_REPLICA", "big", "10"], "true"),
        (["ADD_REPLICA", "small", "2"], "true"),
        (["ROUTE", "a", "t"], "big"),
        (["ROUTE", "b", "t"], "small"),
        (["ROUTE", "c", "t"], "big"),
        (["ROUTE", "d", "t"], "big"),
    ])


@pytest.mark.level(1)
def test_waiting_requests_go_in_arrival_order(impl):
    run(impl, [
        (["ROUTE", "z", "t1"], "queued"),
        (["ROUTE", "y", "t2"], "queued"),
        (["ADD_REPLICA", "r1", "1"], "true"),
        (["STATUS", "z"], "r1"),
        (["COMPLETE", "y"], "false"),
        (["COMPLETE", "z"], "true"),
        (["STATUS", "y"], "r1"),
    ])


# --- level 2 -----------------------------------------------------------------


@pytest.mark.level(2)
def test_prompt_example_level2(impl):
    run(impl, [
        (["ADD_REPLICA", "r1", "4"], "true"),
        (["ADD_REPLICA", "r2", "2"], "true"),
        (["ROUTE", "q1", "acme"], "r1"),
        (["ROUTE", "q2", "acme"], "r2"),
        (["ROUTE", "q3", "beta"], "r1"),
        (["ROUTE", "q10", "acme"], "r1"),
        (["LOAD", "r1"], "3/4"),
        (["TOP_REPLICAS", "5"], "r1(3/4),r2(1/2)"),
        (["ROUTE", "q4", "beta"], "r2"),
        (["TOP_REPLICAS", "1"], "r2(2/2)"),
        (["ROUTE", "q5", "beta"], "r1"),
        (["ROUTE", "q6", "beta"], "queued"),
        (["TENANT_REQUESTS", "beta"], "q3@r1,q4@r2,q5@r1,q6@queued"),
        (["TENANT_REQUESTS", "acme"], "q1@r1,q10@r1,q2@r2"),
        (["TOP_TENANTS", "5"], "beta(4),acme(3)"),
        (["LOAD", "r9"], ""),
    ])


@pytest.mark.level(2)
def test_empty_answers(impl):
    run(impl, [
        (["TOP_REPLICAS", "3"], ""),
        (["TOP_TENANTS", "3"], ""),
        (["TENANT_REQUESTS", "acme"], ""),
        (["ADD_REPLICA", "r1", "2"], "true"),
        (["ROUTE", "a", "acme"], "r1"),
        (["TOP_REPLICAS", "0"], ""),
        (["LOAD", "r1"], "1/2"),
    ])


# --- level 3 -----------------------------------------------------------------


@pytest.mark.level(3)
def test_prompt_example_level3(impl):
    run(impl, [
        (["ADD_REPLICA", "r1", "2"], "true"),
        (["ROUTE", "a", "t1", "2"], "r1"),
        (["ROUTE", "b", "t1", "2"], "r1"),
        (["ROUTE", "c", "t2"], "queued"),
        (["ROUTE", "d", "t2", "7"], "r1"),
        (["STATUS", "b"], "queued"),
        (["ADD_REPLICA", "r2", "1"], "true"),
        (["STATUS", "b"], "r2"),
        (["DRAIN", "r1"], "true"),
        (["COMPLETE", "a"], "true"),
        (["STATUS", "c"], "queued"),
        (["COMPLETE", "d"], "true"),
        (["LOAD", "r1"], ""),
        (["ADD_REPLICA", "r1", "1"], "true"),
        (["STATUS", "c"], "r1"),
    ])


@pytest.mark.level(3)
def test_equal_priority_never_preempts(impl):
    run(impl, [
        (["ADD_REPLICA", "r1", "1"], "true"),
        (["ROUTE", "a", "t", "4"], "r1"),
        (["ROUTE", "b", "t", "4"], "queued"),
        (["ROUTE", "c", "t", "5"], "r1"),
        (["STATUS", "a"], "queued"),
        (["ROUTE", "d", "t", "10"], ""),
    ])


# --- level 4 -----------------------------------------------------------------


@pytest.mark.level(4)
def test_prompt_example_level4(impl):
    run(impl, [
        (["ADD_REPLICA", "r1", "1"], "true"),
        (["SET_WEIGHT", "gold", "3"], "true"),
        (["ROUTE", "x", "free"], "r1"),
        (["ROUTE", "f1", "free"], "queued"),
        (["ROUTE", "g1", "gold"], "queued"),
        (["COMPLETE", "x"], "true"),
        (["STATUS", "g1"], "r1"),
        (["ROUTE", "g2", "gold"], "queued"),
        (["COMPLETE", "g1"], "true"),
        (["STATUS", "f1"], "r1"),
        (["SET_LIMIT", "free", "1"], "true"),
        (["ROUTE", "f2", "free"], "queued"),
        (["ADD_REPLICA", "r2", "2"], "true"),
        (["ROUTE", "f3", "free"], "queued"),
        (["SET_LIMIT", "free", "2"], "true"),
        (["STATUS", "f3"], "queued"),
        (["TENANT_REQUESTS", "free"], "f1@r1,f2@r2,f3@queued"),
    ])


@pytest.mark.level(4)
def test_invalid_settings_change_nothing(impl):
    run(impl, [
        (["SET_WEIGHT", "t", "0"], "false"),
        (["SET_WEIGHT", "t", "101"], "false"),
        (["SET_WEIGHT", "t", "100"], "true"),
        (["SET_LIMIT", "t", "-1"], "false"),
        (["SET_LIMIT", "t", "0"], "true"),
        (["ADD_REPLICA", "r1", "1"], "true"),
        (["ROUTE", "a", "t"], "queued"),
        (["ROUTE", "b", "u"], "r1"),
    ])
