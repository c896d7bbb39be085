"""Hidden suite of `tp-placement`, level 3: why is this group slow?"""

from __future__ import annotations

from fractions import Fraction as F

from hypothesis import given
from hypothesis import strategies as st
from tp_placement_oracle import LINKS, NVLINK, o_diagnose, o_link, o_ring

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def nominal(size, groups):
    return {p: o_link(size, LINKS, p)[0] for g in groups for p in o_ring(g)}


def run(impl, cluster, groups, stats, measured):
    st_objs = {g: impl.GPUStats(*v) for g, v in stats.items()}
    return impl.diagnose(impl.Cluster(*cluster), impl.Links(*LINKS), groups, st_objs, measured)


def uniform(gpus, step=F(1), busy=F(9, 10)):
    return {g: (step, busy) for g in gpus}


# --- one rule at a time ---------------------------------------------------------------


@graded(3, 2, "the prompt's example: a crossing group, a healthy one, and a link at 100 GB/s of 450")
def test_prompt_example(impl):
    groups = [[0, 1, 2, 3, 4, 6, 7, 8], list(range(16, 24)), list(range(24, 32))]
    measured = nominal(8, groups)
    measured[frozenset({26, 27})] = 100 * 10**9
    got = run(impl, (4, 8, frozenset({5})), groups, uniform(range(32)), measured)
    check(got, [("cross_domain", 1), ("healthy", None), ("slow_link", [26, 27])], "diagnose(the prompt's example)")


@graded(3, 2, "data_loader needs every GPU under half busy; one GPU at exactly 1/2 breaks it")
def test_data_loader_all_gpus(impl):
    groups = [[0, 1, 2, 3]]
    stats = uniform(range(4), busy=F(49, 100))
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("data_loader", None)], "diagnose(all busy 0.49)")
    stats[2] = (F(1), F(1, 2))
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("healthy", None)], "diagnose(one GPU busy exactly 1/2)")


@graded(3, 2, "data_loader comes first: it wins over a slow link and a crossing")
def test_data_loader_precedence(impl):
    groups = [[2, 3, 4, 5]]  # crosses on Cluster(2, 4)
    measured = nominal(4, groups)
    measured[frozenset({2, 3})] = 1
    check(run(impl, (2, 4), groups, uniform(range(8), busy=F(1, 10)), measured), [("data_loader", None)],
          "diagnose(idle GPUs, a slow link, a crossing)")


@graded(3, 2, "slow_link: strictly below half the nominal bandwidth; exactly half is not slow")
def test_slow_link_threshold(impl):
    groups = [[0, 1, 2]]
    measured = nominal(4, groups)
    measured[frozenset({0, 1})] = NVLINK // 2
    check(run(impl, (1, 4), groups, uniform(range(3)), measured), [("healthy", None)], "diagnose(a link at exactly half)")
    measured[frozenset({0, 1})] = NVLINK // 2 - 1
    check(run(impl, (1, 4), groups, uniform(range(3)), measured), [("slow_link", [0, 1])], "diagnose(a link just under half)")


@graded(3, 2, "slow_link is judged against each link's own nominal bandwidth (network links against the network's)")
def test_slow_link_nominal_per_kind(impl):
    groups = [[3, 4]]  # one network link on Cluster(2, 4)
    measured = {frozenset({3, 4}): 30 * 10**9}  # 30 GB/s: below half of NVLink, not of the network's 50
    check(run(impl, (2, 4), groups, uniform(range(8)), measured), [("cross_domain", 1)], "diagnose([3, 4] at 30 GB/s)")


@graded(3, 2, "several slow links: the lowest measured/nominal ratio, ties to the smaller sorted pair")
def test_slow_link_choice(impl):
    groups = [[0, 1, 2, 3]]
    measured = nominal(8, groups)
    measured[frozenset({2, 3})] = 10**9
    measured[frozenset({0, 3})] = 10**9
    measured[frozenset({1, 2})] = 2 * 10**9
    check(run(impl, (1, 8), groups, uniform(range(4)), measured), [("slow_link", [0, 3])], "diagnose(links 2-3 and 0-3 tied lowest)")


