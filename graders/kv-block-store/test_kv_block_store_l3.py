"""Hidden suite, level 3: timestamped calls, PUT_WITH_TTL, TTL, and expiry seen by every level-1
and level-2 operation."""

from hypothesis import example, given
from hypothesis import strategies as st
from kv_block_store_oracle import (KEYS, PREFIXES, SIZES, TENANTS, TOPS,
                                   oracle, seeded_timed, timed_stream)

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(40)


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 3, 3, "the prompt's level-3 example", """
        1 PUT_WITH_TTL acme a 10 5 -> true
        2 PUT acme b 20 -> true
        3 TTL acme a -> 3
        4 TTL acme b -> -1
        5 USAGE acme -> 2,30
        6 GET acme a -> ''
        7 PUT acme a 1 -> true
        9 PUT_WITH_TTL acme b 20 3 -> false
        11 TOP 3 -> acme(21)
        12 SCAN acme '' -> a(1)
    """),
    case("timestamps_without_ttl", 3, 2,
         "a timestamped call of level-1 and level-2 queries, no TTL, answers as without timestamps", """
        0 PUT t a 5 -> true
        1 PUT t a 6 -> false
        2 PUT u a 0 -> true
        3 GET t a -> 6
        4 USAGE u -> 1,0
        5 DELETE t a -> true
        6 DELETE t a -> false
        7 PUT t b 2 -> true
        8 TOP 5 -> t(2),u(0)
        9 DROP t -> 1
        10 SCAN t '' -> ''
        11 TTL u a -> -1
        12 TOP 5 -> u(0)
    """),
    case("expiry_boundary", 3, 2,
         "a block with a TTL is held at ts + ttl - 1 and gone at ts + ttl (expiry is exclusive)", """
        10 PUT_WITH_TTL t k 7 4 -> true
        13 GET t k -> 7
        14 GET t k -> ''
    """),
    case("ttl_counts_down", 3, 2, "TTL counts down to 1 at the last timestamp the block is held", """
        10 PUT_WITH_TTL t k 7 4 -> true
        11 TTL t k -> 3
        12 TTL t k -> 2
        13 TTL t k -> 1
        14 TTL t k -> ''
    """),
    case("ttl_after_gap", 3, 1, "TTL right after the PUT_WITH_TTL answers ttl minus the time gone by", """
        100 PUT_WITH_TTL t k 1 50 -> true
        101 TTL t k -> 49
        149 TTL t k -> 1
    """),
    case("ttl_one", 3, 2, "ttl = 1: held only at its own query; the next timestamp sees it gone", """
        5 PUT_WITH_TTL t k 3 1 -> true
        6 GET t k -> ''
        7 USAGE t -> 0,0
    """),
    case("gap_past_expiry", 3, 2, "a gap in the timestamps jumps past the expiry", """
        0 PUT_WITH_TTL t k 3 5 -> true
        4 GET t k -> 3
        1000 GET t k -> ''
        1001 PUT t k 1 -> true
    """),
    case("ttl_permanent", 3, 1, "TTL of a block without expiry answers \"-1\"", """
        0 PUT t k 0 -> true
        99 TTL t k -> -1
    """),
    case("ttl_missing", 3, 1, "TTL of a block not held (never put, deleted, other tenant) answers \"\"", """
        0 TTL t k -> ''
        1 PUT_WITH_TTL t k 1 9 -> true
        2 TTL u k -> ''
        3 DELETE t k -> true
        4 TTL t k -> ''
    """),
    case("plain_put_clears_ttl", 3, 2, "a plain PUT over a block with a TTL makes it never expire", """
        0 PUT_WITH_TTL t k 4 2 -> true
        1 PUT t k 6 -> false
        2 TTL t k -> -1
        50 GET t k -> 6
    """),
    case("ttl_put_over_permanent", 3, 2, "PUT_WITH_TTL over a block without expiry gives it that expiry", """
        0 PUT t k 4 -> true
        1 PUT_WITH_TTL t k 5 3 -> false
        2 TTL t k -> 2
        3 GET t k -> 5
        4 GET t k -> ''
    """),
    case("ttl_put_replaces_expiry", 3, 2,
         "PUT_WITH_TTL over a block with a TTL replaces the expiry, later or earlier", """
        0 PUT_WITH_TTL t a 1 3 -> true
        2 PUT_WITH_TTL t a 1 10 -> false
        5 TTL t a -> 7
        6 PUT_WITH_TTL t b 1 10 -> true
        7 PUT_WITH_TTL t b 2 2 -> false
        8 GET t b -> 2
        9 GET t b -> ''
        11 GET t a -> 1
        12 GET t a -> ''
    """),
    case("put_over_expired_is_new", 3, 2,
         "a PUT (plain or with TTL) of an expired key answers \"true\": it is a new block", """
        0 PUT_WITH_TTL t a 1 2 -> true
        1 PUT_WITH_TTL t b 1 2 -> true
        2 PUT t a 5 -> true
        3 PUT_WITH_TTL t b 2 4 -> true
        4 USAGE t -> 2,7
        6 TTL t b -> 1
    """),
    case("ttl_put_over_held", 3, 2, "PUT_WITH_TTL over a held block answers \"false\"", """
        0 PUT_WITH_TTL t a 1 5 -> true
        4 PUT_WITH_TTL t a 2 5 -> false
        5 GET t a -> 2
    """),
    case("delete_expired", 3, 2, "DELETE of an expired block answers \"false\"", """
        0 PUT_WITH_TTL t a 1 2 -> true
        2 DELETE t a -> false
        3 GET t a -> ''
    """),
    case("delete_before_expiry", 3, 1,
         "DELETE of a block with a TTL before it expires answers \"true\"; a PUT after it is new", """
        0 PUT_WITH_TTL t a 1 5 -> true
        1 DELETE t a -> true
        2 GET t a -> ''
        3 PUT t a 2 -> true
        9 GET t a -> 2
    """),
    case("usage_excludes_expired", 3, 2, "USAGE neither counts nor sums an expired block", """
        0 PUT_WITH_TTL t a 100 3 -> true
        1 PUT t b 5 -> true
        2 USAGE t -> 2,105
        3 USAGE t -> 1,5
    """),
    case("drop_excludes_expired", 3, 2, "DROP counts only the blocks not yet expired", """
        0 PUT_WITH_TTL t a 1 2 -> true
        1 PUT_WITH_TTL t b 1 5 -> true
        2 PUT t c 1 -> true
        3 DROP t -> 2
        4 GET t b -> ''
        5 DROP t -> 0
    """),
    case("scan_excludes_expired", 3, 2, "SCAN leaves out expired blocks, and orders the rest as usual", """
        0 PUT_WITH_TTL t a 9 4 -> true
        1 PUT t b 3 -> true
        2 PUT_WITH_TTL t c 3 10 -> true
        3 SCAN t '' -> a(9),b(3),c(3)
        4 SCAN t '' -> b(3),c(3)
        12 SCAN t c -> ''
        13 SCAN t '' -> b(3)
    """),
    case("top_excludes_expired_tenant", 3, 2, "a tenant whose blocks have all expired is not in TOP", """
        0 PUT_WITH_TTL a k 50 3 -> true
        1 PUT b k 5 -> true
        2 TOP 2 -> a(50),b(5)
        3 TOP 2 -> b(5)
    """),
    case("top_totals_drop", 3, 2, "TOP totals drop as blocks expire, and the order follows", """
        0 PUT_WITH_TTL a x 50 3 -> true
        1 PUT a y 1 -> true
        2 PUT b k 5 -> true
        3 TOP 1 -> b(5)
        4 TOP 2 -> b(5),a(1)
    """),
    case("zero_size_expires", 3, 1, "an expired block of size 0 is gone too: TOP leaves out its tenant", """
        0 PUT_WITH_TTL z k 0 2 -> true
        1 TOP 5 -> z(0)
        2 TOP 5 -> ''
        3 USAGE z -> 0,0
    """),
    case("first_timestamp_zero", 3, 1, "a call may start at timestamp 0", """
        0 PUT_WITH_TTL t a 1 1 -> true
        1 GET t a -> ''
        2 PUT t a 3 -> true
    """),
    case("expiry_per_tenant", 3, 2,
         "expiry is per tenant: the same key put by two tenants expires for each on its own", """
        0 PUT_WITH_TTL a k 1 2 -> true
        1 PUT_WITH_TTL b k 2 5 -> true
        2 GET a k -> ''
        3 GET b k -> 2
        4 TOP 2 -> b(2)
        6 GET b k -> ''
    """),
)


