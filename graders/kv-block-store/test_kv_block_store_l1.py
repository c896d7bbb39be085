"""Hidden suite, level 1: PUT, GET, DELETE, USAGE and DROP, in calls without timestamps."""


from hypothesis import example, given
from hypothesis import strategies as st
from kv_block_store_oracle import KEYS, SIZES, TENANTS, oracle, plain_stream, seeded_plain

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(40)


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 1, 3, "the prompt's level-1 example", """
        PUT acme blk:a1 64 -> true
        PUT acme blk:a1 128 -> false
        PUT zeta blk:a1 0 -> true
        GET acme blk:a1 -> 128
        GET zeta blk:a1 -> 0
        GET zeta blk:zz -> ''
        USAGE zeta -> 1,0
        DELETE acme blk:a1 -> true
        DELETE acme blk:a1 -> false
        USAGE acme -> 0,0
        DROP zeta -> 1
        DROP zeta -> 0
    """),
    case("put_new_then_get", 1, 1, "a PUT of a new block answers \"true\" and GET answers its size", """
        PUT t blk:1 4096 -> true
        GET t blk:1 -> 4096
    """),
    case("put_replaces", 1, 2, "a PUT of a held key answers \"false\" and the new size replaces the old one", """
        PUT t k 10 -> true
        PUT t k 3 -> false
        GET t k -> 3
        USAGE t -> 1,3
    """),
    case("put_same_size_again", 1, 1, "a PUT of a held key with the same size still answers \"false\"", """
        PUT t k 10 -> true
        PUT t k 10 -> false
        USAGE t -> 1,10
    """),
    case("put_replaces_with_larger", 1, 1, "a replace to a larger size forgets the old one too", """
        PUT t k 3 -> true
        PUT t k 300 -> false
        GET t k -> 300
        USAGE t -> 1,300
    """),
    case("get_missing_key", 1, 1, "GET of a key the tenant never held answers \"\"", """
        PUT t k 1 -> true
        GET t other -> ''
    """),
    case("get_unknown_tenant", 1, 1, "GET for a tenant never named answers \"\"", """
        GET nobody k -> ''
        PUT t k 1 -> true
        GET nobody k -> ''
    """),
    case("zero_size_block_is_held", 1, 2, "a block of size 0 is held: GET answers \"0\", not \"\"", """
        PUT t k 0 -> true
        GET t k -> 0
        USAGE t -> 1,0
    """),
    case("zero_size_block_replace_and_delete", 1, 2,
         "replacing a block of size 0 answers \"false\"; deleting it answers \"true\"", """
        PUT t k 0 -> true
        PUT t k 0 -> false
        DELETE t k -> true
        DELETE t k -> false
        GET t k -> ''
    """),
    case("delete_then_get", 1, 2, "DELETE of a held block answers \"true\", and GET then answers \"\"", """
        PUT t k 7 -> true
        DELETE t k -> true
        GET t k -> ''
        USAGE t -> 0,0
    """),
    case("delete_missing", 1, 1, "DELETE of a key never held answers \"false\" and changes nothing", """
        PUT t k 7 -> true
        DELETE t x -> false
        DELETE u k -> false
        GET t k -> 7
        USAGE t -> 1,7
    """),
    case("put_after_delete_is_new", 1, 2, "a PUT after a DELETE of the same key is a new block: \"true\"", """
        PUT t k 7 -> true
        DELETE t k -> true
        PUT t k 2 -> true
        GET t k -> 2
        USAGE t -> 1,2
    """),
    case("keys_belong_to_their_tenant", 1, 2,
         "the same key under two tenants is two blocks: deleting one leaves the other", """
        PUT a k 1 -> true
        PUT b k 2 -> true
        GET a k -> 1
        GET b k -> 2
        DELETE a k -> true
        GET b k -> 2
        GET a k -> ''
        USAGE b -> 1,2
    """),
    case("tenant_key_concatenation_does_not_collide", 1, 2,
         "tenant and key are kept apart: (\"ab\", \"c\") and (\"a\", \"bc\") are different blocks", """
        PUT ab c 1 -> true
        PUT a bc 2 -> true
        GET ab c -> 1
        GET a bc -> 2
        USAGE a -> 1,2
        USAGE ab -> 1,1
    """),
    case("case_sensitive", 1, 1, "tenants and keys are case-sensitive", """
        PUT t k 1 -> true
        PUT t K 2 -> true
        PUT T k 3 -> true
        GET t k -> 1
        GET t K -> 2
        GET T k -> 3
        USAGE t -> 2,3
    """),
    case("prefix_keys_are_distinct", 1, 1, "a key that starts another key is a different block (k, k1, k10)", """
        PUT t k 1 -> true
        PUT t k1 2 -> true
        PUT t k10 3 -> true
        DELETE t k1 -> true
        GET t k -> 1
        GET t k10 -> 3
        USAGE t -> 2,4
    """),
    case("usage_unknown_tenant", 1, 1, "USAGE of a tenant never named answers \"0,0\"", """
        USAGE nobody -> 0,0
        PUT t k 5 -> true
        USAGE nobody -> 0,0
    """),
    case("usage_counts_and_sums", 1, 2, "USAGE is \"<blocks>,<bytes>\": the count first, then the sum of the sizes", """
        PUT t a 100 -> true
        PUT t b 20 -> true
        PUT t c 3 -> true
        USAGE t -> 3,123
        DELETE t b -> true
        USAGE t -> 2,103
    """),
    case("usage_counts_zero_size_blocks", 1, 1, "USAGE counts blocks of size 0", """
        PUT t a 0 -> true
        PUT t b 0 -> true
        USAGE t -> 2,0
    """),
    case("drop_removes_all", 1, 2, "DROP removes every block of the tenant and answers how many", """
        PUT t a 1 -> true
        PUT t b 2 -> true
        PUT t c 0 -> true
        DROP t -> 3
        GET t a -> ''
        GET t c -> ''
        USAGE t -> 0,0
    """),
    case("drop_unknown_tenant", 1, 1, "DROP of a tenant never named answers \"0\"", """
        DROP nobody -> 0
        PUT t k 1 -> true
        DROP nobody -> 0
        GET t k -> 1
    """),
    case("drop_twice", 1, 1, "a second DROP answers \"0\"", """
        PUT t a 1 -> true
        DROP t -> 1
        DROP t -> 0
    """),
    case("drop_counts_only_held_blocks", 1, 2,
         "DROP counts only the blocks held now, not the ones deleted or replaced before", """
        PUT t a 1 -> true
        PUT t b 2 -> true
        PUT t b 3 -> false
        PUT t c 4 -> true
        DELETE t a -> true
        DROP t -> 2
    """),
    case("drop_one_tenant_only", 1, 1, "DROP leaves the other tenants' blocks, same keys included", """
        PUT a k 1 -> true
        PUT b k 2 -> true
        PUT ab k 3 -> true
        DROP a -> 1
        GET b k -> 2
        GET ab k -> 3
        USAGE b -> 1,2
    """),
    case("put_after_drop", 1, 2, "after a DROP, a PUT of a dropped key is new again", """
        PUT t a 5 -> true
        PUT t b 6 -> true
        DROP t -> 2
        PUT t a 7 -> true
        USAGE t -> 1,7
        DROP t -> 1
    """),
    case("usage_after_history", 1, 2, "USAGE counts only the blocks held now, after deletes, replaces and drops", """
        PUT t a 5 -> true
        PUT t b 6 -> true
        DELETE t a -> true
        PUT t b 1 -> false
        USAGE t -> 1,1
        DROP t -> 1
        USAGE t -> 0,0
        PUT t c 2 -> true
        USAGE t -> 1,2
    """),
)