@graded(3, 2, "a slow link wins over a crossing, and a crossing over a throttled GPU")
def test_precedence_link_cross_throttle(impl):
    groups = [[2, 3, 4, 5]]
    measured = nominal(4, groups)
    stats = uniform(range(8))
    stats[2] = (F(2), F(1))  # compute times 2, 9/10, 9/10, 9/10: GPU 2 is over 6/5 of the median
    check(run(impl, (2, 4), groups, stats, measured), [("cross_domain", 1)], "diagnose(crossing + throttled)")
    measured[frozenset({4, 5})] = 1
    check(run(impl, (2, 4), groups, stats, measured), [("slow_link", [4, 5])], "diagnose(slow link + crossing + throttled)")


@graded(3, 2, "throttled_gpu: strictly more than 6/5 of the median compute time; exactly 6/5 is healthy")
def test_throttled_threshold(impl):
    groups = [[0, 1, 2]]
    stats = {0: (F(1), F(1, 2)), 1: (F(1), F(1, 2)), 2: (F(1), F(3, 5))}  # median 1/2, GPU 2 at 3/5 = 6/5 of it
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("healthy", None)], "diagnose(one GPU at exactly 6/5)")
    stats[2] = (F(1), F(3, 5) + F(1, 10**9))
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("throttled_gpu", 2)], "diagnose(one GPU just over 6/5)")


@graded(3, 2, "compute time is step_time * busy, not busy alone")
def test_compute_is_step_times_busy(impl):
    groups = [[0, 1, 2]]
    stats = {0: (F(1), F(3, 4)), 1: (F(1), F(3, 4)), 2: (F(2), F(3, 4))}  # GPU 2: same busy, twice the step
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("throttled_gpu", 2)], "diagnose(GPU 2 at twice the step time)")


@graded(3, 2, "the median of an even count is the mean of the two middle values")
def test_even_median(impl):
    groups = [[0, 1, 2, 3]]
    # compute 1/2, 1/2, 1, 6/5: median (1/2 + 1)/2 = 3/4, limit 9/10: GPU 3 (6/5) is throttled
    stats = {0: (F(1), F(1, 2)), 1: (F(1), F(1, 2)), 2: (F(1), F(1)), 3: (F(2), F(3, 5))}
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("throttled_gpu", 3)], "diagnose(an even group)")
    # compute 1/2, 1/2, 1, 1: median 3/4, limit 9/10: GPUs 2 and 3 tie: the lower id
    stats[3] = (F(1), F(1))
    check(run(impl, (1, 4), groups, stats, nominal(4, groups)), [("throttled_gpu", 2)], "diagnose(two GPUs tied for longest)")


@graded(3, 1, "throttled_gpu: a tie for the longest compute goes to the lowest id even when the group lists a higher id first")
def test_throttled_tie_lowest_id_not_group_order(impl):
    group = [3, 1, 0, 2]  # compute 1/2, 1/2, 1, 1: median 3/4, GPUs 3 and 1 tie above 9/10
    stats = {0: (F(1), F(1, 2)), 2: (F(1), F(1, 2)), 3: (F(1), F(1)), 1: (F(2), F(1, 2))}
    check(run(impl, (1, 4), [group], stats, nominal(4, [group])), [("throttled_gpu", 1)], f"diagnose([{group}], GPUs 3 and 1 tied)")
    group = [7, 5, 4, 6, 3]  # compute 2, 2, 1, 1, 1: median 1, GPUs 7 and 5 tie
    stats = {g: (F(1), F(1)) for g in (3, 4, 6)} | {7: (F(2), F(1)), 5: (F(4), F(1, 2))}
    check(run(impl, (1, 8), [group], stats, nominal(8, [group])), [("throttled_gpu", 5)], f"diagnose([{group}], GPUs 7 and 5 tied)")


@graded(3, 1, "a group of one GPU: no links; it is healthy unless its data loader stalls")
def test_single_gpu_group(impl):
    check(run(impl, (1, 4), [[2]], uniform([2]), {}), [("healthy", None)], "diagnose([[2]])")
    check(run(impl, (1, 4), [[2]], uniform([2], busy=F(0)), {}), [("data_loader", None)], "diagnose([[2]] idle)")


