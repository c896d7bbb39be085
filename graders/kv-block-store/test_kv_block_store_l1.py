"""Hidden suite, level 1: PUT, GET, DELETE, USAGE and DROP, in calls without timestamps."""

import copy

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kv_block_store_oracle import KEYS, SIZES, TENANTS, check_rows, plain_stream, run, seeded_plain

from kata.checks import property_settings
from kata.strict import same

PROPERTY = property_settings(40)


@pytest.mark.level(1)
@pytest.mark.points(3)
@pytest.mark.edge("the prompt's level-1 example")
def test_prompt_example(impl):
    check_rows(impl, [
        ("PUT acme blk:a1 64", "true"),
        ("PUT acme blk:a1 128", "false"),
        ("PUT zeta blk:a1 0", "true"),
        ("GET acme blk:a1", "128"),
        ("GET zeta blk:a1", "0"),
        ("GET zeta blk:zz", ""),
        ("USAGE zeta", "1,0"),
        ("DELETE acme blk:a1", "true"),
        ("DELETE acme blk:a1", "false"),
        ("USAGE acme", "0,0"),
        ("DROP zeta", "1"),
        ("DROP zeta", "0"),
    ])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("no queries: an empty list of answers")
def test_no_queries(impl):
    run(impl, [], [])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a PUT of a new block answers \"true\" and GET answers its size")
