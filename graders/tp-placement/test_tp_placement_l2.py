"""Hidden suite of `tp-placement`, level 2: what the ring costs."""

from __future__ import annotations

from fractions import Fraction as F

from hypothesis import given
from hypothesis import strategies as st
from tp_placement_oracle import LAT_NET, LAT_NV, LINKS, NETWORK, NVLINK, o_allreduce, o_ring

from kata.checks import check, check_fraction, check_raises, graded, property_settings

PROPERTY = property_settings()


def links(impl, spec=LINKS):
    return impl.Links(*spec)


def ar(impl, cluster, group, num_bytes, degraded=None, spec=LINKS):
    return impl.allreduce_time(impl.Cluster(*cluster), links(impl, spec), group, num_bytes, degraded)


# --- the ring -----------------------------------------------------------------------


@graded(2, 1, "ring_links: ascending order, then the last back to the first; two GPUs share one link; one GPU has none")
def test_ring_links(impl):
    for group, want in (([5, 1, 3], [frozenset({1, 3}), frozenset({3, 5}), frozenset({1, 5})]),
                        ([4, 2], [frozenset({2, 4})]), ([7], []),
                        ([3, 0, 2, 1], [frozenset({0, 1}), frozenset({1, 2}), frozenset({2, 3}), frozenset({0, 3})])):
        check(impl.ring_links(group), want, f"ring_links({group})")


@graded(2, 1, "ring_links does not sort the caller's list in place")
def test_ring_links_does_not_modify(impl):
    group = [5, 1, 3]
    got = impl.ring_links(group)
    check((got, group), ([frozenset({1, 3}), frozenset({3, 5}), frozenset({1, 5})], [5, 1, 3]), "ring_links([5, 1, 3]), then the list")


# --- allreduce_time ------------------------------------------------------------------


@graded(2, 2, "the prompt's example: 64 MiB inside a node vs a ring with network links (about 9x)")
def test_prompt_example(impl):
    c = (4, 8, frozenset({5}))
    check_fraction(ar(impl, c, list(range(8)), 64 * 2**20), F(3866891, 14062500000), "allreduce_time(GPUs 0-7, 64 MiB)")
    check_fraction(ar(impl, c, [0, 1, 2, 3, 4, 6, 7, 8], 64 * 2**20), F(3779391, 1562500000),
                   "allreduce_time([0, 1, 2, 3, 4, 6, 7, 8], 64 MiB)")


@graded(2, 1, "a group of one costs Fraction(0); zero bytes cost only the latency")
def test_trivial_groups(impl):
    check_fraction(ar(impl, (2, 4), [3], 10**9), F(0), "allreduce_time([3], 10**9)")
    check_fraction(ar(impl, (2, 4), [0, 1, 2], 0), 4 * LAT_NV, "allreduce_time([0, 1, 2], 0)")


@graded(2, 2, "one network link in the ring sets the pace, and its latency is paid every step")
def test_slowest_link_decides(impl):
    # [2, 3, 4] on domains of 4: links 2-3 (NVLink), 3-4 (network), 4-2 (network)
    want = F(4 * 3000, 3 * NETWORK) + 4 * LAT_NET
    check_fraction(ar(impl, (2, 4), [4, 2, 3], 3000), want, "allreduce_time(Cluster(2, 4), [4, 2, 3], 3000)")


@graded(2, 2, "a degraded link replaces its bandwidth, even inside a domain; its latency is unchanged")
def test_degraded_link(impl):
    degraded = {frozenset({1, 2}): 10**9}
    want = F(6 * 4000, 4 * 10**9) + 6 * LAT_NV
    check_fraction(ar(impl, (1, 8), [0, 1, 2, 3], 4000, degraded), want, "allreduce_time([0, 1, 2, 3], 4000, {1-2: 1 GB/s})")
    faster = {frozenset({3, 4}): 10**15}  # a degraded network link can be listed faster: it is used as listed
    want = F(2 * 8, 2 * 10**15) + 2 * LAT_NET
    check_fraction(ar(impl, (2, 4), [3, 4], 8, faster), want, "allreduce_time(Cluster(2, 4), [3, 4], 8, {3-4: 10**15})")


@graded(2, 1, "a degraded link that is not in the ring changes nothing")
def test_degraded_elsewhere(impl):
    degraded = {frozenset({0, 2}): 1}  # 0-2 is not a ring link of [0, 1, 2, 3]
    check_fraction(ar(impl, (1, 8), [0, 1, 2, 3], 4000, degraded), ar(impl, (1, 8), [0, 1, 2, 3], 4000),
                   "allreduce_time([0, 1, 2, 3], 4000, {0-2 degraded})")


@graded(2, 1, "two GPUs: 2 steps of half the bytes over their one link")
def test_two_gpus(impl):
    check_fraction(ar(impl, (1, 8), [6, 1], 900), F(2 * 900, 2 * NVLINK) + 2 * LAT_NV, "allreduce_time([6, 1], 900)")


