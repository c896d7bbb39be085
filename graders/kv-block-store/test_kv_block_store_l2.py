"""Hidden suite, level 2: SCAN and TOP, mixed with the level-1 operations, without timestamps."""

from hypothesis import example, given
from hypothesis import strategies as st
from kv_block_store_oracle import (KEYS, PREFIXES, SIZES, TENANTS, TOPS,
                                   oracle, plain_stream, seeded_plain)

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(40)


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 2, 3, "the prompt's level-2 example", """
        PUT acme blk:a 64 -> true
        PUT acme blk:b 128 -> true
        PUT acme tmp:c 64 -> true
        PUT zeta blk:a 192 -> true
        PUT beta x 0 -> true
        SCAN acme blk: -> blk:b(128),blk:a(64)
        SCAN acme '' -> blk:b(128),blk:a(64),tmp:c(64)
        SCAN acme gpu -> ''
        TOP 2 -> acme(256),zeta(192)
        TOP 9 -> acme(256),zeta(192),beta(0)
        PUT zeta z 64 -> true
        TOP 2 -> acme(256),zeta(256)
        TOP 0 -> ''
    """),
    case("scan_prefix_not_substring", 2, 2,
         "SCAN matches keys that start with the prefix, not keys that only contain it", """
        PUT t blk:a 1 -> true
        PUT t x:blk:b 2 -> true
        PUT t ablk: 3 -> true
        SCAN t blk -> blk:a(1)
    """),
    case("scan_empty_prefix", 2, 1, "SCAN with the empty prefix lists every block of the tenant", """
        PUT t a 1 -> true
        PUT t b 2 -> true
        PUT u c 3 -> true
        SCAN t '' -> b(2),a(1)
    """),
    case("scan_no_match", 2, 1, "SCAN with no matching block answers \"\"", """
        PUT t a 1 -> true
        SCAN t b -> ''
        SCAN t A -> ''
    """),
    case("scan_unknown_tenant", 2, 1, "SCAN of a tenant never named answers \"\", empty prefix included", """
        PUT t a 1 -> true
        SCAN nobody '' -> ''
        SCAN nobody a -> ''
    """),
    case("scan_size_descending", 2, 2, "SCAN orders by size descending", """
        PUT t a 1 -> true
        PUT t b 30 -> true
        PUT t c 7 -> true
        PUT t d 12 -> true
        SCAN t '' -> b(30),d(12),c(7),a(1)
    """),
    case("scan_tie_by_key", 2, 2, "SCAN breaks a size tie by key ascending, whatever the order of the PUTs", """
        PUT t zz 5 -> true
        PUT t m 5 -> true
        PUT t a 5 -> true
        PUT t big 9 -> true
        SCAN t '' -> big(9),a(5),m(5),zz(5)
    """),
    case("scan_tie_character_order", 2, 2,
         "key order is by character code: \"B\" < \"a\", \"k1\" < \"k10\" < \"k9\"", """
        PUT t k9 4 -> true
        PUT t a 4 -> true
        PUT t k10 4 -> true
        PUT t B 4 -> true
        PUT t k1 4 -> true
        SCAN t '' -> B(4),a(4),k1(4),k10(4),k9(4)
    """),
    case("scan_sizes_numeric", 2, 2, "sizes compare as numbers: 10 before 9, 100 before 20", """
        PUT t a 9 -> true
        PUT t b 10 -> true
        PUT t c 100 -> true
        PUT t d 20 -> true
        SCAN t '' -> c(100),d(20),b(10),a(9)
    """),
    case("scan_prefix_equal_to_key", 2, 1, "a key starts with itself: a prefix equal to the whole key matches it", """
        PUT t k1 2 -> true
        PUT t k10 3 -> true
        PUT t k 1 -> true
        SCAN t k1 -> k10(3),k1(2)
        SCAN t k10 -> k10(3)
    """),
    case("scan_prefix_longer_than_key", 2, 1, "a prefix longer than a key does not match it", """
        PUT t k 1 -> true
        SCAN t kk -> ''
        SCAN t k: -> ''
    """),
    case("scan_case_sensitive", 2, 1, "SCAN is case-sensitive", """
        PUT t Blk 1 -> true
        PUT t blk 2 -> true
        SCAN t B -> Blk(1)
        SCAN t b -> blk(2)
    """),
    case("scan_zero_size", 2, 2, "SCAN lists a block of size 0 as key(0)", """
        PUT t z 0 -> true
        PUT t a 0 -> true
        PUT t m 1 -> true
        SCAN t '' -> m(1),a(0),z(0)
    """),
    case("scan_after_changes", 2, 2,
         "SCAN shows the size of the last PUT and leaves out deleted and dropped blocks", """
        PUT t a 1 -> true
        PUT t b 2 -> true
        PUT t c 3 -> true
        PUT t a 50 -> false
        DELETE t c -> true
        SCAN t '' -> a(50),b(2)
        DROP t -> 2
        SCAN t '' -> ''
        PUT t c 1 -> true
        SCAN t '' -> c(1)
    """),
    case("scan_own_tenant_only", 2, 1, "SCAN lists only the tenant's own blocks", """
        PUT t a 1 -> true
        PUT tt a 2 -> true
        PUT T b 3 -> true
        SCAN t '' -> a(1)
    """),
    case("top_bytes_descending", 2, 2, "TOP orders tenants by bytes descending", """
        PUT a k 1 -> true
        PUT b k 30 -> true
        PUT c k 7 -> true
        PUT d k 12 -> true
        TOP 4 -> b(30),d(12),c(7),a(1)
    """),
    case("top_tie_by_tenant", 2, 2, "TOP breaks a bytes tie by tenant ascending, whatever the order of the PUTs", """
        PUT zeta k 8 -> true
        PUT beta k 8 -> true
        PUT Acme k 8 -> true
        PUT acme k 8 -> true
        TOP 3 -> Acme(8),acme(8),beta(8)
    """),
    case("top_bytes_not_blocks", 2, 2, "TOP ranks by the sum of sizes, not by the number of blocks", """
        PUT many a 1 -> true
        PUT many b 1 -> true
        PUT many c 1 -> true
        PUT one a 2 -> true
        TOP 1 -> many(3)
        PUT one a 4 -> false
        TOP 2 -> one(4),many(3)
    """),
    case("top_more_than_tenants", 2, 1, "TOP n with fewer than n tenants lists them all", """
        PUT a k 1 -> true
        PUT b k 2 -> true
        TOP 3 -> b(2),a(1)
        TOP 1000 -> b(2),a(1)
    """),
    case("top_zero", 2, 2, "TOP 0 answers \"\"", """
        PUT a k 1 -> true
        TOP 0 -> ''
        TOP 1 -> a(1)
    """),
    case("top_empty_store", 2, 1, "TOP with no blocks in the store answers \"\"", """
        TOP 5 -> ''
        PUT a k 1 -> true
        DELETE a k -> true
        TOP 5 -> ''
    """),
    case("top_lists_zero_byte_tenant", 2, 2,
         "a tenant whose blocks all have size 0 holds blocks: TOP lists it as tenant(0)", """
        PUT z k 0 -> true
        TOP 3 -> z(0)
        PUT a k 5 -> true
        PUT y k 0 -> true
        TOP 3 -> a(5),y(0),z(0)
    """),
    case("top_forgets_empty_tenants", 2, 2, "a tenant whose blocks were all deleted or dropped is not in TOP", """
        PUT a k 1 -> true
        PUT b k 2 -> true
        PUT c k 3 -> true
        DELETE a k -> true
        DROP c -> 1
        TOP 5 -> b(2)
    """),
    case("top_after_replace", 2, 1, "TOP follows replaces: a shrunken tenant falls behind", """
        PUT a k 10 -> true
        PUT b k 5 -> true
        TOP 2 -> a(10),b(5)
        PUT a k 1 -> false
        TOP 2 -> b(5),a(1)
    """),
)