@graded(3, 2, "timestamps compare as numbers (9 < 10 < 100), and big timestamps and TTLs are exact")
def test_timestamps_numeric_and_big(impl):
    t0 = 10**15
    run_queries(impl, *query_rows([("9 PUT_WITH_TTL t a 1 2", "true"), ("10 GET t a", "1"), ("11 GET t a", ""),
                      (f"{t0} PUT_WITH_TTL t b 2 {2**53}", "true"), (f"{t0 + 2**53 - 1} TTL t b", "1"),
                      (f"{t0 + 2**53} GET t b", "")]))


@graded(3, 1, "an expiry ts + ttl past 10^18 is exact: a timestamp of 10^18 sees the block with its exact TTL")
def test_expiry_past_max_number(impl):
    big = 10**18
    run_queries(impl, *query_rows([(f"{big - 7} PUT_WITH_TTL t a 1 {big}", "true"), (f"{big - 6} PUT_WITH_TTL t b 2 {big - 3}", "true"),
                      (f"{big - 1} TTL t a", str(big - 6)), (f"{big} TTL t b", str(big - 9))]))


@graded(3, 2, "a long timestamped call (2,000 queries) with TTLs matches the oracle")
def test_long_call(impl):
    run_queries(impl, seeded_timed(303, 2000, 3), oracle=oracle)


STEP = st.tuples(st.integers(1, 3), st.integers(0, 59), st.sampled_from(TENANTS), st.sampled_from(KEYS),
                 st.sampled_from(SIZES), st.sampled_from(PREFIXES), st.sampled_from(TOPS), st.integers(1, 6),
                 st.just(0))


@graded(3, 5, "random timestamped calls with TTLs, mixing every level-1 and level-2 operation, match a slow oracle")
@PROPERTY
@given(start=st.integers(-1, 3), steps=st.lists(STEP, max_size=40))
@example(start=0, steps=[(1, 10, "a", "k", "5", "", "1", 2, 0), (1, 3, "a", "k", "5", "", "1", 2, 0),
                         (1, 3, "a", "k", "5", "", "1", 2, 0), (1, 0, "a", "k", "5", "", "1", 2, 0)])
def test_matches_oracle(impl, start, steps):
    run_queries(impl, timed_stream(steps, start, 3), oracle=oracle)
