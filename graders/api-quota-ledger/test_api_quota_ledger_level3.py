"""Hidden suite, level 3: timestamps, quota windows of 60, the rate limit over (t - 10, t], and every
level-1 and level-2 rule again, now with timestamps."""

from api_quota_ledger_oracle import calls, oracle, timed
from hypothesis import example, given

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(120)


@graded(3, 2, "timestamps up to 10**12: the window is t // 60 in exact integers")
def test_large_timestamps(impl):
    start = 10**12 - 40   # 60 * 16666666666: window [10**12 - 40, 10**12 + 19]
    timed(impl, [
        (start - 30, ["OPEN", "a", "free"], "true"),
        (start - 30, ["RECORD", "a", "m", "1000"], "u1"),
        (start - 1, ["BALANCE", "a"], "0"),
        (start, ["BALANCE", "a"], "1000"),
        (start, ["RECORD", "a", "m", "1"], "u2"),
        (10**12, ["USAGE", "a"], "1"),
    ])


@graded(3, 1, "a long idle gap: many windows later the quota is whole again")
def test_idle_gap(impl):
    timed(impl, [
        (0, ["OPEN", "a", "free"], "true"),
        (1, ["RECORD", "a", "m", "1000"], "u1"),
        (10**9, ["BALANCE", "a"], "1000"),
        (10**9, ["RECORD", "a", "m", "999"], "u2"),
        (10**9 + 1, ["USAGE", "a"], "999"),
    ])


@graded(3, 2, "pro's rate limit is 5 requests per span")
def test_pro_rate_limit(impl):
    rows = [(0, ["OPEN", "a", "pro"], "true")]
    rows += [(i, ["RECORD", "a", "m", "1"], f"u{i + 1}") for i in range(5)]
    rows += [(9, ["RECORD", "a", "m", "1"], ""), (10, ["RECORD", "a", "m", "1"], "u6"),
             (10, ["RECORD", "a", "m", "1"], "")]
    timed(impl, rows)


@graded(3, 2, "scale's rate limit is 20 requests per span")
def test_scale_rate_limit(impl):
    rows = [(0, ["OPEN", "a", "scale"], "true")]
    rows += [(3, ["RECORD", "a", "m", "1"], f"u{i}") for i in range(1, 21)]
    rows += [(12, ["RECORD", "a", "m", "1"], ""), (13, ["RECORD", "a", "m", "1"], "u21")]
    timed(impl, rows)


@graded(3, 2, "a call without timestamps has no rate limit")
def test_untimed_has_no_rate_limit(impl):
    rows = [(["OPEN", "a", "free"], "true")]
    rows += [(["RECORD", "a", "m", "10"], f"u{i}") for i in range(1, 26)]
    rows += [(["USAGE", "a"], "250")]
    run_queries(impl, *query_rows(rows))


@graded(3, 1, "a call of a single query with a timestamp")
def test_single_timed_query(impl):
    timed(impl, [(30, ["OPEN", "acme", "pro"], "true")])
    timed(impl, [(30, ["TOP", "3"], "")])


@graded(3, 2, "solution does not modify timed queries either, and answers them the same way twice")
def test_timed_queries_not_modified(impl):
    queries = [["0", "OPEN", "a", "free"], ["1", "RECORD", "a", "m", "600"], ["2", "RECORD", "a", "m", "600"],
               ["70", "BALANCE", "a"]]
    run_queries(impl, queries, ["true", "u1", "", "1000"], as_given=True)
    run_queries(impl, queries, ["true", "u1", "", "1000"], as_given=True, note=" a second time, on the same list")


