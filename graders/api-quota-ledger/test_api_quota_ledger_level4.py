"""Hidden suite, level 4: CHANGE_PLAN with the prorated quota and the switched rate limit, USAGE_AT
about the past, and every earlier rule again around plan changes."""

from api_quota_ledger_oracle import calls, oracle, timed
from hypothesis import example, given

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(120)


# --- CHANGE_PLAN: answers -------------------------------------------------------------------------


# --- the prorated quota ---------------------------------------------------------------------------


# --- the rate limit after a change ---------------------------------------------------------------


# --- USAGE_AT ------------------------------------------------------------------------------------


@graded(4, 2, "USAGE_AT about the future (t0 > t) answers the empty string")
def test_usage_at_future(impl):
    timed(impl, [
        (0, ["OPEN", "a", "free"], "true"),
        (10, ["RECORD", "a", "m", "5"], "u1"),
        (10, ["USAGE_AT", "a", "11"], ""),
        (10, ["USAGE_AT", "a", "10"], "5"),
        (10, ["USAGE_AT", "a", str(10**12)], ""),
    ])


# --- earlier levels' rules around plan changes ---------------------------------------------------


@graded(4, 10, "random calls with plan changes and USAGE_AT, mixed with every earlier operation, match a slow oracle")
@PROPERTY
@given(queries=calls(4))
@example(queries=[["0", "OPEN", "a", "free"], ["5", "RECORD", "a", "m", "999"], ["7", "CHANGE_PLAN", "a", "pro"],
                  ["20", "CHANGE_PLAN", "a", "free"], ["25", "REFUND", "a", "u1"], ["30", "USAGE_AT", "a", "24"],
                  ["30", "BALANCE", "a"], ["60", "CHANGE_PLAN", "a", "scale"], ["61", "BALANCE", "a"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)


test_scenario = scenarios(
    case('prompt_example', 4, 2, "the prompt's level-4 example", '''
        0 OPEN acme free -> true
        5 RECORD acme m 900 -> u1
        7 CHANGE_PLAN acme pro -> true
        7 BALANCE acme -> 16883
        8 RECORD acme m 16883 -> u2
        20 CHANGE_PLAN acme free -> true
        20 BALANCE acme -> -12667
        25 REFUND acme u2 -> true
        30 USAGE_AT acme 10 -> 17783
        30 USAGE_AT acme 25 -> 900
        30 USAGE_AT acme 31 -> ''
        40 OPEN beta pro -> true
        40 USAGE_AT beta 39 -> ''
        60 BALANCE acme -> 1000
    '''),
    case('change_unknown_account', 4, 1, 'CHANGE_PLAN for an account that is not open answers false and opens nothing', '''
        0 CHANGE_PLAN a pro -> false
        1 BALANCE a -> ''
        2 OPEN a free -> true
        2 BALANCE a -> 1000
    '''),
    case('change_unknown_plan', 4, 2, 'CHANGE_PLAN to a plan not in the table answers false and keeps the plan and quota', '''
        0 OPEN a free -> true
        10 CHANGE_PLAN a gold -> false
        10 CHANGE_PLAN a Pro -> false
        30 BALANCE a -> 1000
        30 RECORD a m 1001 -> ''
    '''),
    case('change_to_same_plan', 4, 2, 'CHANGE_PLAN to the plan the account is on now answers false, also after earlier changes', '''
        0 OPEN a free -> true
        1 CHANGE_PLAN a free -> false
        2 CHANGE_PLAN a pro -> true
        3 CHANGE_PLAN a pro -> false
        4 CHANGE_PLAN a free -> true
        70 CHANGE_PLAN a free -> false
        70 CHANGE_PLAN a scale -> true
    '''),
    case('upgrade_prorated', 4, 3, "an upgrade mid-window prorates the window's quota, rounded down", '''
        0 OPEN a free -> true
        7 CHANGE_PLAN a pro -> true
        7 BALANCE a -> 17783
        8 RECORD a m 17784 -> ''
        8 RECORD a m 17783 -> u1
        9 BALANCE a -> 0
    '''),
    case('downgrade_negative_balance', 4, 3, 'a downgrade may leave used above the quota: the change is made, BALANCE goes negative, RECORDs are refused', '''
        0 OPEN a pro -> true
        1 RECORD a m 15000 -> u1
        30 CHANGE_PLAN a free -> true
        30 BALANCE a -> -4500
        31 RECORD a m 1 -> ''
        31 USAGE a -> 15000
        60 BALANCE a -> 1000
        60 RECORD a m 1000 -> u2
    '''),
    case('change_at_window_start', 4, 2, "a change at the first instant of a window gives the window the new plan's whole quota", '''
        0 OPEN a free -> true
        60 CHANGE_PLAN a pro -> true
        60 BALANCE a -> 20000
        119 BALANCE a -> 20000
    '''),
    case('change_at_window_end', 4, 2, 'a change at the last instant of a window weighs 59 instants of the old plan and 1 of the new', '''
        0 OPEN a free -> true
        59 CHANGE_PLAN a scale -> true
        59 BALANCE a -> 9316
        60 BALANCE a -> 500000
    '''),
    case('two_changes_floor_once', 4, 3, 'several changes in a window: one term per stretch, floored once at the end (not per term)', '''
        0 OPEN a free -> true
        10 CHANGE_PLAN a scale -> true
        31 CHANGE_PLAN a pro -> true
        31 BALANCE a -> 184833
        32 RECORD a m 184833 -> u1
        33 BALANCE a -> 0
    '''),
    case('two_changes_same_instant', 4, 2, 'two changes at one instant: the stretch between them is empty; back to the first plan, the whole old quota', '''
        0 OPEN a free -> true
        7 CHANGE_PLAN a pro -> true
        7 CHANGE_PLAN a free -> true
        7 BALANCE a -> 1000
        7 CHANGE_PLAN a free -> false
    '''),
    case('query_between_two_changes_same_instant', 4, 2, 'two changes at one instant: a query between them sees the first, a query after both the second', '''
        0 OPEN a free -> true
        7 CHANGE_PLAN a pro -> true
        7 BALANCE a -> 17783
        7 CHANGE_PLAN a pro -> false
        7 CHANGE_PLAN a scale -> true
        7 BALANCE a -> 441783
        8 BALANCE a -> 441783
        60 BALANCE a -> 500000
    '''),
    case('opening_plan_counts_from_window_start', 4, 3, 'the opening plan counts from the start of its window, also when the plan changes later in that window', '''
        30 OPEN a free -> true
        45 CHANGE_PLAN a pro -> true
        45 BALANCE a -> 5750
        90 OPEN b free -> true
        90 CHANGE_PLAN b pro -> true
        90 BALANCE b -> 10500
    '''),
    case('future_changes_unknown', 4, 2, 'changes are not known before they happen: the plan in effect at t is taken for the rest of the window', '''
        0 OPEN a free -> true
        20 BALANCE a -> 1000
        20 RECORD a m 1000 -> u1
        30 CHANGE_PLAN a pro -> true
        30 BALANCE a -> 9500
        31 RECORD a m 9500 -> u2
    '''),
    case('plan_carries_into_later_windows', 4, 2, 'a later window has the plan in effect at its start: the last change before it', '''
        0 OPEN a free -> true
        30 CHANGE_PLAN a pro -> true
        45 CHANGE_PLAN a scale -> true
        60 BALANCE a -> 500000
        200 BALANCE a -> 500000
        250 CHANGE_PLAN a free -> true
        250 BALANCE a -> 84166
        300 BALANCE a -> 1000
    '''),
    case('downgrade_prorated', 4, 2, "a downgrade from scale at the window's second instant: one instant of scale, 59 of free", '''
        0 OPEN a scale -> true
        1 CHANGE_PLAN a free -> true
        1 BALANCE a -> 9316
        2 RECORD a m 9317 -> ''
        2 RECORD a m 9316 -> u1
    '''),
    case('rate_limit_switches', 4, 3, 'the rate limit switches at the change and counts the RECORDs made under the old plan', '''
        0 OPEN a pro -> true
        0 RECORD a m 1 -> u1
        1 RECORD a m 1 -> u2
        2 RECORD a m 1 -> u3
        3 CHANGE_PLAN a free -> true
        3 RECORD a m 1 -> ''
        11 RECORD a m 1 -> u4
        11 RECORD a m 1 -> ''
    '''),
    case('upgrade_raises_rate_limit', 4, 2, 'an upgrade raises the rate limit at once: a RECORD refused at t fits after CHANGE_PLAN at t', '''
        0 OPEN a free -> true
        0 RECORD a m 1 -> u1
        1 RECORD a m 1 -> u2
        2 RECORD a m 1 -> ''
        2 CHANGE_PLAN a pro -> true
        2 RECORD a m 1 -> u3
        2 RECORD a m 1 -> u4
        2 RECORD a m 1 -> u5
        2 RECORD a m 1 -> ''
    '''),
    case('change_order_within_instant', 4, 2, "queries at the change's instant: before it the old quota, after it the prorated one", '''
        0 OPEN a free -> true
        1 RECORD a m 900 -> u1
        7 RECORD a m 200 -> ''
        7 CHANGE_PLAN a pro -> true
        7 RECORD a m 200 -> u2
        7 USAGE a -> 1100
    '''),
    case('usage_at_basic', 4, 2, "USAGE_AT counts the RECORDs of t0's window up to t0, not those after it", '''
        0 OPEN a pro -> true
        5 RECORD a m 100 -> u1
        10 RECORD a m 200 -> u2
        20 USAGE_AT a 4 -> 0
        20 USAGE_AT a 5 -> 100
        20 USAGE_AT a 9 -> 100
        20 USAGE_AT a 10 -> 300
        20 USAGE_AT a 20 -> 300
    '''),
    case('usage_at_earlier_window', 4, 2, 'USAGE_AT about an earlier window reports that window, not the current one', '''
        0 OPEN a pro -> true
        10 RECORD a m 100 -> u1
        70 RECORD a m 50 -> u2
        80 USAGE_AT a 30 -> 100
        80 USAGE_AT a 59 -> 100
        80 USAGE_AT a 60 -> 0
        80 USAGE_AT a 75 -> 50
        80 USAGE a -> 50
    '''),
    case('usage_at_refund_timing', 4, 3, 'USAGE_AT ignores refunds made after t0 and subtracts refunds made at t0 or before', '''
        0 OPEN a pro -> true
        5 RECORD a m 300 -> u1
        6 RECORD a m 20 -> u2
        15 REFUND a u1 -> true
        20 USAGE_AT a 14 -> 320
        20 USAGE_AT a 15 -> 20
        20 USAGE a -> 20
    '''),
    case('usage_at_refund_in_later_window', 4, 2, 'a refund in a later window never changes what USAGE_AT says about the earlier one', '''
        0 OPEN a pro -> true
        10 RECORD a m 400 -> u1
        70 REFUND a u1 -> true
        80 USAGE_AT a 59 -> 400
        80 USAGE_AT a 70 -> 0
        80 USAGE a -> 0
    '''),
    case('usage_at_before_opening', 4, 2, 'USAGE_AT before the account was opened answers the empty string; at the opening instant it answers a number', '''
        0 OPEN x free -> true
        40 OPEN a free -> true
        45 USAGE_AT a 39 -> ''
        45 USAGE_AT a 0 -> ''
        45 USAGE_AT a 40 -> 0
        45 USAGE_AT x 0 -> 0
    '''),
    case('usage_at_around_opening_instant', 4, 2, 'USAGE_AT listed before the OPEN at its instant answers the empty string; after it, t0 at the opening instant counts what came after the OPEN', '''
        0 OPEN x free -> true
        40 USAGE_AT a 40 -> ''
        40 OPEN a free -> true
        40 USAGE_AT a 40 -> 0
        40 RECORD a m 7 -> u1
        40 USAGE_AT a 40 -> 7
        45 USAGE_AT a 40 -> 7
        45 USAGE_AT a 39 -> ''
    '''),
    case('usage_at_unknown_account', 4, 1, 'USAGE_AT for an account that is not open answers the empty string', '''
        0 USAGE_AT a 0 -> ''
        5 OPEN a gold -> false
        6 USAGE_AT a 5 -> ''
    '''),
    case('usage_at_same_instant', 4, 2, 'USAGE_AT with t0 == t counts only the queries before it at that instant', '''
        0 OPEN a pro -> true
        30 RECORD a m 10 -> u1
        30 USAGE_AT a 30 -> 10
        30 RECORD a m 5 -> u2
        30 REFUND a u1 -> true
        30 USAGE_AT a 30 -> 5
        31 USAGE_AT a 30 -> 5
    '''),
    case('usage_at_after_plan_changes', 4, 1, 'USAGE_AT reports used tokens, whatever the plan changes did to the quota', '''
        0 OPEN a pro -> true
        1 RECORD a m 5000 -> u1
        2 CHANGE_PLAN a free -> true
        3 USAGE_AT a 1 -> 5000
        3 USAGE_AT a 2 -> 5000
        3 BALANCE a -> -3367
    '''),
    case('change_keeps_usage', 4, 3, "a plan change keeps the account's usage: USAGE, TOP and MODELS are unchanged by it", '''
        0 OPEN a pro -> true
        0 OPEN b pro -> true
        1 RECORD a m 5000 -> u1
        1 RECORD b n 300 -> u2
        2 CHANGE_PLAN a scale -> true
        2 BALANCE a -> 479000
        3 USAGE a -> 5000
        3 TOP 2 -> a(5000),b(300)
        3 MODELS a -> m(5000)
        3 RECORD b n 1 -> u3
    '''),
    case('level1_rules_after_change', 4, 2, 'after plan changes, level-1 rules hold: duplicate OPEN false and ignored, refusals use no id, the boundary is exact', '''
        0 OPEN a free -> true
        60 CHANGE_PLAN a pro -> true
        61 OPEN a free -> false
        61 BALANCE a -> 20000
        62 RECORD a m 0 -> ''
        63 RECORD a m 20001 -> ''
        64 RECORD a m 20000 -> u1
        65 RECORD b m 1 -> ''
        75 OPEN b free -> true
        75 RECORD b m 1 -> u2
    '''),
    case('level2_rules_after_change', 4, 2, 'after plan changes, level-2 rules hold: a refund frees prorated quota, once, for the owner only', '''
        0 OPEN a free -> true
        0 OPEN b free -> true
        7 CHANGE_PLAN a pro -> true
        8 RECORD a x 17783 -> u1
        9 REFUND b u1 -> false
        10 REFUND a u1 -> true
        11 REFUND a u1 -> false
        12 RECORD a y 17783 -> u2
        13 MODELS a -> y(17783)
        13 TOP 2 -> a(17783),b(0)
    '''),
    case('level3_rules_after_change', 4, 2, 'after plan changes, level-3 rules hold: windows reset used, refused and refunded RECORDs count for the rate as before', '''
        0 OPEN a pro -> true
        50 CHANGE_PLAN a free -> true
        50 RECORD a m 16834 -> ''
        51 RECORD a m 100 -> u1
        52 REFUND a u1 -> true
        53 RECORD a m 100 -> u2
        54 RECORD a m 100 -> ''
        60 USAGE a -> 0
        62 RECORD a m 1000 -> u3
        62 TOP 1 -> a(1000)
    '''),
)
