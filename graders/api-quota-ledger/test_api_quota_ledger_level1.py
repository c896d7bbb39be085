"""Hidden suite, level 1: accounts, usage ids, the quota and its exact boundary (no timestamps)."""


from api_quota_ledger_oracle import calls, oracle
from hypothesis import example, given

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(120)


@graded(1, 1, "an empty list of queries answers []")
def test_empty_call(impl):
    run_queries(impl, [], [])


@graded(1, 1, "a call of a single query answers a list of one string")
def test_single_query(impl):
    run_queries(impl, *query_rows([(["OPEN", "acme", "pro"], "true")]))
    run_queries(impl, *query_rows([(["BALANCE", "acme"], "")]))


@graded(1, 1, "plan names are case-sensitive: Pro and FREE are not plans")
def test_plan_names_are_case_sensitive(impl):
    run_queries(impl, *query_rows([
        (["OPEN", "a", "Pro"], "false"),
        (["OPEN", "a", "FREE"], "false"),
        (["OPEN", "a", "pro "], "false"),
        (["USAGE", "a"], ""),
    ]))


@graded(1, 1, "ids go past u9 with a plain decimal number: u10, u11")
def test_ids_past_nine(impl):
    rows = [(["OPEN", "a", "free"], "true")]
    rows += [(["RECORD", "a", "m", "1"], f"u{i}") for i in range(1, 12)]
    run_queries(impl, *query_rows(rows))


@graded(1, 1, "a huge token count is refused without trouble, a huge negative one too")
def test_huge_token_counts(impl):
    run_queries(impl, *query_rows([
        (["OPEN", "a", "scale"], "true"),
        (["RECORD", "a", "m", str(10**30)], ""),
        (["RECORD", "a", "m", str(-10**30)], ""),
        (["RECORD", "a", "m", "9007199254740993"], ""),
        (["BALANCE", "a"], "500000"),
    ]))


@graded(1, 1, "many small RECORDs add up to the quota and not one token past it")
def test_many_small_records(impl):
    rows = [(["OPEN", "a", "free"], "true")]
    rows += [(["RECORD", "a", "m", "100"], f"u{i}") for i in range(1, 11)]
    rows += [(["RECORD", "a", "m", "1"], ""), (["BALANCE", "a"], "0")]
    run_queries(impl, *query_rows(rows))


@graded(1, 2, "each call starts from an empty ledger: ids restart at u1, accounts of an earlier call are not open")
def test_calls_are_independent(impl):
    first = [["OPEN", "a", "free"], ["RECORD", "a", "m", "600"]]
    second = [["USAGE", "a"], ["OPEN", "a", "pro"], ["RECORD", "a", "m", "600"], ["BALANCE", "a"]]
    run_queries(impl, first, ["true", "u1"])
    run_queries(impl, second, ["", "true", "u1", "19400"])
    run_queries(impl, first, ["true", "u1"])


@graded(1, 2, "solution does not modify its queries, and answers the same list the same way twice")
def test_queries_not_modified(impl):
    queries = [["OPEN", "a", "free"], ["RECORD", "a", "m", "600"], ["RECORD", "a", "m", "600"],
               ["BALANCE", "a"]]
    run_queries(impl, queries, ["true", "u1", "", "400"], as_given=True)
    run_queries(impl, queries, ["true", "u1", "", "400"], as_given=True, note=" a second time, on the same list")


@graded(1, 1, "answers are strings: numbers and true/false are written as text")
def test_answers_are_strings(impl):
    run_queries(impl, [["OPEN", "a", "free"], ["BALANCE", "a"], ["OPEN", "a", "free"]], ["true", "1000", "false"])


