"""Hidden suite, level 1: accounts, usage ids, the quota and its exact boundary (no timestamps)."""

import copy

import pytest
from api_quota_ledger_oracle import calls, expect, expect_oracle
from hypothesis import example, given

from kata.checks import property_settings
from kata.strict import same

PROPERTY = property_settings(120)

L1 = pytest.mark.level(1)


@L1
@pytest.mark.points(2)
@pytest.mark.edge("the prompt's level-1 example")
def test_prompt_example(impl):
    expect(impl, [
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


@L1
@pytest.mark.points(1)
@pytest.mark.edge("an empty list of queries answers []")
def test_empty_call(impl):
    got = impl.solution([])
    assert same(got, []), f"Called solution([]). Returned {got!r}, expected []."


@L1
@pytest.mark.points(1)
@pytest.mark.edge("a call of a single query answers a list of one string")
def test_single_query(impl):
    expect(impl, [(["OPEN", "acme", "pro"], "true")])
    expect(impl, [(["BALANCE", "acme"], "")])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("a new account: USAGE 0, BALANCE the whole quota")
def test_new_account_has_full_quota(impl):
    expect(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["USAGE", "acme"], "0"),
        (["BALANCE", "acme"], "1000"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("OPEN of an account already open answers false and the account keeps its first plan")
def test_duplicate_open_keeps_first_plan(impl):
    expect(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["OPEN", "acme", "scale"], "false"),
        (["BALANCE", "acme"], "1000"),
        (["RECORD", "acme", "m", "1001"], ""),
        (["OPEN", "acme", "free"], "false"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("OPEN on a plan not in the table answers false and opens nothing")
def test_unknown_plan_opens_nothing(impl):
    expect(impl, [
        (["OPEN", "acme", "gold"], "false"),
        (["BALANCE", "acme"], ""),
        (["RECORD", "acme", "m", "1"], ""),
        (["OPEN", "acme", "pro"], "true"),
        (["BALANCE", "acme"], "20000"),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("plan names are case-sensitive: Pro and FREE are not plans")
def test_plan_names_are_case_sensitive(impl):
    expect(impl, [
        (["OPEN", "a", "Pro"], "false"),
        (["OPEN", "a", "FREE"], "false"),
        (["OPEN", "a", "pro "], "false"),
        (["USAGE", "a"], ""),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("account names are case-sensitive: acme and Acme are two accounts")
def test_account_names_are_case_sensitive(impl):
    expect(impl, [
        (["OPEN", "acme", "free"], "true"),
        (["OPEN", "Acme", "pro"], "true"),
        (["RECORD", "Acme", "m", "5000"], "u1"),
        (["BALANCE", "acme"], "1000"),
        (["BALANCE", "Acme"], "15000"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("free's quota is 1,000 tokens: 1,000 fits, 1,001 does not")
def test_free_quota(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "1001"], ""),
        (["RECORD", "a", "m", "1000"], "u1"),
        (["BALANCE", "a"], "0"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("pro's quota is 20,000 tokens: 20,000 fits, one more token does not")
def test_pro_quota(impl):
    expect(impl, [
        (["OPEN", "a", "pro"], "true"),
        (["RECORD", "a", "m", "20001"], ""),
        (["RECORD", "a", "m", "20000"], "u1"),
        (["RECORD", "a", "m", "1"], ""),
        (["USAGE", "a"], "20000"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("scale's quota is 500,000 tokens: 500,000 fits, 500,001 does not")
def test_scale_quota(impl):
    expect(impl, [
        (["OPEN", "a", "scale"], "true"),
        (["BALANCE", "a"], "500000"),
        (["RECORD", "a", "m", "500001"], ""),
        (["RECORD", "a", "m", "499999"], "u1"),
        (["RECORD", "a", "m", "2"], ""),
        (["RECORD", "a", "m", "1"], "u2"),
        (["BALANCE", "a"], "0"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("a RECORD bringing used exactly to the quota is accepted; one token more is refused")
def test_exact_boundary_accumulated(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "999"], "u1"),
        (["RECORD", "a", "m", "2"], ""),
        (["RECORD", "a", "m", "1"], "u2"),
        (["RECORD", "a", "m", "1"], ""),
        (["USAGE", "a"], "1000"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("a refused RECORD changes nothing: USAGE and BALANCE stay, a smaller RECORD still fits")
def test_refused_record_changes_nothing(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "700"], "u1"),
        (["RECORD", "a", "m", "301"], ""),
        (["USAGE", "a"], "700"),
        (["BALANCE", "a"], "300"),
        (["RECORD", "a", "m", "300"], "u2"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("tokens 0 is refused")
def test_zero_tokens_refused(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "0"], ""),
        (["USAGE", "a"], "0"),
        (["RECORD", "a", "m", "1"], "u1"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("negative tokens are refused and never raise the balance")
def test_negative_tokens_refused(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "1000"], "u1"),
        (["RECORD", "a", "m", "-500"], ""),
        (["BALANCE", "a"], "0"),
        (["RECORD", "a", "m", "1"], ""),
        (["RECORD", "a", "m", "-1"], ""),
        (["USAGE", "a"], "1000"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("a RECORD for an account that is not open is refused")
def test_record_unknown_account_refused(impl):
    expect(impl, [
        (["RECORD", "ghost", "m", "5"], ""),
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "ghost", "m", "5"], ""),
        (["RECORD", "a", "m", "5"], "u1"),
        (["USAGE", "ghost"], ""),
    ])


@L1
@pytest.mark.points(3)
@pytest.mark.edge("a refused RECORD uses no id, whichever rule refused it")
def test_refused_records_use_no_id(impl):
    expect(impl, [
        (["RECORD", "a", "m", "5"], ""),
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "0"], ""),
        (["RECORD", "a", "m", "-2"], ""),
        (["RECORD", "a", "m", "1001"], ""),
        (["RECORD", "a", "m", "10"], "u1"),
        (["RECORD", "a", "m", "991"], ""),
        (["RECORD", "a", "m", "990"], "u2"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("ids count the accepted RECORDs of the whole call, over all accounts")
def test_ids_are_global(impl):
    expect(impl, [
        (["OPEN", "b", "pro"], "true"),
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m", "1"], "u1"),
        (["RECORD", "b", "m", "1"], "u2"),
        (["RECORD", "b", "m", "1"], "u3"),
        (["RECORD", "a", "m", "1"], "u4"),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("ids go past u9 with a plain decimal number: u10, u11")
def test_ids_past_nine(impl):
    rows = [(["OPEN", "a", "free"], "true")]
    rows += [(["RECORD", "a", "m", "1"], f"u{i}") for i in range(1, 12)]
    expect(impl, rows)


@L1
@pytest.mark.points(1)
@pytest.mark.edge("USAGE and BALANCE of an account that is not open answer the empty string")
def test_usage_balance_unknown_account(impl):
    expect(impl, [
        (["USAGE", "nobody"], ""),
        (["BALANCE", "nobody"], ""),
        (["OPEN", "nobody2", "gold"], "false"),
        (["BALANCE", "nobody2"], ""),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("accounts have their own quotas: one account's usage leaves another's balance alone")
def test_accounts_are_independent(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["OPEN", "b", "free"], "true"),
        (["RECORD", "a", "m", "1000"], "u1"),
        (["RECORD", "b", "m", "1000"], "u2"),
        (["BALANCE", "a"], "0"),
        (["USAGE", "b"], "1000"),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("the model does not matter at level 1: every model draws on the same quota")
def test_models_share_the_quota(impl):
    expect(impl, [
        (["OPEN", "a", "free"], "true"),
        (["RECORD", "a", "m1", "600"], "u1"),
        (["RECORD", "a", "m2", "401"], ""),
        (["RECORD", "a", "m3", "400"], "u2"),
    ])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("accounts may be named like an operation or a plan")
def test_names_like_operations(impl):
    expect(impl, [
        (["OPEN", "OPEN", "free"], "true"),
        (["OPEN", "pro", "pro"], "true"),
        (["OPEN", "free", "scale"], "true"),
        (["RECORD", "pro", "RECORD", "20000"], "u1"),
        (["RECORD", "OPEN", "free", "1000"], "u2"),
        (["BALANCE", "free"], "500000"),
        (["USAGE", "OPEN"], "1000"),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("a huge token count is refused without trouble, a huge negative one too")
def test_huge_token_counts(impl):
    expect(impl, [
        (["OPEN", "a", "scale"], "true"),
        (["RECORD", "a", "m", str(10**30)], ""),
        (["RECORD", "a", "m", str(-10**30)], ""),
        (["RECORD", "a", "m", "9007199254740993"], ""),
        (["BALANCE", "a"], "500000"),
    ])


@L1
@pytest.mark.points(1)
@pytest.mark.edge("many small RECORDs add up to the quota and not one token past it")
def test_many_small_records(impl):
    rows = [(["OPEN", "a", "free"], "true")]
    rows += [(["RECORD", "a", "m", "100"], f"u{i}") for i in range(1, 11)]
    rows += [(["RECORD", "a", "m", "1"], ""), (["BALANCE", "a"], "0")]
    expect(impl, rows)


@L1
@pytest.mark.points(2)
@pytest.mark.edge("each call starts from an empty ledger: ids restart at u1, accounts of an earlier call are not open")
def test_calls_are_independent(impl):
    first = [["OPEN", "a", "free"], ["RECORD", "a", "m", "600"]]
    second = [["USAGE", "a"], ["OPEN", "a", "pro"], ["RECORD", "a", "m", "600"], ["BALANCE", "a"]]
    expect(impl, first, ["true", "u1"])
    expect(impl, second, ["", "true", "u1", "19400"])
    expect(impl, first, ["true", "u1"])


@L1
@pytest.mark.points(2)
@pytest.mark.edge("solution does not modify its queries, and answers the same list the same way twice")
def test_queries_not_modified(impl):
    queries = [["OPEN", "a", "free"], ["RECORD", "a", "m", "600"], ["RECORD", "a", "m", "600"],
               ["BALANCE", "a"]]
    before = copy.deepcopy(queries)
    first = impl.solution(queries)
    assert same(queries, before), (
        f"Called solution({before!r}). Afterwards the queries were {queries!r}, expected them unchanged.")
    second = impl.solution(queries)
    assert same(second, first), (
        f"Called solution({before!r}) twice. Returned {second!r} the second time, expected {first!r} again.")
    assert same(first, ["true", "u1", "", "400"]), (
        f"Called solution({before!r}). Returned {first!r}, expected ['true', 'u1', '', '400'].")


@L1
@pytest.mark.points(1)
@pytest.mark.edge("answers are strings: numbers and true/false are written as text")
def test_answers_are_strings(impl):
    got = impl.solution([["OPEN", "a", "free"], ["BALANCE", "a"], ["OPEN", "a", "free"]])
    assert same(got, ["true", "1000", "false"]), (
        f"Called solution([['OPEN', 'a', 'free'], ['BALANCE', 'a'], ['OPEN', 'a', 'free']]). "
        f"Returned {got!r}, expected ['true', '1000', 'false'].")


@L1
@pytest.mark.points(8)
@pytest.mark.edge("random level-1 calls (opens, duplicates, refusals, exact fits) match a slow oracle")
@PROPERTY
@given(queries=calls(1))
@example(queries=[["OPEN", "a", "free"], ["RECORD", "a", "m", "1000"], ["RECORD", "a", "m", "1"],
                  ["OPEN", "a", "pro"], ["BALANCE", "a"]])
def test_matches_oracle(impl, queries):
    expect_oracle(impl, queries)
