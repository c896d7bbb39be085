"""Hidden suite, level 2: refunds (once, by the owner), TOP and MODELS with their tie rules, and the
level-1 rules around them (no timestamps)."""

from api_quota_ledger_oracle import calls, oracle
from hypothesis import example, given

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(120)


@graded(2, 8, "random level-2 calls (refunds, rankings, model breakdowns) match a slow oracle")
@PROPERTY
@given(queries=calls(2))
@example(queries=[["OPEN", "b", "pro"], ["OPEN", "a", "pro"], ["RECORD", "a", "m", "5"], ["RECORD", "b", "n", "5"],
                  ["REFUND", "b", "u1"], ["TOP", "2"], ["REFUND", "a", "u1"], ["MODELS", "a"], ["TOP", "1"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)


test_scenario = scenarios(
    case('prompt_example', 2, 2, "the prompt's level-2 example", '''
        OPEN acme free -> true
        OPEN beta pro -> true
        OPEN core pro -> true
        RECORD acme m-s 600 -> u1
        RECORD beta m-l 300 -> u2
        RECORD beta m-s 300 -> u3
        RECORD acme m-l 400 -> u4
        REFUND beta u1 -> false
        REFUND acme u1 -> true
        REFUND acme u1 -> false
        RECORD acme m-l 200 -> u5
        TOP 2 -> acme(600),beta(600)
        TOP 5 -> acme(600),beta(600),core(0)
        MODELS acme -> m-l(600)
        MODELS beta -> m-l(300),m-s(300)
        MODELS core -> ''
    '''),
    case('refund_lowers_used', 2, 2, "a refund takes the usage's tokens out of USAGE and gives them back to BALANCE", '''
        OPEN a pro -> true
        RECORD a m 700 -> u1
        RECORD a m 50 -> u2
        REFUND a u1 -> true
        USAGE a -> 50
        BALANCE a -> 19950
    '''),
    case('refund_only_once', 2, 2, 'a usage is refunded once: a second REFUND answers false and gives nothing back', '''
        OPEN a free -> true
        RECORD a m 300 -> u1
        RECORD a m 300 -> u2
        REFUND a u2 -> true
        REFUND a u2 -> false
        USAGE a -> 300
        REFUND a u2 -> false
        BALANCE a -> 700
    '''),
    case('refund_by_another_account', 2, 2, "REFUND of another account's usage answers false and leaves both accounts alone", '''
        OPEN a free -> true
        OPEN b free -> true
        RECORD a m 400 -> u1
        REFUND b u1 -> false
        USAGE a -> 400
        USAGE b -> 0
        REFUND a u1 -> true
    '''),
    case('refund_unknown_account', 2, 1, 'REFUND naming an account that is not open answers false', '''
        OPEN a free -> true
        RECORD a m 400 -> u1
        REFUND ghost u1 -> false
        USAGE a -> 400
    '''),
    case('refund_ids_compare_as_strings', 2, 2, 'ids compare as strings: u01, U1, 1 and an id never answered are not ids', '''
        OPEN a free -> true
        RECORD a m 400 -> u1
        REFUND a u01 -> false
        REFUND a U1 -> false
        REFUND a 1 -> false
        REFUND a u2 -> false
        REFUND a u0 -> false
        USAGE a -> 400
    '''),
    case('refund_of_refused_record', 2, 2, 'the id a refused RECORD would have had does not exist: refunding it answers false', '''
        OPEN a free -> true
        RECORD a m 400 -> u1
        RECORD a m 601 -> ''
        REFUND a u2 -> false
        RECORD a m 600 -> u2
        REFUND a u2 -> true
    '''),
    case('refund_frees_quota', 2, 3, 'a refund frees quota: a RECORD refused before it fits after it', '''
        OPEN a free -> true
        RECORD a m 1000 -> u1
        RECORD a m 1 -> ''
        REFUND a u1 -> true
        RECORD a m 1000 -> u2
        RECORD a m 1 -> ''
    '''),
    case('refund_frees_no_id', 2, 2, 'a refund frees no id: the next accepted RECORD takes the next number', '''
        OPEN a free -> true
        RECORD a m 1 -> u1
        RECORD a m 1 -> u2
        REFUND a u2 -> true
        RECORD a m 1 -> u3
        REFUND a u1 -> true
        RECORD a m 1 -> u4
    '''),
    case('top_largest_first', 2, 2, 'TOP ranks the accounts by used, largest first', '''
        OPEN a pro -> true
        OPEN b pro -> true
        OPEN c pro -> true
        RECORD a m 10 -> u1
        RECORD b m 3000 -> u2
        RECORD c m 200 -> u3
        TOP 3 -> b(3000),c(200),a(10)
        TOP 1 -> b(3000)
        TOP 2 -> b(3000),c(200)
    '''),
    case('top_compares_numbers', 2, 2, 'TOP compares used as numbers: 900 ranks below 10000', '''
        OPEN a pro -> true
        OPEN b pro -> true
        RECORD a m 900 -> u1
        RECORD b m 10000 -> u2
        TOP 2 -> b(10000),a(900)
    '''),
    case('top_ties_by_name', 2, 3, 'TOP: equal used by account name ascending, whatever the opening order', '''
        OPEN d pro -> true
        OPEN b pro -> true
        OPEN c pro -> true
        OPEN a pro -> true
        RECORD d m 50 -> u1
        RECORD b m 50 -> u2
        RECORD c m 70 -> u3
        TOP 4 -> c(70),b(50),d(50),a(0)
        TOP 2 -> c(70),b(50)
    '''),
    case('top_ties_in_string_order', 2, 2, "TOP ties follow Python's string order: Zed before abe", '''
        OPEN abe free -> true
        OPEN Zed free -> true
        OPEN ab free -> true
        TOP 3 -> Zed(0),ab(0),abe(0)
    '''),
    case('top_fewer_than_n', 2, 2, 'TOP n with fewer than n open accounts lists them all; accounts with used 0 take part', '''
        OPEN a free -> true
        OPEN b free -> true
        RECORD b m 5 -> u1
        TOP 10 -> b(5),a(0)
    '''),
    case('top_no_accounts', 2, 1, 'TOP with no open account answers the empty string; failed OPENs do not count', '''
        TOP 3 -> ''
        OPEN a gold -> false
        TOP 1 -> ''
        OPEN a free -> true
        TOP 1 -> a(0)
    '''),
    case('top_after_refund', 2, 2, 'TOP after a refund ranks by the used that is left', '''
        OPEN a pro -> true
        OPEN b pro -> true
        RECORD a m 500 -> u1
        RECORD a m 100 -> u2
        RECORD b m 300 -> u3
        TOP 2 -> a(600),b(300)
        REFUND a u1 -> true
        TOP 2 -> b(300),a(100)
    '''),
    case('models_sorted_by_tokens', 2, 2, 'MODELS lists the models by tokens, most first, summing every RECORD of a model', '''
        OPEN a pro -> true
        RECORD a small 100 -> u1
        RECORD a large 250 -> u2
        RECORD a small 200 -> u3
        RECORD a mid 20 -> u4
        MODELS a -> small(300),large(250),mid(20)
    '''),
    case('models_ties_by_name', 2, 2, "MODELS: equal tokens by model name ascending, in Python's string order", '''
        OPEN a pro -> true
        RECORD a zeta 100 -> u1
        RECORD a alpha 100 -> u2
        RECORD a Beta 100 -> u3
        RECORD a top 500 -> u4
        MODELS a -> top(500),Beta(100),alpha(100),zeta(100)
    '''),
    case('models_after_refunds', 2, 3, 'MODELS leaves out a model all of whose tokens were refunded, and shrinks a partly refunded one', '''
        OPEN a pro -> true
        RECORD a x 100 -> u1
        RECORD a y 300 -> u2
        RECORD a y 100 -> u3
        REFUND a u1 -> true
        REFUND a u2 -> true
        MODELS a -> y(100)
        REFUND a u3 -> true
        MODELS a -> ''
    '''),
    case('models_empty', 2, 1, 'MODELS of an account that is not open, or with nothing recorded, answers the empty string', '''
        MODELS ghost -> ''
        OPEN a free -> true
        MODELS a -> ''
        RECORD a m 1001 -> ''
        MODELS a -> ''
    '''),
    case('models_per_account', 2, 1, 'MODELS shows one account only, not the models of every account', '''
        OPEN a pro -> true
        OPEN b pro -> true
        RECORD a m 10 -> u1
        RECORD b m 20 -> u2
        RECORD b n 30 -> u3
        MODELS a -> m(10)
        MODELS b -> n(30),m(20)
    '''),
    case('level1_rules_with_refunds', 2, 2, 'level-1 rules around refunds: refused RECORDs after a refund still use no id, the quota boundary stays exact', '''
        OPEN a free -> true
        OPEN a pro -> false
        RECORD a m 600 -> u1
        RECORD a m 400 -> u2
        REFUND a u1 -> true
        RECORD a m 0 -> ''
        RECORD a m 601 -> ''
        RECORD a m 600 -> u3
        BALANCE a -> 0
        TOP 1 -> a(1000)
    '''),
    case('large_numbers', 2, 1, 'TOP and MODELS write large numbers in full', '''
        OPEN big scale -> true
        RECORD big m 499999 -> u1
        TOP 1 -> big(499999)
        MODELS big -> m(499999)
        BALANCE big -> 1
    '''),
    case('refund_after_wrong_owner', 2, 1, 'a refund by the right owner after a wrong-owner attempt still works', '''
        OPEN a free -> true
        OPEN b free -> true
        RECORD a m 1000 -> u1
        RECORD b m 1000 -> u2
        REFUND a u2 -> false
        RECORD a m 1 -> ''
        REFUND b u2 -> true
        RECORD b m 1 -> u3
        TOP 2 -> a(1000),b(1)
    '''),
    case('models_case_sensitive', 2, 1, 'model names are case-sensitive: m and M are two models in MODELS', '''
        OPEN a pro -> true
        RECORD a m 10 -> u1
        RECORD a M 10 -> u2
        RECORD a m 1 -> u3
        MODELS a -> m(11),M(10)
    '''),
    case('refund_gives_back_its_own_tokens', 2, 2, "a refund gives back that usage's own tokens, not the account's latest or total", '''
        OPEN a pro -> true
        RECORD a m 300 -> u1
        RECORD a n 500 -> u2
        RECORD a m 70 -> u3
        REFUND a u2 -> true
        USAGE a -> 370
        MODELS a -> m(370)
        BALANCE a -> 19630
    '''),
)
