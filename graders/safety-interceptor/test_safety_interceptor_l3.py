"""Hidden suite of `safety-interceptor`, level 3: a prefix cache tenants never share."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from safety_interceptor_oracle import OCache

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


@graded(3, 2, "the prompt's example: partial blocks never cached, tenants isolated, LRU eviction over quota")
def test_prompt_example(impl):
    c = impl.TenantPrefixCache(4, {"acme": 3, "beta": 8})
    got = [c.admit("acme", list(range(10))), c.admit("acme", list(range(9))), c.admit("beta", list(range(10))),
           c.admit("acme", [0, 1, 2, 3, 9, 9, 9, 9, 5, 5, 5, 5]), c.cached_blocks("acme"), c.cached_blocks("beta")]
    check(got, [(0, 2), (2, 0), (0, 2), (1, 2), 3, 2], "the prompt's sequence of admits, then cached_blocks")


@graded(3, 2, "the same prompt from another tenant never hits: no block is shared across tenants")
def test_tenants_never_share(impl):
    c = impl.TenantPrefixCache(2, {"a": 10, "b": 10})
    c.admit("a", [1, 2, 3, 4, 5, 6])
    check(c.admit("b", [1, 2, 3, 4, 5, 6]), (0, 3), "admit('b', the prompt 'a' cached)")
    check(c.admit("a", [1, 2, 3, 4, 5, 6]), (3, 0), "admit('a', its own prompt again)")


@graded(3, 2, "a block is identified by every token before it: the same block contents after a different prefix miss")
def test_block_key_is_the_whole_prefix(impl):
    c = impl.TenantPrefixCache(2, {"a": 10})
    c.admit("a", [1, 2, 3, 4])
    check(c.admit("a", [9, 9, 3, 4]), (0, 2), "admit('a', [9, 9, 3, 4]) after [1, 2, 3, 4]")


@graded(3, 2, "hits stop at the first miss, even when a later block is cached; later blocks count as new")
def test_hits_stop_at_first_miss(impl):
    c = impl.TenantPrefixCache(1, {"a": 3})
    c.admit("a", [1, 2, 3])   # blocks (1), (1,2), (1,2,3)
    c.admit("a", [7])         # evicts (1): LRU
    check(c.admit("a", [1, 2, 3]), (0, 3), "admit('a', [1, 2, 3]) after block (1) was evicted")


@graded(3, 2, "a hit refreshes recency: the touched blocks outlive untouched older ones")
def test_hit_refreshes_recency(impl):
    c = impl.TenantPrefixCache(1, {"a": 3})
    c.admit("a", [1])
    c.admit("a", [2])
    c.admit("a", [1])  # (1) is now more recent than (2)
    c.admit("a", [3, 4])  # 2 new blocks, (3) and (3, 4): 4 blocks, so the least recent, (2), goes
    check((c.admit("a", [1]), c.admit("a", [2])), ((1, 0), (0, 1)), "admit('a', [1]), then admit('a', [2]), after (1) was touched")


@graded(3, 2, "hit blocks are used in block order, then new blocks: over quota the first hit goes first")
def test_recency_order_within_admit(impl):
    c = impl.TenantPrefixCache(1, {"a": 3})
    c.admit("a", [1, 2])       # (1), (1, 2)
    got = c.admit("a", [1, 2, 3, 4])  # hits 2, new 2: 4 blocks, evict the LRU: (1)
    check((got, c.admit("a", [1])), ((2, 2), (0, 1)), "admit('a', [1, 2, 3, 4]) with quota 3, then admit('a', [1])")


@graded(3, 1, "a quota of 0 caches nothing; a prompt shorter than a block caches nothing")
def test_zero_quota_and_short_prompt(impl):
    c = impl.TenantPrefixCache(4, {"a": 0, "b": 5})
    check((c.admit("a", list(range(8))), c.cached_blocks("a")), ((0, 2), 0), "admit('a', 8 tokens) with quota 0")
    check((c.admit("b", [1, 2, 3]), c.cached_blocks("b"), c.admit("b", [])), ((0, 0), 0, (0, 0)), "admit('b', 3 tokens), admit('b', [])")


@graded(3, 1, "one tenant's evictions never touch another's blocks")
def test_quota_is_per_tenant(impl):
    c = impl.TenantPrefixCache(1, {"a": 2, "b": 2})
    c.admit("b", [5, 6])
    c.admit("a", [1, 2, 3, 4])
    check((c.cached_blocks("a"), c.cached_blocks("b"), c.admit("b", [5, 6])), (2, 2, (2, 0)), "after 'a' overflowed its quota")


@graded(3, 1, "admit does not change the caller's token list, and later changes to it do not change the cache")
def test_tokens_not_aliased(impl):
    c = impl.TenantPrefixCache(2, {"a": 5})
    tokens = [1, 2, 3, 4]
    c.admit("a", tokens)
    tokens[0] = 99
    check((tokens, c.admit("a", [1, 2, 3, 4])), ([99, 2, 3, 4], (2, 0)), "admit('a', tokens), change tokens[0], admit the original again")


@graded(3, 4, "admit matches the oracle on generated multi-tenant traces; no tenant ever hits another's prompt")
@PROPERTY
@given(bs=st.integers(1, 3), quotas=st.tuples(st.integers(0, 6), st.integers(0, 6)),
       trace=st.lists(st.tuples(st.sampled_from(["t0", "t1"]), st.lists(st.integers(0, 2), max_size=7)), max_size=25))
def test_matches_oracle(impl, bs, quotas, trace):
    q = {"t0": quotas[0], "t1": quotas[1]}
    c, o = impl.TenantPrefixCache(bs, q), OCache(bs, q)
    for tenant, tokens in trace:
        check(c.admit(tenant, list(tokens)), o.admit(tenant, tokens), f"admit({tenant!r}, {tokens}) in trace {trace}, block_size {bs}, quotas {q}")
    check([c.cached_blocks(t) for t in ("t0", "t1")], [len(o.lru["t0"]), len(o.lru["t1"])], "cached_blocks after the trace")


@graded(3, 2, "block_size, quotas (not a dict, empty or non-str tenant, bad quota), tenant and tokens are named")
def test_invalid(impl):
    for bad in (0, True, 2.0, None):
        check_raises(lambda: impl.TenantPrefixCache(bad, {"a": 1}), "block_size", f"TenantPrefixCache({bad!r}, {{'a': 1}})")
    for bad in (None, [("a", 1)], {"": 1}, {1: 1}, {"a": -1}, {"a": True}, {"a": 1.0}):
        check_raises(lambda: impl.TenantPrefixCache(2, bad), "quotas", f"TenantPrefixCache(2, {bad!r})")
    check_raises(lambda: impl.TenantPrefixCache(0, None), "block_size", "TenantPrefixCache(0, None)")
    c = impl.TenantPrefixCache(2, {"a": 1})
    check_raises(lambda: c.admit("b", [1, 2]), "tenant", "admit('b', [1, 2])")
    check_raises(lambda: c.admit("b", None), "tenant", "admit('b', None) (tenant first)")
    check_raises(lambda: c.cached_blocks("zz"), "tenant", "cached_blocks('zz')")
    for bad in (None, (1, 2), [1, "2"], [1.0], [True]):
        check_raises(lambda: c.admit("a", bad), "tokens", f"admit('a', {bad!r})")


@graded(3, 1, "a block still cached after a miss is counted as new and held once, not twice")
def test_cached_after_miss_held_once(impl):
    c = impl.TenantPrefixCache(1, {"a": 3})
    c.admit("a", [1, 2])  # (1), (1, 2)
    c.admit("a", [8])     # (8)
    c.admit("a", [9])     # evicts (1): (1, 2), (8), (9)
    check((c.admit("a", [1, 2]), c.cached_blocks("a")), ((0, 2), 3), "admit('a', [1, 2]) after (1) was evicted but (1, 2) was not")


@graded(3, 1, "evicted blocks are cached again as new blocks on the next admit")
def test_evicted_recached(impl):
    c = impl.TenantPrefixCache(2, {"a": 1})
    c.admit("a", [1, 1])
    c.admit("a", [2, 2])
    check((c.admit("a", [1, 1]), c.admit("a", [1, 1])), ((0, 1), (1, 0)), "admit('a', [1, 1]) twice after eviction")


@graded(3, 1, "many tenants with the same prompts: each caches its own copy")
def test_many_tenants(impl):
    quotas = {f"t{i}": 4 for i in range(5)}
    c = impl.TenantPrefixCache(2, quotas)
    got = [c.admit(t, [1, 2, 3, 4]) for t in quotas] + [c.admit(t, [1, 2, 3, 4]) for t in quotas]
    check(got, [(0, 2)] * 5 + [(2, 0)] * 5, "admit(each of 5 tenants, the same prompt), twice")


@graded(3, 1, "blocks cached by different prompts do not combine: block 1 of [1, 4] is not block 1 of [3, 4]")
def test_blocks_from_different_prompts(impl):
    c = impl.TenantPrefixCache(1, {"a": 10})
    c.admit("a", [1, 2])
    c.admit("a", [3, 4])
    check(c.admit("a", [1, 4]), (1, 1), "admit('a', [1, 4]) after [1, 2] and [3, 4]")
