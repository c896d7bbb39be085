"""Visible tests for api-quota-ledger: the prompt's examples and a few more.

Run them with `kata check api-quota-ledger`. The hidden suite checks many more cases.
"""

import pytest


def run(impl, rows):
    """rows: (query, expected answer) pairs; checks the answers of one call."""
    queries = [list(q) for q, _ in rows]
    got = impl.solution(queries)
    expected = [a for _, a in rows]
    assert got == expected, f"Called solution({queries}). Returned {got}, expected {expected}."


# --- level 1 -----------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_example_level1(impl):
    run(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["OPEN", "acme", "pro"], "false"),
        (["OPEN", "beta", "gold"], "false"),
        (["RECORD", "acme", "m-s", "600"], "u1"),
        (["RECORD", "acme", "m-l", "401"], ""),
        (["RECORD", "beta", "m-s", "5"], ""),
        (["RECORD", "acme", "m-l", "400"], "u2"),
        (["RECORD", "acme", "m-s", "0"], ""),
        (["USAGE", "acme"], "1000"),
        (["BALANCE", "acme"], "0"),
        (["BALANCE", "beta"], ""),
    ])


@pytest.mark.level(1)
def test_ids_are_counted_over_all_accounts(impl):
    run(impl, [
        (["OPEN", "a", "pro"], "true"),
        (["OPEN", "b", "scale"], "true"),
        (["RECORD", "a", "m", "20001"], ""),
        (["RECORD", "b", "m", "20001"], "u1"),
        (["RECORD", "a", "m", "5"], "u2"),
        (["BALANCE", "a"], "19995"),
    ])


@pytest.mark.level(1)
def test_empty_call(impl):
    assert impl.solution([]) == []


# --- level 2 -----------------------------------------------------------------


@pytest.mark.level(2)
def test_prompt_example_level2(impl):
    run(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["OPEN", "beta", "pro"], "true"),
        (["OPEN", "core", "pro"], "true"),
        (["RECORD", "acme", "m-s", "600"], "u1"),
        (["RECORD", "beta", "m-l", "300"], "u2"),
        (["RECORD", "beta", "m-s", "300"], "u3"),
        (["RECORD", "acme", "m-l", "400"], "u4"),
        (["REFUND", "beta", "u1"], "false"),
        (["REFUND", "acme", "u1"], "true"),
        (["REFUND", "acme", "u1"], "false"),
        (["RECORD", "acme", "m-l", "200"], "u5"),
        (["TOP", "2"], "acme(600),beta(600)"),
        (["TOP", "5"], "acme(600),beta(600),core(0)"),
        (["MODELS", "acme"], "m-l(600)"),
        (["MODELS", "beta"], "m-l(300),m-s(300)"),
        (["MODELS", "core"], ""),
    ])


@pytest.mark.level(2)
def test_refund_frees_quota_but_not_ids(impl):
    run(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["RECORD", "acme", "m", "1000"], "u1"),
        (["RECORD", "acme", "m", "1"], ""),
        (["REFUND", "acme", "u01"], "false"),
        (["REFUND", "acme", "u1"], "true"),
        (["RECORD", "acme", "m", "1"], "u2"),
        (["MODELS", "acme"], "m(1)"),
    ])


# --- level 3 -----------------------------------------------------------------


@pytest.mark.level(3)
def test_prompt_example_level3(impl):
    run(impl, [
        (["0", "OPEN", "acme", "free"], "true"),
        (["3", "RECORD", "acme", "m", "700"], "u1"),
        (["12", "RECORD", "acme", "m", "200"], "u2"),
        (["13", "RECORD", "acme", "m", "50"], "u3"),
        (["14", "RECORD", "acme", "m", "10"], ""),
        (["22", "RECORD", "acme", "m", "60"], ""),
        (["22", "BALANCE", "acme"], "50"),
        (["59", "USAGE", "acme"], "950"),
        (["60", "USAGE", "acme"], "0"),
        (["60", "RECORD", "acme", "m", "1000"], "u4"),
        (["61", "REFUND", "acme", "u1"], "true"),
        (["61", "BALANCE", "acme"], "0"),
    ])


@pytest.mark.level(3)
def test_top_and_models_describe_the_current_window(impl):
    run(impl, [
        (["0", "OPEN", "a", "pro"], "true"),
        (["0", "OPEN", "b", "pro"], "true"),
        (["10", "RECORD", "a", "x", "500"], "u1"),
        (["70", "RECORD", "b", "y", "100"], "u2"),
        (["70", "TOP", "2"], "b(100),a(0)"),
        (["70", "MODELS", "a"], ""),
        (["70", "MODELS", "b"], "y(100)"),
    ])


@pytest.mark.level(3)
def test_untimed_calls_have_no_rate_limit(impl):
    run(impl, [(["OPEN", "a", "free"], "true")]
        + [(["RECORD", "a", "m", "1"], f"u{i}") for i in range(1, 6)])


# --- level 4 -----------------------------------------------------------------


@pytest.mark.level(4)
def test_prompt_example_level4(impl):
    run(impl, [
        (["0", "OPEN", "acme", "free"], "true"),
        (["5", "RECORD", "acme", "m", "900"], "u1"),
        (["7", "CHANGE_PLAN", "acme", "pro"], "true"),
        (["7", "BALANCE", "acme"], "16883"),
        (["8", "RECORD", "acme", "m", "16883"], "u2"),
        (["20", "CHANGE_PLAN", "acme", "free"], "true"),
        (["20", "BALANCE", "acme"], "-12667"),
        (["25", "REFUND", "acme", "u2"], "true"),
        (["30", "USAGE_AT", "acme", "10"], "17783"),
        (["30", "USAGE_AT", "acme", "25"], "900"),
        (["30", "USAGE_AT", "acme", "31"], ""),
        (["40", "OPEN", "beta", "pro"], "true"),
        (["40", "USAGE_AT", "beta", "39"], ""),
        (["60", "BALANCE", "acme"], "1000"),
    ])


@pytest.mark.level(4)
def test_change_at_window_start_covers_the_window(impl):
    run(impl, [
        (["0", "OPEN", "a", "free"], "true"),
        (["60", "CHANGE_PLAN", "a", "pro"], "true"),
        (["60", "CHANGE_PLAN", "a", "pro"], "false"),
        (["61", "BALANCE", "a"], "20000"),
    ])
