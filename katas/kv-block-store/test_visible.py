"""Visible tests for kv-block-store: the prompt's examples and a few more.

Run them with `kata check kv-block-store`. The hidden suite checks many more cases.
"""

import pytest


def check(impl, rows):
    """rows: (query, expected answer) pairs, run as one call."""
    queries = [query for query, _ in rows]
    expected = [answer for _, answer in rows]
    got = impl.solution([list(q) for q in queries])
    assert got == expected, f"Called solution({queries}). Returned {got!r}, expected {expected!r}."


# --- level 1 -----------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_example_level1(impl):
    check(impl, [
        (["PUT", "acme", "blk:a1", "64"], "true"),
        (["PUT", "acme", "blk:a1", "128"], "false"),
        (["PUT", "zeta", "blk:a1", "0"], "true"),
        (["GET", "acme", "blk:a1"], "128"),
        (["GET", "zeta", "blk:a1"], "0"),
        (["GET", "zeta", "blk:zz"], ""),
        (["USAGE", "zeta"], "1,0"),
        (["DELETE", "acme", "blk:a1"], "true"),
        (["DELETE", "acme", "blk:a1"], "false"),
        (["USAGE", "acme"], "0,0"),
        (["DROP", "zeta"], "1"),
        (["DROP", "zeta"], "0"),
    ])


@pytest.mark.level(1)
def test_delete_then_put_is_new(impl):
    check(impl, [
        (["PUT", "acme", "k", "5"], "true"),
        (["DELETE", "acme", "k"], "true"),
        (["GET", "acme", "k"], ""),
        (["PUT", "acme", "k", "7"], "true"),
        (["USAGE", "acme"], "1,7"),
    ])


@pytest.mark.level(1)
def test_empty_call_and_fresh_store(impl):
    assert impl.solution([]) == []
    impl.solution([["PUT", "acme", "k", "5"]])
    assert impl.solution([["GET", "acme", "k"]]) == [""], "each call starts from an empty store"


# --- level 2 -----------------------------------------------------------------


@pytest.mark.level(2)
def test_prompt_example_level2(impl):
    check(impl, [
        (["PUT", "acme", "blk:a", "64"], "true"),
        (["PUT", "acme", "blk:b", "128"], "true"),
        (["PUT", "acme", "tmp:c", "64"], "true"),
        (["PUT", "zeta", "blk:a", "192"], "true"),
        (["PUT", "beta", "x", "0"], "true"),
        (["SCAN", "acme", "blk:"], "blk:b(128),blk:a(64)"),
        (["SCAN", "acme", ""], "blk:b(128),blk:a(64),tmp:c(64)"),
        (["SCAN", "acme", "gpu"], ""),
        (["TOP", "2"], "acme(256),zeta(192)"),
        (["TOP", "9"], "acme(256),zeta(192),beta(0)"),
        (["PUT", "zeta", "z", "64"], "true"),
        (["TOP", "2"], "acme(256),zeta(256)"),
        (["TOP", "0"], ""),
    ])


@pytest.mark.level(2)
def test_sizes_sort_as_numbers(impl):
    check(impl, [
        (["PUT", "t", "a", "9"], "true"),
        (["PUT", "t", "b", "10"], "true"),
        (["SCAN", "t", ""], "b(10),a(9)"),
    ])


@pytest.mark.level(2)
def test_top_forgets_a_tenant_with_no_blocks(impl):
    check(impl, [
        (["PUT", "acme", "k", "5"], "true"),
        (["PUT", "zeta", "k", "3"], "true"),
        (["DROP", "acme"], "1"),
        (["TOP", "5"], "zeta(3)"),
    ])


# --- level 3 -----------------------------------------------------------------


@pytest.mark.level(3)
def test_prompt_example_level3(impl):
    check(impl, [
        (["1", "PUT_WITH_TTL", "acme", "a", "10", "5"], "true"),
        (["2", "PUT", "acme", "b", "20"], "true"),
        (["3", "TTL", "acme", "a"], "3"),
        (["4", "TTL", "acme", "b"], "-1"),
        (["5", "USAGE", "acme"], "2,30"),
        (["6", "GET", "acme", "a"], ""),
        (["7", "PUT", "acme", "a", "1"], "true"),
        (["9", "PUT_WITH_TTL", "acme", "b", "20", "3"], "false"),
        (["11", "TOP", "3"], "acme(21)"),
        (["12", "SCAN", "acme", ""], "a(1)"),
    ])


@pytest.mark.level(3)
def test_held_until_the_last_instant(impl):
    check(impl, [
        (["10", "PUT_WITH_TTL", "t", "k", "4", "3"], "true"),
        (["12", "TTL", "t", "k"], "1"),
        (["13", "DELETE", "t", "k"], "false"),
    ])


@pytest.mark.level(3)
def test_plain_put_clears_the_ttl(impl):
    check(impl, [
        (["0", "PUT_WITH_TTL", "t", "k", "4", "2"], "true"),
        (["1", "PUT", "t", "k", "6"], "false"),
        (["5", "TTL", "t", "k"], "-1"),
        (["6", "GET", "t", "k"], "6"),
    ])


# --- level 4 -----------------------------------------------------------------


@pytest.mark.level(4)
def test_prompt_example_level4(impl):
    check(impl, [
        (["1", "PUT_WITH_TTL", "acme", "a", "10", "10"], "true"),
        (["2", "PUT", "acme", "b", "20"], "true"),
        (["4", "DELETE", "acme", "b"], "true"),
        (["5", "PUT", "acme", "c", "5"], "true"),
        (["6", "SNAPSHOT", "acme", "3"], "b(20),a(10)"),
        (["7", "SNAPSHOT", "acme", "4"], "a(10)"),
        (["8", "RESTORE", "acme", "2"], "2"),
        (["9", "TTL", "acme", "a"], "8"),
        (["10", "GET", "acme", "c"], ""),
        (["11", "SNAPSHOT", "acme", "7"], "a(10),c(5)"),
        (["12", "SNAPSHOT", "acme", "11"], "b(20),a(10)"),
        (["17", "USAGE", "acme"], "1,20"),
    ])


@pytest.mark.level(4)
def test_snapshot_before_anything(impl):
    check(impl, [
        (["3", "PUT", "t", "k", "1"], "true"),
        (["4", "SNAPSHOT", "t", "2"], ""),
        (["5", "SNAPSHOT", "t", "3"], "k(1)"),
    ])


@pytest.mark.level(4)
def test_restore_touches_one_tenant(impl):
    check(impl, [
        (["1", "PUT", "acme", "k", "1"], "true"),
        (["2", "PUT", "zeta", "k", "2"], "true"),
        (["3", "RESTORE", "acme", "0"], "0"),
        (["4", "GET", "zeta", "k"], "2"),
        (["5", "PUT", "acme", "k", "3"], "true"),
    ])