def test_put_new_then_get(impl):
    check_rows(impl, [("PUT t blk:1 4096", "true"), ("GET t blk:1", "4096")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a PUT of a held key answers \"false\" and the new size replaces the old one")
def test_put_replaces(impl):
    check_rows(impl, [("PUT t k 10", "true"), ("PUT t k 3", "false"), ("GET t k", "3"), ("USAGE t", "1,3")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a PUT of a held key with the same size still answers \"false\"")
def test_put_same_size_again(impl):
    check_rows(impl, [("PUT t k 10", "true"), ("PUT t k 10", "false"), ("USAGE t", "1,10")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a replace to a larger size forgets the old one too")
def test_put_replaces_with_larger(impl):
    check_rows(impl, [("PUT t k 3", "true"), ("PUT t k 300", "false"), ("GET t k", "300"), ("USAGE t", "1,300")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("GET of a key the tenant never held answers \"\"")
def test_get_missing_key(impl):
    check_rows(impl, [("PUT t k 1", "true"), ("GET t other", "")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("GET for a tenant never named answers \"\"")
def test_get_unknown_tenant(impl):
    check_rows(impl, [("GET nobody k", ""), ("PUT t k 1", "true"), ("GET nobody k", "")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a block of size 0 is held: GET answers \"0\", not \"\"")
def test_zero_size_block_is_held(impl):
    check_rows(impl, [("PUT t k 0", "true"), ("GET t k", "0"), ("USAGE t", "1,0")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("replacing a block of size 0 answers \"false\"; deleting it answers \"true\"")
def test_zero_size_block_replace_and_delete(impl):
    check_rows(impl, [("PUT t k 0", "true"), ("PUT t k 0", "false"), ("DELETE t k", "true"),
                      ("DELETE t k", "false"), ("GET t k", "")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("DELETE of a held block answers \"true\", and GET then answers \"\"")
def test_delete_then_get(impl):
    check_rows(impl, [("PUT t k 7", "true"), ("DELETE t k", "true"), ("GET t k", ""), ("USAGE t", "0,0")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("DELETE of a key never held answers \"false\" and changes nothing")
def test_delete_missing(impl):
    check_rows(impl, [("PUT t k 7", "true"), ("DELETE t x", "false"), ("DELETE u k", "false"),
                      ("GET t k", "7"), ("USAGE t", "1,7")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a PUT after a DELETE of the same key is a new block: \"true\"")
def test_put_after_delete_is_new(impl):
    check_rows(impl, [("PUT t k 7", "true"), ("DELETE t k", "true"), ("PUT t k 2", "true"),
                      ("GET t k", "2"), ("USAGE t", "1,2")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("the same key under two tenants is two blocks: deleting one leaves the other")
def test_keys_belong_to_their_tenant(impl):
    check_rows(impl, [("PUT a k 1", "true"), ("PUT b k 2", "true"), ("GET a k", "1"), ("GET b k", "2"),
                      ("DELETE a k", "true"), ("GET b k", "2"), ("GET a k", ""), ("USAGE b", "1,2")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("tenant and key are kept apart: (\"ab\", \"c\") and (\"a\", \"bc\") are different blocks")
def test_tenant_key_concatenation_does_not_collide(impl):
    check_rows(impl, [("PUT ab c 1", "true"), ("PUT a bc 2", "true"), ("GET ab c", "1"), ("GET a bc", "2"),
                      ("USAGE a", "1,2"), ("USAGE ab", "1,1")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("tenants and keys are case-sensitive")
def test_case_sensitive(impl):
    check_rows(impl, [("PUT t k 1", "true"), ("PUT t K 2", "true"), ("PUT T k 3", "true"), ("GET t k", "1"),
                      ("GET t K", "2"), ("GET T k", "3"), ("USAGE t", "2,3")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a key that starts another key is a different block (k, k1, k10)")
def test_prefix_keys_are_distinct(impl):
    check_rows(impl, [("PUT t k 1", "true"), ("PUT t k1 2", "true"), ("PUT t k10 3", "true"),
                      ("DELETE t k1", "true"), ("GET t k", "1"), ("GET t k10", "3"), ("USAGE t", "2,4")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("USAGE of a tenant never named answers \"0,0\"")
def test_usage_unknown_tenant(impl):
    check_rows(impl, [("USAGE nobody", "0,0"), ("PUT t k 5", "true"), ("USAGE nobody", "0,0")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("USAGE is \"<blocks>,<bytes>\": the count first, then the sum of the sizes")
def test_usage_counts_and_sums(impl):
    check_rows(impl, [("PUT t a 100", "true"), ("PUT t b 20", "true"), ("PUT t c 3", "true"),
                      ("USAGE t", "3,123"), ("DELETE t b", "true"), ("USAGE t", "2,103")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("USAGE counts blocks of size 0")
def test_usage_counts_zero_size_blocks(impl):
    check_rows(impl, [("PUT t a 0", "true"), ("PUT t b 0", "true"), ("USAGE t", "2,0")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("sizes up to 10^18 add up exactly, past 2**53 and past 10^18")
def test_big_sizes_exact(impl):
    big = 10**18
    odd = 2**53 + 1
    check_rows(impl, [(f"PUT t a {big}", "true"), (f"PUT t b {big}", "true"), (f"PUT t c {odd}", "true"),
                      ("GET t c", str(odd)), ("USAGE t", f"3,{2 * big + odd}")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("DROP removes every block of the tenant and answers how many")
def test_drop_removes_all(impl):
    check_rows(impl, [("PUT t a 1", "true"), ("PUT t b 2", "true"), ("PUT t c 0", "true"), ("DROP t", "3"),
                      ("GET t a", ""), ("GET t c", ""), ("USAGE t", "0,0")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("DROP of a tenant never named answers \"0\"")
def test_drop_unknown_tenant(impl):
    check_rows(impl, [("DROP nobody", "0"), ("PUT t k 1", "true"), ("DROP nobody", "0"), ("GET t k", "1")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a second DROP answers \"0\"")
def test_drop_twice(impl):
    check_rows(impl, [("PUT t a 1", "true"), ("DROP t", "1"), ("DROP t", "0")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("DROP counts only the blocks held now, not the ones deleted or replaced before")
def test_drop_counts_only_held_blocks(impl):
    check_rows(impl, [("PUT t a 1", "true"), ("PUT t b 2", "true"), ("PUT t b 3", "false"),
                      ("PUT t c 4", "true"), ("DELETE t a", "true"), ("DROP t", "2")])


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("DROP leaves the other tenants' blocks, same keys included")
def test_drop_one_tenant_only(impl):
    check_rows(impl, [("PUT a k 1", "true"), ("PUT b k 2", "true"), ("PUT ab k 3", "true"), ("DROP a", "1"),
                      ("GET b k", "2"), ("GET ab k", "3"), ("USAGE b", "1,2")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("after a DROP, a PUT of a dropped key is new again")
def test_put_after_drop(impl):
    check_rows(impl, [("PUT t a 5", "true"), ("PUT t b 6", "true"), ("DROP t", "2"), ("PUT t a 7", "true"),
                      ("USAGE t", "1,7"), ("DROP t", "1")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("USAGE counts only the blocks held now, after deletes, replaces and drops")
def test_usage_after_history(impl):
    check_rows(impl, [("PUT t a 5", "true"), ("PUT t b 6", "true"), ("DELETE t a", "true"), ("PUT t b 1", "false"),
                      ("USAGE t", "1,1"), ("DROP t", "1"), ("USAGE t", "0,0"), ("PUT t c 2", "true"),
                      ("USAGE t", "1,2")])


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("answers are str: \"true\", not True; \"5\", not 5; one answer per query")
def test_answers_are_strings(impl):
    got = impl.solution([["PUT", "t", "k", "5"], ["GET", "t", "k"], ["USAGE", "t"]])
    assert same(got, ["true", "5", "1,5"]), (
        f"Called solution([['PUT', 't', 'k', '5'], ['GET', 't', 'k'], ['USAGE', 't']]). Returned {got!r}, "
        "expected ['true', '5', '1,5'] (a list of str).")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("solution does not modify the queries it is given")
def test_queries_not_modified(impl):
    queries = [["PUT", "t", "k", "5"], ["GET", "t", "k"], ["DELETE", "t", "k"], ["DROP", "t"]]
    before = copy.deepcopy(queries)
    got = impl.solution(queries)
    expected = ["true", "5", "true", "0"]
    assert same(got, expected), f"Called solution({before!r}). Returned {got!r}, expected {expected!r}."
    assert same(queries, before), f"Called solution({before!r}). The queries became {queries!r}, expected unchanged."


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("every call starts from an empty store: nothing carries over from the call before")
def test_calls_are_independent(impl):
    run(impl, [["PUT", "t", "k", "5"], ["PUT", "u", "k", "1"]], ["true", "true"])
    run(impl, [["GET", "t", "k"], ["PUT", "t", "k", "6"], ["USAGE", "u"], ["DROP", "u"]], ["", "true", "0,0", "0"],
        note=" (right after a call that put t/k and u/k)")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a long call (2,000 queries) on a few tenants and keys matches the oracle")
def test_long_call(impl):
    run(impl, seeded_plain(101, 2000, 1))


STEP = st.tuples(st.integers(0, 59), st.sampled_from(TENANTS), st.sampled_from(KEYS), st.sampled_from(SIZES),
                 st.just(""), st.just("1"))


@pytest.mark.level(1)
@pytest.mark.points(5)
@pytest.mark.edge("random level-1 calls (replaces, deletes, drops, zero sizes) match a slow oracle")
@PROPERTY
@given(steps=st.lists(STEP, max_size=40))
@example(steps=[(0, "a", "k", "0", "", "1"), (3, "a", "k", "0", "", "1"), (4, "a", "k", "0", "", "1"),
                (3, "a", "k", "0", "", "1")])
def test_matches_oracle(impl, steps):
    run(impl, plain_stream(steps, 1))