@graded(2, 3, "allreduce_time matches the oracle on generated clusters, groups, sizes and degraded links")
@PROPERTY
@given(data=st.data(), num_domains=st.integers(1, 4), size=st.integers(1, 8), num_bytes=st.integers(0, 10**12),
       nv=st.integers(1, 10**12), net=st.integers(1, 10**12),
       lat=st.tuples(st.fractions(0, 1, max_denominator=10**6), st.fractions(0, 1, max_denominator=10**6)))
def test_allreduce_matches_oracle(impl, data, num_domains, size, num_bytes, nv, net, lat):
    n = num_domains * size
    group = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    pairs = o_ring(group)
    degraded = {p: data.draw(st.integers(1, 10**12)) for p in pairs if data.draw(st.booleans())} or None
    spec = (nv, net, lat[0], lat[1])
    got = ar(impl, (num_domains, size), group, num_bytes, degraded, spec)
    check_fraction(got, o_allreduce(size, spec, group, num_bytes, degraded),
                   f"allreduce_time(Cluster({num_domains}, {size}), Links{spec}, {group}, {num_bytes}, {degraded})")


# --- per layer and between placements ---------------------------------------------------------


@graded(2, 2, "tp_layer_time is two all-reduces of tokens * hidden * dtype_bytes")
def test_tp_layer_time(impl):
    c = impl.Cluster(4, 8)
    got = impl.tp_layer_time(c, links(impl), list(range(8, 16)), 4096, 8192, 2)
    check_fraction(got, 2 * o_allreduce(8, LINKS, list(range(8, 16)), 4096 * 8192 * 2),
                   "tp_layer_time(GPUs 8-15, 4096 tokens, hidden 8192, bf16)")


@graded(2, 2, "best_placement: a placement costs its slowest group; the cheapest wins")
def test_best_placement_slowest_group(impl):
    c = impl.Cluster(2, 4)
    a = [[0, 1], [2, 3], [4, 5]]  # all inside domains
    b = [[0, 1, 2, 3], [4, 5, 6, 7]]
    cross = [[0, 1], [3, 4]]  # one crossing group makes the whole placement slow
    check(impl.best_placement(c, links(impl), [cross, a], 10**6), 1, "best_placement([crossing, inside], 1 MB)")
    check(impl.best_placement(c, links(impl), [b, cross], 10**6), 0, "best_placement([inside 4+4, crossing], 1 MB)")
    # three pairs (each 4.2 us, 12.7 us summed) beat one ring of four (9.3 us): groups run at once
    check(impl.best_placement(c, links(impl), [[[0, 1, 2, 3]], a], 10**6), 1, "best_placement([[0-3], three pairs], 1 MB)")


@graded(2, 2, "best_placement ties go to the lowest index (exact Fractions make the tie real)")
def test_best_placement_tie(impl):
    c = impl.Cluster(2, 4)
    check(impl.best_placement(c, links(impl), [[[4, 5]], [[0, 1]], [[2, 3]]], 10**6), 0,
          "best_placement([[[4, 5]], [[0, 1]], [[2, 3]]], 1 MB) (all the same cost)")


@graded(2, 1, "best_placement applies degraded links")
def test_best_placement_degraded(impl):
    c = impl.Cluster(2, 4)
    degraded = {frozenset({0, 1}): 10**6}
    check(impl.best_placement(c, links(impl), [[[0, 1]], [[2, 3]]], 10**6, degraded), 1,
          "best_placement([[[0, 1]], [[2, 3]]], 1 MB, {0-1: 1 MB/s})")


# --- invalid input ----------------------------------------------------------------------


@graded(2, 2, "Links fields: bandwidths ints >= 1, latencies rationals >= 0 (no floats, no bools), each named")
def test_invalid_links(impl):
    c = impl.Cluster(1, 4)
    for spec, name in (((0, 1, 0, 0), "nvlink_bandwidth"), ((True, 1, 0, 0), "nvlink_bandwidth"),
                       ((1.0, 1, 0, 0), "nvlink_bandwidth"), ((1, 0, 0, 0), "network_bandwidth"),
                       ((1, None, 0, 0), "network_bandwidth"), ((1, 1, 0.5, 0), "nvlink_latency"),
                       ((1, 1, F(-1, 2), 0), "nvlink_latency"), ((1, 1, 0, True), "network_latency"),
                       ((1, 1, 0, "0"), "network_latency")):
        check_raises(lambda: impl.allreduce_time(c, impl.Links(*spec), [0, 1], 8), name, f"allreduce_time(.., Links{spec}, [0, 1], 8)")