@graded(1, 1, "no queries: an empty list of answers")
def test_no_queries(impl):
    run_queries(impl, [], [])


@graded(1, 2, "sizes up to 10^18 add up exactly, past 2**53 and past 10^18")
def test_big_sizes_exact(impl):
    big = 10**18
    odd = 2**53 + 1
    run_queries(impl, *query_rows([(f"PUT t a {big}", "true"), (f"PUT t b {big}", "true"), (f"PUT t c {odd}", "true"),
                      ("GET t c", str(odd)), ("USAGE t", f"3,{2 * big + odd}")]))


@graded(1, 2, "answers are str: \"true\", not True; \"5\", not 5; one answer per query")
def test_answers_are_strings(impl):
    run_queries(impl, [["PUT", "t", "k", "5"], ["GET", "t", "k"], ["USAGE", "t"]], ["true", "5", "1,5"])


@graded(1, 1, "solution does not modify the queries it is given")
def test_queries_not_modified(impl):
    queries = [["PUT", "t", "k", "5"], ["GET", "t", "k"], ["DELETE", "t", "k"], ["DROP", "t"]]
    run_queries(impl, queries, ["true", "5", "true", "0"], as_given=True)


@graded(1, 2, "every call starts from an empty store: nothing carries over from the call before")
def test_calls_are_independent(impl):
    run_queries(impl, [["PUT", "t", "k", "5"], ["PUT", "u", "k", "1"]], ["true", "true"])
    run_queries(impl, [["GET", "t", "k"], ["PUT", "t", "k", "6"], ["USAGE", "u"], ["DROP", "u"]], ["", "true", "0,0", "0"], note=" (right after a call that put t/k and u/k)")


@graded(1, 2, "a long call (2,000 queries) on a few tenants and keys matches the oracle")
def test_long_call(impl):
    run_queries(impl, seeded_plain(101, 2000, 1), oracle=oracle)


STEP = st.tuples(st.integers(0, 59), st.sampled_from(TENANTS), st.sampled_from(KEYS), st.sampled_from(SIZES),
                 st.just(""), st.just("1"))


@graded(1, 5, "random level-1 calls (replaces, deletes, drops, zero sizes) match a slow oracle")
@PROPERTY
@given(steps=st.lists(STEP, max_size=40))
@example(steps=[(0, "a", "k", "0", "", "1"), (3, "a", "k", "0", "", "1"), (4, "a", "k", "0", "", "1"),
                (3, "a", "k", "0", "", "1")])
def test_matches_oracle(impl, steps):
    run_queries(impl, plain_stream(steps, 1), oracle=oracle)