@graded(3, 8, "random timed calls (windows, rate limits, refunds, rankings) match a slow oracle")
@PROPERTY
@given(queries=calls(3))
@example(queries=[["0", "OPEN", "a", "free"], ["9", "RECORD", "a", "m", "600"], ["10", "RECORD", "a", "m", "400"],
                  ["19", "RECORD", "a", "m", "1"], ["59", "REFUND", "a", "u1"], ["60", "RECORD", "a", "m", "1000"],
                  ["60", "TOP", "2"], ["69", "MODELS", "a"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)


test_scenario = scenarios(
    case('prompt_example', 3, 2, "the prompt's level-3 example", '''
        0 OPEN acme free -> true
        3 RECORD acme m 700 -> u1
        12 RECORD acme m 200 -> u2
        13 RECORD acme m 50 -> u3
        14 RECORD acme m 10 -> ''
        22 RECORD acme m 60 -> ''
        22 BALANCE acme -> 50
        59 USAGE acme -> 950
        60 USAGE acme -> 0
        60 RECORD acme m 1000 -> u4
        61 REFUND acme u1 -> true
        61 BALANCE acme -> 0
    '''),
    case('window_boundary', 3, 3, 'instant 59 is in window 0 and instant 60 starts window 1 with the whole quota', '''
        0 OPEN a free -> true
        50 RECORD a m 900 -> u1
        59 RECORD a m 101 -> ''
        59 BALANCE a -> 100
        60 BALANCE a -> 1000
        60 RECORD a m 1000 -> u2
        119 USAGE a -> 1000
        120 USAGE a -> 0
    '''),
    case('windows_aligned_at_zero', 3, 2, "windows are aligned at 0, not at the account's opening or its first RECORD", '''
        45 OPEN a free -> true
        50 RECORD a m 1000 -> u1
        59 RECORD a m 1 -> ''
        60 RECORD a m 1 -> u2
        104 USAGE a -> 1
    '''),
    case('opened_mid_window_full_quota', 3, 2, "an account opened late in a window gets its plan's full quota for that window", '''
        58 OPEN a free -> true
        58 BALANCE a -> 1000
        59 RECORD a m 1000 -> u1
        59 BALANCE a -> 0
    '''),
    case('rate_limit_span_boundary', 3, 3, 'rate limit on free: 2 RECORDs in (t - 10, t]; at t + 10 the one at t no longer counts', '''
        0 OPEN a free -> true
        0 RECORD a m 1 -> u1
        9 RECORD a m 1 -> u2
        9 RECORD a m 1 -> ''
        10 RECORD a m 1 -> u3
        18 RECORD a m 1 -> ''
        19 RECORD a m 1 -> u4
        20 USAGE a -> 4
    '''),
    case('rate_limit_same_instant', 3, 2, 'several RECORDs at one instant: the R-th is accepted, the next refused', '''
        5 OPEN a free -> true
        5 RECORD a m 1 -> u1
        5 RECORD a m 1 -> u2
        5 RECORD a m 1 -> ''
        14 RECORD a m 1 -> ''
        15 RECORD a m 1 -> u3
        15 RECORD a m 1 -> u4
    '''),
    case('refused_records_do_not_count_for_rate', 3, 3, 'a refused RECORD never counts for the rate limit, whether the quota or the limit refused it', '''
        0 OPEN a free -> true
        0 RECORD a m 1001 -> ''
        1 RECORD a m 0 -> ''
        2 RECORD a m 500 -> u1
        3 RECORD a m 500 -> u2
        4 RECORD a m 1 -> ''
        12 RECORD a m 1 -> ''
        13 RECORD a m 1 -> ''
        60 RECORD a m 1 -> u3
        60 RECORD a m 1 -> u4
    '''),
    case('refunded_records_count_for_rate', 3, 3, 'a refunded RECORD still counts for the rate limit', '''
        0 OPEN a free -> true
        1 RECORD a m 10 -> u1
        2 RECORD a m 10 -> u2
        3 REFUND a u1 -> true
        4 RECORD a m 10 -> ''
        11 RECORD a m 10 -> u3
        11 USAGE a -> 20
    '''),
    case('rate_limit_per_account', 3, 2, 'each account has its own rate limit', '''
        0 OPEN a free -> true
        0 OPEN b free -> true
        1 RECORD a m 1 -> u1
        1 RECORD a m 1 -> u2
        1 RECORD b m 1 -> u3
        1 RECORD a m 1 -> ''
        1 RECORD b m 1 -> u4
        1 RECORD b m 1 -> ''
    '''),
    case('rate_limit_across_windows', 3, 2, 'the rate limit spans windows: RECORDs at 55 and 58 still count at 60', '''
        0 OPEN a free -> true
        55 RECORD a m 1 -> u1
        58 RECORD a m 1 -> u2
        60 RECORD a m 1 -> ''
        65 RECORD a m 1 -> u3
        65 BALANCE a -> 999
    '''),
    case('refund_same_window_frees_quota', 3, 2, 'a refund in the same window frees quota there, even at the same instant', '''
        0 OPEN a free -> true
        10 RECORD a m 1000 -> u1
        30 REFUND a u1 -> true
        30 RECORD a m 1000 -> u2
        31 REFUND a u2 -> true
        31 BALANCE a -> 1000
    '''),
    case('refund_of_earlier_window', 3, 3, "a refund of an earlier window's usage answers true and frees nothing in the current window", '''
        0 OPEN a free -> true
        10 RECORD a m 400 -> u1
        70 RECORD a m 1000 -> u2
        80 REFUND a u1 -> true
        80 USAGE a -> 1000
        80 BALANCE a -> 0
        81 RECORD a m 1 -> ''
        81 REFUND a u1 -> false
    '''),
    case('top_current_window', 3, 3, "TOP ranks by the current window's used; every open account still takes part", '''
        0 OPEN a pro -> true
        0 OPEN b pro -> true
        0 OPEN c pro -> true
        5 RECORD a m 5000 -> u1
        6 RECORD b m 100 -> u2
        6 TOP 3 -> a(5000),b(100),c(0)
        61 RECORD c m 7 -> u3
        61 TOP 3 -> c(7),a(0),b(0)
        61 TOP 1 -> c(7)
    '''),
    case('models_current_window', 3, 2, 'MODELS describes the current window only', '''
        0 OPEN a pro -> true
        1 RECORD a x 50 -> u1
        2 RECORD a y 40 -> u2
        59 MODELS a -> x(50),y(40)
        60 MODELS a -> ''
        61 RECORD a y 5 -> u3
        62 MODELS a -> y(5)
    '''),
    case('same_instant_list_order', 3, 2, 'queries at one instant run in list order: a RECORD is seen by the USAGE after it', '''
        7 USAGE a -> ''
        7 OPEN a free -> true
        7 USAGE a -> 0
        7 RECORD a m 30 -> u1
        7 USAGE a -> 30
        7 MODELS a -> m(30)
    '''),
    case('level1_rules_timed', 3, 2, 'level-1 rules with timestamps: duplicate and unknown-plan OPENs, refusals that use no id', '''
        0 OPEN a free -> true
        100 OPEN a scale -> false
        100 OPEN b Pro -> false
        100 RECORD b m 5 -> ''
        101 RECORD a m 0 -> ''
        102 RECORD a m -7 -> ''
        103 RECORD a m 1001 -> ''
        125 RECORD a m 1000 -> u1
        130 BALANCE a -> 0
        130 BALANCE b -> ''
        130 USAGE b -> ''
    '''),
    case('level2_rules_timed', 3, 2, 'level-2 rules with timestamps: refunds once, by the owner, ids as strings; ids run on across windows', '''
        0 OPEN a free -> true
        0 OPEN b free -> true
        1 RECORD a m 300 -> u1
        2 REFUND b u1 -> false
        3 REFUND a u01 -> false
        4 REFUND a u1 -> true
        5 REFUND a u1 -> false
        70 RECORD b m 300 -> u2
        71 TOP 5 -> b(300),a(0)
        72 MODELS a -> ''
    '''),
    case('first_timestamp_not_zero', 3, 1, 'a call whose first timestamp is not 0 is still a call with timestamps', '''
        42 OPEN a free -> true
        42 RECORD a m 1 -> u1
        42 RECORD a m 1 -> u2
        42 RECORD a m 1 -> ''
        60 USAGE a -> 0
    '''),
    case('quota_and_rate_independent', 3, 2, 'the quota refuses on its own while the rate limit has room, and the other way round', '''
        0 OPEN a free -> true
        0 RECORD a m 999 -> u1
        20 RECORD a m 2 -> ''
        20 RECORD a m 1 -> u2
        60 RECORD a m 1 -> u3
        61 RECORD a m 1 -> u4
        62 RECORD a m 1 -> ''
        62 BALANCE a -> 998
    '''),
)