@graded(2, 1, "Links with two invalid fields names the one declared first, for every pair of fields")
def test_links_two_bad_fields(impl):
    c = impl.Cluster(1, 4)
    names = ("nvlink_bandwidth", "network_bandwidth", "nvlink_latency", "network_latency")
    bad = (0, None, F(-1, 2), 0.5)
    for i in range(4):
        for j in range(i + 1, 4):
            spec = [1, 1, 0, 0]
            spec[i], spec[j] = bad[i], bad[j]
            check_raises(lambda: impl.allreduce_time(c, impl.Links(*spec), [0, 1], 8), names[i],
                         f"allreduce_time(.., Links{tuple(spec)}, [0, 1], 8) ({names[i]} and {names[j]} both bad)")


@graded(2, 2, "group, num_bytes, degraded, tokens, hidden, dtype_bytes are each checked and named")
def test_invalid_arguments(impl):
    c, L = impl.Cluster(2, 4), links(impl)
    check_raises(lambda: impl.allreduce_time(c, L, [], 8), "group", "allreduce_time(.., [], 8)")
    check_raises(lambda: impl.allreduce_time(c, L, [0, 0], 8), "group", "allreduce_time(.., [0, 0], 8)")
    for bad in (-1, True, 8.0, None):
        check_raises(lambda: impl.allreduce_time(c, L, [0, 1], bad), "num_bytes", f"allreduce_time(.., [0, 1], {bad!r})")
    for bad in ([(0, 1)], {frozenset({0, 1}): 0}, {frozenset({0, 1}): 2.0}, {frozenset({0}): 5},
                {frozenset({0, 9}): 5}, {frozenset({0, 8}): 5}, {(0, 1): 5}):
        check_raises(lambda: impl.allreduce_time(c, L, [0, 1], 8, bad), "degraded", f"allreduce_time(.., [0, 1], 8, {bad!r})")
    for i, name in enumerate(("tokens", "hidden", "dtype_bytes")):
        for bad in (0, True, 2.0):
            args = [4, 8, 2]
            args[i] = bad
            check_raises(lambda: impl.tp_layer_time(c, L, [0, 1], *args), name, f"tp_layer_time(.., [0, 1], {args})")


@graded(2, 1, "best_placement: placements (empty, a non-list, an empty placement, a bad group) before num_bytes")
def test_invalid_best_placement(impl):
    c, L = impl.Cluster(2, 4), links(impl)
    for bad in ([], None, [[]], [[[0, 1]], []], [[[0, 1]], [[9]]]):
        check_raises(lambda: impl.best_placement(c, L, bad, -1), "placements", f"best_placement(.., {bad!r}, -1)")
    check_raises(lambda: impl.best_placement(c, L, [[[0, 1]]], -1), "num_bytes", "best_placement(.., [[[0, 1]]], -1)")
    check_raises(lambda: impl.best_placement(c, L, [[[0, 1]]], 8, {(0, 1): 5}), "degraded", "best_placement(.., [[[0, 1]]], 8, {(0, 1): 5})")
    check(impl.best_placement(c, L, [[[0, 1]], [[2, 3]]], 0), 0, "best_placement(.., two pairs, 0 bytes) (zero bytes is valid)")
    check_fraction(impl.tp_layer_time(c, L, [0, 1], 1, 1, 1), 2 * o_allreduce(4, LINKS, [0, 1], 1), "tp_layer_time(.., [0, 1], 1, 1, 1)")


@graded(2, 1, "the ring follows ascending ids even when that crosses the network twice")
def test_ring_order_crossing(impl):
    # [0, 4, 1] on Cluster(2, 4): links 0-1 (NVLink), 1-4 and 4-0 (network)
    want = F(4 * 300, 3 * NETWORK) + 4 * LAT_NET
    check_fraction(ar(impl, (2, 4), [0, 4, 1], 300), want, "allreduce_time(Cluster(2, 4), [0, 4, 1], 300)")


@graded(2, 1, "times are exact Fractions even for 10**30 bytes")
def test_exact_huge_bytes(impl):
    check_fraction(ar(impl, (1, 8), [0, 1, 2], 10**30 + 1), o_allreduce(8, LINKS, [0, 1, 2], 10**30 + 1),
                   "allreduce_time([0, 1, 2], 10**30 + 1)")


@graded(2, 1, "tp_layer_time passes degraded links through to the all-reduce")
def test_tp_layer_degraded(impl):
    c = impl.Cluster(1, 8)
    degraded = {frozenset({0, 1}): 10**9}
    got = impl.tp_layer_time(c, links(impl), [0, 1, 2, 3], 8, 16, 2, degraded)
    check_fraction(got, 2 * o_allreduce(8, LINKS, [0, 1, 2, 3], 8 * 16 * 2, degraded), "tp_layer_time(.., degraded 0-1)")


@graded(2, 1, "latency: the largest latency of the ring is paid every step, even with no bytes")
def test_latency_of_slowest_hop(impl):
    check_fraction(ar(impl, (2, 2), [0, 1, 2], 0), 4 * LAT_NET, "allreduce_time(Cluster(2, 2), [0, 1, 2], 0)")