@graded(3, 1, "no groups: an empty list; extra entries in stats and measured are ignored")
def test_empty_and_extras(impl):
    check(run(impl, (1, 4), [], uniform(range(4)), {frozenset({0, 1}): 5}), [], "diagnose([])")


# --- properties ------------------------------------------------------------------------


@st.composite
def scenarios(draw):
    num_domains, size = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    n = num_domains * size
    gpus = draw(st.permutations(range(n)))
    groups, i = [], 0
    while i < n and draw(st.booleans()):
        k = draw(st.integers(1, n - i))
        groups.append(list(gpus[i:i + k]))
        i += k
    stats = {g: (F(draw(st.integers(1, 4))), F(draw(st.integers(0, 10)), 10)) for g in range(n)}
    measured = {}
    for p in (p for g in groups for p in o_ring(g)):
        base = o_link(size, LINKS, p)[0]
        measured[p] = draw(st.sampled_from([base, base // 2, base // 2 - 1, base // 3, 0]))
    return (num_domains, size), groups, stats, measured


@graded(3, 4, "diagnose matches the oracle on generated clusters, groups, telemetry and link counters")
@PROPERTY
@given(case=scenarios())
def test_matches_oracle(impl, case):
    cluster, groups, stats, measured = case
    got = run(impl, cluster, groups, stats, measured)
    check(got, o_diagnose(cluster[1], LINKS, groups, stats, measured), f"diagnose(Cluster{cluster}, {groups}, ...)")


# --- invalid input ----------------------------------------------------------------------


@graded(3, 2, "groups (bad group, shared GPU), stats (missing GPU, bad fields), measured (missing link, bad value) are named")
def test_invalid(impl):
    c, L = impl.Cluster(1, 4), impl.Links(*LINKS)
    good = {g: impl.GPUStats(F(1), F(1, 2)) for g in range(4)}
    links_ok = {frozenset({0, 1}): NVLINK}
    for bad in (None, [[]], [[0, 1], [1, 2]], [[0, 9]], [(0, 1)]):
        check_raises(lambda: impl.diagnose(c, L, bad, good, links_ok), "groups", f"diagnose(.., {bad!r}, ..)")
    for bad in ({0: good[0]}, {0: good[0], 1: (1, F(1, 2))}, {0: good[0], 1: impl.GPUStats(0, F(1, 2))},
                {0: good[0], 1: impl.GPUStats(0.5, F(1, 2))}, {0: good[0], 1: impl.GPUStats(F(1), F(3, 2))},
                {0: good[0], 1: impl.GPUStats(F(1), True)}, None):
        check_raises(lambda: impl.diagnose(c, L, [[0, 1]], bad, links_ok), "stats", f"diagnose(.., [[0, 1]], {bad!r}, ..)")
    for bad in ({}, {frozenset({0, 1}): -1}, {frozenset({0, 1}): 1.5}, {frozenset({0, 1}): True}, None):
        check_raises(lambda: impl.diagnose(c, L, [[0, 1]], good, bad), "measured", f"diagnose(.., [[0, 1]], stats, {bad!r})")
    check_raises(lambda: impl.diagnose(c, L, [[0, 0]], None, None), "groups", "diagnose(.., [[0, 0]], None, None) (groups first)")
    check_raises(lambda: impl.diagnose(c, L, [[0, 1]], None, None), "stats", "diagnose(.., [[0, 1]], None, None) (stats before measured)")


@graded(3, 1, "one result per group, in the order of groups")
def test_results_in_order(impl):
    groups = [[4, 5], [0, 1], [2, 3]]
    stats = uniform(range(6))
    stats[0] = (F(1), F(0))
    stats[1] = (F(1), F(0))
    measured = nominal(8, groups)
    measured[frozenset({2, 3})] = 0
    check(run(impl, (1, 8), groups, stats, measured), [("healthy", None), ("data_loader", None), ("slow_link", [2, 3])],
          "diagnose([[4, 5], [0, 1], [2, 3]], ..)")


@graded(3, 1, "a slow link wins over a throttled GPU inside one domain")
def test_slow_link_before_throttle(impl):
    groups = [[0, 1, 2]]
    stats = uniform(range(3))
    stats[1] = (F(3), F(1))
    measured = nominal(4, groups)
    measured[frozenset({0, 2})] = 10
    check(run(impl, (1, 4), groups, stats, measured), [("slow_link", [0, 2])], "diagnose(slow 0-2 and throttled GPU 1)")


@graded(3, 1, "the median of an odd count is the middle value, for three and for five GPUs")
def test_odd_median(impl):
    # compute 1/2, 1, 11/10: median 1, limit 6/5: healthy (a mean of the lower two would flag GPU 2)
    stats = {0: (F(1), F(1, 2)), 1: (F(1), F(1)), 2: (F(11, 10), F(1))}
    check(run(impl, (1, 4), [[0, 1, 2]], stats, nominal(4, [[0, 1, 2]])), [("healthy", None)], "diagnose(compute 1/2, 1, 11/10)")
    # five: 1/2, 1/2, 1, 1, 11/10: median 1: healthy
    stats = {0: (F(1), F(1, 2)), 1: (F(1), F(1, 2)), 2: (F(1), F(1)), 3: (F(1), F(1)), 4: (F(11, 10), F(1))}
    group = [0, 1, 2, 3, 4]
    check(run(impl, (1, 8), [group], stats, nominal(8, [group])), [("healthy", None)], "diagnose(compute 1/2, 1/2, 1, 1, 11/10)")


@graded(3, 1, "the even median uses the two middle values, not the lowest or the highest")
def test_even_median_middle_pair(impl):
    # compute 0, 1, 1, 6/5: median 1, limit 6/5: healthy
    stats = {0: (F(1), F(0)), 1: (F(1), F(1)), 2: (F(1), F(1)), 3: (F(6, 5), F(1))}
    group = [0, 1, 2, 3]
    check(run(impl, (1, 4), [group], stats, nominal(4, [group])), [("healthy", None)], "diagnose(compute 0, 1, 1, 6/5)")
    # compute 1/2, 1/2, 1, 3/2: median 3/4, limit 9/10: GPU 3 (3/2) is throttled, and a median of (1 + 3/2) / 2 would miss it
    stats = {0: (F(1), F(1, 2)), 1: (F(1), F(1, 2)), 2: (F(1), F(1)), 3: (F(3, 2), F(1))}
    check(run(impl, (1, 4), [group], stats, nominal(4, [group])), [("throttled_gpu", 3)], "diagnose(compute 1/2, 1/2, 1, 3/2)")
    # compute 1, 1, 13/10, 13/10: median 23/20, limit 69/50: healthy (the lower middle alone would flag 13/10)
    stats = {0: (F(1), F(1)), 1: (F(1), F(1)), 2: (F(13, 10), F(1)), 3: (F(13, 10), F(1))}
    check(run(impl, (1, 4), [group], stats, nominal(4, [group])), [("healthy", None)], "diagnose(compute 1, 1, 13/10, 13/10)")


@graded(3, 2, "slow links ranked by measured / nominal: an NVLink at 100 of 450 GB/s beats a network link at 20 of 50 GB/s")
def test_slow_link_ranked_by_ratio_not_raw_bandwidth(impl):
    group = [4, 5, 6, 7, 8]  # ring 4-5, 5-6, 6-7 on NVLink; 7-8 and 8-4 cross to domain 1
    measured = nominal(8, [group])
    measured[frozenset({5, 6})] = 100 * 10**9  # 2/9 of NVLink
    measured[frozenset({7, 8})] = 20 * 10**9  # 2/5 of the network: lower in bytes/s, higher in share
    got = run(impl, (2, 8, frozenset()), [group], uniform(group), measured)
    check(got, [("slow_link", [5, 6])], "diagnose(.., [[4, 5, 6, 7, 8]], .., {5-6: 100 GB/s, 7-8: 20 GB/s, others nominal})")