@graded(1, 8, "random level-1 calls (opens, duplicates, refusals, exact fits) match a slow oracle")
@PROPERTY
@given(queries=calls(1))
@example(queries=[["OPEN", "a", "free"], ["RECORD", "a", "m", "1000"], ["RECORD", "a", "m", "1"],
                  ["OPEN", "a", "pro"], ["BALANCE", "a"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)


test_scenario = scenarios(
    case('prompt_example', 1, 2, "the prompt's level-1 example", '''
        OPEN acme free -> true
        OPEN acme pro -> false
        OPEN beta gold -> false
        RECORD acme m-s 600 -> u1
        RECORD acme m-l 401 -> ''
        RECORD beta m-s 5 -> ''
        RECORD acme m-l 400 -> u2
        RECORD acme m-s 0 -> ''
        USAGE acme -> 1000
        BALANCE acme -> 0
        BALANCE beta -> ''
    '''),
    case('new_account_has_full_quota', 1, 1, 'a new account: USAGE 0, BALANCE the whole quota', '''
        OPEN acme free -> true
        USAGE acme -> 0
        BALANCE acme -> 1000
    '''),
    case('duplicate_open_keeps_first_plan', 1, 2, 'OPEN of an account already open answers false and the account keeps its first plan', '''
        OPEN acme free -> true
        OPEN acme scale -> false
        BALANCE acme -> 1000
        RECORD acme m 1001 -> ''
        OPEN acme free -> false
    '''),
    case('unknown_plan_opens_nothing', 1, 2, 'OPEN on a plan not in the table answers false and opens nothing', '''
        OPEN acme gold -> false
        BALANCE acme -> ''
        RECORD acme m 1 -> ''
        OPEN acme pro -> true
        BALANCE acme -> 20000
    '''),
    case('account_names_are_case_sensitive', 1, 1, 'account names are case-sensitive: acme and Acme are two accounts', '''
        OPEN acme free -> true
        OPEN Acme pro -> true
        RECORD Acme m 5000 -> u1
        BALANCE acme -> 1000
        BALANCE Acme -> 15000
    '''),
    case('free_quota', 1, 2, "free's quota is 1,000 tokens: 1,000 fits, 1,001 does not", '''
        OPEN a free -> true
        RECORD a m 1001 -> ''
        RECORD a m 1000 -> u1
        BALANCE a -> 0
    '''),
    case('pro_quota', 1, 2, "pro's quota is 20,000 tokens: 20,000 fits, one more token does not", '''
        OPEN a pro -> true
        RECORD a m 20001 -> ''
        RECORD a m 20000 -> u1
        RECORD a m 1 -> ''
        USAGE a -> 20000
    '''),
    case('scale_quota', 1, 2, "scale's quota is 500,000 tokens: 500,000 fits, 500,001 does not", '''
        OPEN a scale -> true
        BALANCE a -> 500000
        RECORD a m 500001 -> ''
        RECORD a m 499999 -> u1
        RECORD a m 2 -> ''
        RECORD a m 1 -> u2
        BALANCE a -> 0
    '''),
    case('exact_boundary_accumulated', 1, 2, 'a RECORD bringing used exactly to the quota is accepted; one token more is refused', '''
        OPEN a free -> true
        RECORD a m 999 -> u1
        RECORD a m 2 -> ''
        RECORD a m 1 -> u2
        RECORD a m 1 -> ''
        USAGE a -> 1000
    '''),
    case('refused_record_changes_nothing', 1, 2, 'a refused RECORD changes nothing: USAGE and BALANCE stay, a smaller RECORD still fits', '''
        OPEN a free -> true
        RECORD a m 700 -> u1
        RECORD a m 301 -> ''
        USAGE a -> 700
        BALANCE a -> 300
        RECORD a m 300 -> u2
    '''),
    case('zero_tokens_refused', 1, 2, 'tokens 0 is refused', '''
        OPEN a free -> true
        RECORD a m 0 -> ''
        USAGE a -> 0
        RECORD a m 1 -> u1
    '''),
    case('negative_tokens_refused', 1, 2, 'negative tokens are refused and never raise the balance', '''
        OPEN a free -> true
        RECORD a m 1000 -> u1
        RECORD a m -500 -> ''
        BALANCE a -> 0
        RECORD a m 1 -> ''
        RECORD a m -1 -> ''
        USAGE a -> 1000
    '''),
    case('record_unknown_account_refused', 1, 2, 'a RECORD for an account that is not open is refused', '''
        RECORD ghost m 5 -> ''
        OPEN a free -> true
        RECORD ghost m 5 -> ''
        RECORD a m 5 -> u1
        USAGE ghost -> ''
    '''),
    case('refused_records_use_no_id', 1, 3, 'a refused RECORD uses no id, whichever rule refused it', '''
        RECORD a m 5 -> ''
        OPEN a free -> true
        RECORD a m 0 -> ''
        RECORD a m -2 -> ''
        RECORD a m 1001 -> ''
        RECORD a m 10 -> u1
        RECORD a m 991 -> ''
        RECORD a m 990 -> u2
    '''),
    case('ids_are_global', 1, 2, 'ids count the accepted RECORDs of the whole call, over all accounts', '''
        OPEN b pro -> true
        OPEN a free -> true
        RECORD a m 1 -> u1
        RECORD b m 1 -> u2
        RECORD b m 1 -> u3
        RECORD a m 1 -> u4
    '''),
    case('usage_balance_unknown_account', 1, 1, 'USAGE and BALANCE of an account that is not open answer the empty string', '''
        USAGE nobody -> ''
        BALANCE nobody -> ''
        OPEN nobody2 gold -> false
        BALANCE nobody2 -> ''
    '''),
    case('accounts_are_independent', 1, 2, "accounts have their own quotas: one account's usage leaves another's balance alone", '''
        OPEN a free -> true
        OPEN b free -> true
        RECORD a m 1000 -> u1
        RECORD b m 1000 -> u2
        BALANCE a -> 0
        USAGE b -> 1000
    '''),
    case('models_share_the_quota', 1, 1, 'the model does not matter at level 1: every model draws on the same quota', '''
        OPEN a free -> true
        RECORD a m1 600 -> u1
        RECORD a m2 401 -> ''
        RECORD a m3 400 -> u2
    '''),
    case('names_like_operations', 1, 2, 'accounts may be named like an operation or a plan', '''
        OPEN OPEN free -> true
        OPEN pro pro -> true
        OPEN free scale -> true
        RECORD pro RECORD 20000 -> u1
        RECORD OPEN free 1000 -> u2
        BALANCE free -> 500000
        USAGE OPEN -> 1000
    '''),
)