@graded(2, 1, "TOP n with n = 10^18 (the largest number a query holds) lists every tenant")
def test_top_largest_n(impl):
    run_queries(impl, *query_rows([("PUT a k 1", "true"), ("PUT b k 2", "true"), (f"TOP {10**18}", "b(2),a(1)")]))


@graded(2, 2, "TOP n lists exactly n tenants when there are more (n = 1, 2, and 10 of 11)")
def test_top_exactly_n(impl):
    rows = [(f"PUT t{i:02d} k {i}", "true") for i in range(11)]
    expected = ",".join(f"t{i:02d}({i})" for i in range(10, -1, -1))
    run_queries(impl, *query_rows(rows + [("TOP 1", "t10(10)"), ("TOP 2", "t10(10),t09(9)"),
                             ("TOP 10", expected.rsplit(",", 1)[0]), ("TOP 11", expected)]))


@graded(2, 2, "TOP sums past 2**53 and past 10^18 exactly, and ranks them exactly")
def test_top_big_totals(impl):
    big = 10**18
    run_queries(impl, *query_rows([(f"PUT a x {big}", "true"), (f"PUT a y {big}", "true"), (f"PUT b x {2**53 + 1}", "true"),
                      (f"PUT b y {2**53}", "true"), (f"PUT c x {2**54}", "true"),
                      ("TOP 3", f"a({2 * big}),b({2**54 + 1}),c({2**54})")]))


@graded(2, 2, "a long call (2,000 queries) with scans and tops matches the oracle")
def test_long_call(impl):
    run_queries(impl, seeded_plain(202, 2000, 2), oracle=oracle)


STEP = st.tuples(st.integers(0, 59), st.sampled_from(TENANTS), st.sampled_from(KEYS), st.sampled_from(SIZES),
                 st.sampled_from(PREFIXES), st.sampled_from(TOPS))


@graded(2, 5, "random calls mixing levels 1 and 2 (ties, zero sizes, empty tenants) match a slow oracle")
@PROPERTY
@given(steps=st.lists(STEP, max_size=40))
@example(steps=[(0, "a", "k", "1", "", "2"), (0, "b", "k", "1", "", "2"), (9, "a", "k", "1", "", "2"),
                (4, "a", "k", "1", "", "2"), (9, "a", "k", "1", "", "2"), (7, "a", "k", "1", "", "2")])
def test_matches_oracle(impl, steps):
    run_queries(impl, plain_stream(steps, 2), oracle=oracle)
