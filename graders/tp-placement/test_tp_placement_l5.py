"""Hidden suite of `tp-placement`, level 5: the incident, from evidence (rank maps before and after a
node replacement, per-rank bus bandwidth and step times) to the remap restarting the fewest ranks."""

from __future__ import annotations

import copy
from fractions import Fraction as F

from hypothesis import example, given
from hypothesis import strategies as st
from tp_placement_oracle import LAT_NET, LAT_NV, NETWORK, NVLINK, o_triage

from kata.checks import check_raises, graded, property_settings
from kata.strict import same

LINKS = (NVLINK, NETWORK, LAT_NV, LAT_NET)
G = 10**9


def run(impl, cluster, tp, before, after, busbw, step_times):
    got = impl.triage(impl.Cluster(*cluster), impl.Links(*LINKS), tp, before, after, busbw, step_times)
    return (got.crossing, got.moved, got.suspects, got.slowest, got.remap, got.tie)


def call_text(cluster, tp, before, after, busbw, step_times):
    return f"triage(Cluster{cluster}, links, {tp}, {before}, {after}, busbw={busbw}, step_times={step_times})"


def check_field(impl, field, case, expected):
    """One field of the Triage (0 crossing .. 5 tie) against the expected value."""
    names = ("crossing", "moved", "suspects", "slowest", "remap", "tie")
    got = run(impl, *case)[field]
    assert same(got, expected), f"Called {call_text(*case)}. Its {names[field]} was {got!r}, expected {expected!r}."


def ones(n):
    return [F(1)] * n


def incident():
    """The prompt's example: node 1 is gone, ranks 8-15 moved, group 3 crosses, group 1 has a bad link."""
    after = list(range(8)) + [16, 17, 18, 19, 20, 24, 25, 26]
    busbw = [400 * G] * 4 + [150 * G, 390 * G, 380 * G, 395 * G] + [420 * G] * 4 + [45 * G, 46 * G, 45 * G, 47 * G]
    step_times = [F(1)] * 4 + [F(13, 10)] * 4 + [F(1)] * 4 + [F(21, 10)] * 4
    return ((4, 8, frozenset(range(8, 16))), 4, list(range(16)), after, busbw, step_times)


# --- the prompt's example ----------------------------------------------------------------


@graded(5, 3, "triage: the prompt's incident, every field")
def test_prompt_example(impl):
    case = incident()
    got = run(impl, *case)
    want = ([3], list(range(8, 16)), [1], 3, {12: 27}, False)
    assert same(got, want), f"Called triage on the prompt's incident. Returned {got!r}, expected {want!r}."


@graded(5, 1, "triage returns a Triage whose fields are the prompt's (a dataclass, compared field by field)")
def test_returns_triage(impl):
    case = incident()
    got = impl.triage(impl.Cluster(*case[0]), impl.Links(*LINKS), *case[1:])
    assert same(type(got).__name__, "Triage"), f"triage returned a {type(got).__name__}, expected a Triage."


# --- what the maps say ----------------------------------------------------------------------


@graded(5, 2, "crossing comes from `after` only; moved lists every rank whose GPU changed, even inside one domain")
def test_crossing_and_moved(impl):
    before = [0, 1, 2, 3, 8, 9, 10, 11]
    after = [1, 0, 2, 3, 8, 9, 12, 17]  # ranks 0-1 swapped inside domain 0; group 1 now crosses
    case = ((3, 8, frozenset()), 4, before, after, [400 * G] * 8, ones(8))
    check_field(impl, 0, case, [1])
    check_field(impl, 1, case, [0, 1, 6, 7])
    before_crossing = [0, 1, 2, 8, 16, 17, 18, 19]  # group 0 crossed before; after fixes it
    case = ((3, 8, frozenset()), 4, before_crossing, [0, 1, 2, 3, 16, 17, 18, 19], [400 * G] * 8, ones(8))
    check_field(impl, 0, case, [])
    check_field(impl, 1, case, [3])


@graded(5, 1, "every crossing group is listed, ascending")
def test_several_crossing(impl):
    after = [0, 8, 1, 2, 3, 4, 16, 9]
    case = ((3, 8, frozenset()), 2, list(range(8)), after, [40 * G] * 8, ones(8))
    check_field(impl, 0, case, [0, 3])


# --- what the measurements say -----------------------------------------------------------


@graded(5, 3, "suspects ranked by measured / nominal, not by measured bandwidth (a crossing group's nominal is the network's)")
def test_suspects_by_ratio_not_raw_bandwidth(impl):
    # group 0: 200/450 = 0.44; group 1: 150/450 = 0.33; group 2: healthy; group 3 crosses: 20/50 = 0.4
    after = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17]
    busbw = [200 * G] * 4 + [150 * G] * 4 + [400 * G] * 4 + [20 * G] * 4
    case = ((3, 8, frozenset()), 4, list(range(16)), after, busbw, ones(16))
    check_field(impl, 2, case, [1, 3, 0])


@graded(5, 2, "a crossing group that gets what the network gives (45 of 50 GB/s) is not a suspect, though its bandwidth is the lowest")
def test_crossing_at_network_speed_is_not_a_suspect(impl):
    after = [0, 1, 2, 3, 4, 5, 8, 9]
    busbw = [400 * G] * 4 + [45 * G] * 4
    case = ((2, 8, frozenset()), 4, list(range(8)), after, busbw, ones(8))
    check_field(impl, 2, case, [])
    busbw = [200 * G] * 4 + [45 * G] * 4
    check_field(impl, 2, case[:4] + (busbw, ones(8)), [0])


@graded(5, 1, "exactly half the nominal bus bandwidth is not a suspect (NVLink 225 of 450, network 25 of 50)")
def test_exactly_half_is_not_a_suspect(impl):
    after = [0, 1, 2, 3, 4, 5, 8, 9]
    case = ((2, 8, frozenset()), 4, list(range(8)), after, [225 * G] * 4 + [25 * G] * 4, ones(8))
    check_field(impl, 2, case, [])
    case = case[:4] + ([225 * G - 1] * 4 + [25 * G - 1] * 4, ones(8))
    check_field(impl, 2, case, [1, 0])  # one byte/s short of half: 1 in 50e9 is a larger share than 1 in 450e9


@graded(5, 1, "a group's measured bus bandwidth is its slowest rank's, wherever that rank is in the group")
def test_measured_is_the_slowest_rank(impl):
    after = list(range(8))
    busbw = [400 * G, 400 * G, 400 * G, 100 * G, 100 * G, 400 * G, 400 * G, 400 * G]
    case = ((1, 8, frozenset()), 4, list(range(8)), after, busbw, ones(8))
    check_field(impl, 2, case, [0, 1])  # equal ratios: the lower index first


@graded(5, 1, "suspects with equal ratios go lower index first, even when the later one's raw bandwidth is lower")
def test_suspect_ties_by_index(impl):
    after = [0, 1, 2, 3, 4, 5, 8, 9]  # group 0 inside (180/450), group 1 crosses (20/50): both 2/5
    case = ((2, 8, frozenset()), 4, list(range(8)), after, [180 * G] * 4 + [20 * G] * 4, ones(8))
    check_field(impl, 2, case, [0, 1])


@graded(5, 1, "slowest: the group holding the largest rank step time; ties to the lower index")
def test_slowest_group(impl):
    after = list(range(12))
    steps = [F(1), F(1), F(1), F(3, 2), F(6, 5), F(6, 5), F(6, 5), F(6, 5), F(1), F(3, 2), F(1), F(1)]
    case = ((2, 8, frozenset()), 4, list(range(12)), after, [400 * G] * 12, steps)
    check_field(impl, 3, case, 0)  # groups 0 and 2 both peak at 3/2; group 1's mean is higher but its peak is not
    steps = steps[:9] + [F(8, 5)] + steps[10:]
    check_field(impl, 3, case[:5] + (steps,), 2)


# --- the remap ---------------------------------------------------------------------------------


@graded(5, 2, "remap: the domain already holding most of the group's ranks restarts the fewest")
def test_remap_fewest_restarts(impl):
    after = [0, 1, 2, 3, 12, 13, 14, 5]  # group 1: three ranks in domain 1, one in domain 0
    case = ((2, 8, frozenset()), 4, list(range(8)), after, [400 * G] * 8, ones(8))
    check_field(impl, 4, case, {7: 8})
    check_field(impl, 5, case, False)


@graded(5, 2, "remap: a tie in restarts goes to the lower domain, and tie says so")
def test_remap_tie(impl):
    after = [6, 7, 8, 9]  # two ranks in each of domains 0 and 1
    case = ((3, 8, frozenset()), 4, [0, 1, 2, 3], after, [45 * G] * 4, ones(4))
    check_field(impl, 4, case, {2: 0, 3: 1})
    check_field(impl, 5, case, True)


@graded(5, 1, "remap: restarting ranks, in rank order, take the lowest-numbered free GPUs of the domain")
def test_remap_lowest_free_gpus(impl):
    after = [15, 2, 1, 14]  # domain 0 and 1 tie at two restarts; domain 0 wins
    case = ((2, 8, frozenset()), 4, [0, 1, 2, 3], after, [45 * G] * 4, ones(4))
    check_field(impl, 4, case, {0: 0, 3: 3})


@graded(5, 2, "remap: down GPUs and GPUs held by groups that stay are not room (the domain with most ranks can be full)")
def test_remap_room(impl):
    after = [0, 1, 2, 4, 5, 6]  # group 1 = GPUs 2 and 4 crosses; GPU 3 is down
    case = ((3, 4, frozenset({3})), 2, list(range(6)), after, [400 * G] * 6, ones(6))
    check_field(impl, 4, case, {2: 7})
    check_field(impl, 5, case, False)


@graded(5, 2, "remap: GPUs that restarting ranks leave are free for another crossing group")
def test_remap_swap_through_freed_gpus(impl):
    after = [0, 2, 1, 3]  # both groups straddle two 2-GPU domains: only a swap fixes them
    case = ((2, 2, frozenset()), 2, [0, 1, 2, 3], after, [40 * G] * 4, ones(4))
    check_field(impl, 4, case, {1: 1, 2: 2})
    check_field(impl, 5, case, True)


@graded(5, 2, "remap: crossing groups compete for a domain's room; the choice is made for all of them together")
def test_remap_crossing_groups_compete(impl):
    after = [0, 4, 1, 5, 8, 9, 10, 11]  # groups 0 and 1 cross; domain 0 has room for one group only
    case = ((3, 4, frozenset({2, 3})), 2, list(range(8)), after, [40 * G] * 8, ones(8))
    check_field(impl, 4, case, {1: 1, 2: 4})
    check_field(impl, 5, case, True)


@graded(5, 1, "remap: two crossing groups sent to one domain take different GPUs (the first group's are no longer free)")
def test_remap_two_groups_into_one_domain(impl):
    after = [0, 8, 1, 9]  # both groups straddle domains 0 and 2; domain 0 has room for both
    case = ((3, 4, frozenset()), 2, [0, 1, 2, 3], after, [40 * G] * 4, ones(4))
    check_field(impl, 4, case, {1: 2, 3: 3})
    check_field(impl, 5, case, True)


@graded(5, 1, "a bus bandwidth of 0 is valid (a hung all-reduce) and makes its group the worst suspect")
def test_zero_bandwidth_is_valid(impl):
    after = [0, 1, 2, 3, 4, 5, 6, 7]
    case = ((1, 8, frozenset()), 4, list(range(8)), after, [100 * G] * 4 + [400 * G, 0, 400 * G, 400 * G], ones(8))
    check_field(impl, 2, case, [1, 0])


@graded(5, 1, "remap is None (and tie False) when no domain has room for a crossing group")
def test_remap_impossible(impl):
    case = ((2, 2, frozenset({1, 3})), 2, [0, 1], [0, 2], [40 * G] * 2, ones(2))
    check_field(impl, 4, case, None)
    check_field(impl, 5, case, False)


@graded(5, 1, "nothing crosses: remap is {} and tie is False")
def test_remap_nothing_crosses(impl):
    case = ((2, 4, frozenset()), 2, [0, 1, 4, 5], [1, 0, 6, 7], [400 * G] * 4, ones(4))
    check_field(impl, 4, case, {})
    check_field(impl, 5, case, False)


# --- against the oracle --------------------------------------------------------------------------


@st.composite
def incidents(draw):
    num_domains, size = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    tp = draw(st.integers(2, min(3, size)))
    gpus = num_domains * size
    down = draw(st.frozensets(st.integers(0, gpus - 1), max_size=gpus // 3))
    up = [g for g in range(gpus) if g not in down]
    n_groups = draw(st.integers(1, max(1, min(4, len(up) // tp))))
    ranks = n_groups * tp
    if len(up) < ranks:
        up, down = list(range(gpus)), frozenset()
    after = draw(st.permutations(up))[:ranks]
    before = draw(st.permutations(range(gpus)))[:ranks]
    before = [a if draw(st.booleans()) else b for a, b in zip(after, before)]
    before = before if len(set(before)) == ranks else list(after)
    scale = st.sampled_from([1, 20, 24, 25, 26, 45, 150, 224, 225, 226, 400, 450])
    busbw = [draw(scale) * G for _ in range(ranks)]
    steps = [F(draw(st.integers(1, 6)), 4) for _ in range(ranks)]
    return (num_domains, size, down), tp, before, after, busbw, steps


@graded(5, 3, "triage matches a literal oracle (every choice of domains simulated rank by rank) on generated incidents")
@property_settings(80)
@given(case=incidents())
@example(case=incident())
@example(case=((2, 2, frozenset()), 2, [0, 1, 2, 3], [0, 2, 1, 3], [40 * G] * 4, ones(4)))
def test_matches_oracle(impl, case):
    (num_domains, size, down), tp, before, after, busbw, steps = case
    want = o_triage(num_domains, size, down, LINKS, tp, before, after, busbw, steps)
    got = run(impl, *case)
    assert same(got, want), f"Called {call_text(*case)}. Returned {got!r}, expected {want!r}."


@graded(5, 1, "triage modifies none of its arguments")
def test_arguments_unchanged(impl):
    case = incident()
    kept = copy.deepcopy(case)
    got = run(impl, *case)
    assert same(list(case[2:]), list(kept[2:])), "triage changed one of before, after, busbw or step_times."
    assert same(got, ([3], list(range(8, 16)), [1], 3, {12: 27}, False)), (
        f"Called triage on the prompt's incident. Returned {got!r}, a wrong triage.")


# --- invalid input ---------------------------------------------------------------------------------

CLUSTER = (4, 8, frozenset(range(8, 16)))


def call_with(impl, cluster=CLUSTER, links=LINKS, tp=4, before=None, after=None, busbw=None, step_times=None):
    case = incident()
    before = case[2] if before is None else before
    after = case[3] if after is None else after
    busbw = case[4] if busbw is None else busbw
    step_times = case[5] if step_times is None else step_times
    return impl.triage(impl.Cluster(*cluster), impl.Links(*links), tp, before, after, busbw, step_times)


@graded(5, 2, "triage: tp, before and after rejected with their names (bool tp, tp 1, short/duplicate/bad-element maps, after on a down GPU)")
def test_invalid_maps(impl):
    after = incident()[3]
    for bad in (True, 1, 4.0, None, "4"):
        check_raises(lambda: call_with(impl, tp=bad), "tp", f"triage(.., tp={bad!r}, ..)")
    for bad in ([], list(range(15)), list(range(15)) + [0], list(range(15)) + [True], list(range(15)) + [32],
                list(range(15)) + [15.0], tuple(range(16))):
        check_raises(lambda: call_with(impl, before=bad), "before", f"triage(.., before={bad!r}, ..)")
    for bad in (after[:12], after[:15] + [0], after[:15] + [True], after[:15] + [8], tuple(after), after[:15] + [99]):
        check_raises(lambda: call_with(impl, after=bad), "after", f"triage(.., after={bad!r}, ..)")


@graded(5, 2, "triage: busbw and step_times rejected with their names (float, bool, negative or zero entries, late in the list; wrong length)")
def test_invalid_samples(impl):
    for bad in ([400 * G] * 15 + [1.0], [400 * G] * 15 + [True], [400 * G] * 15 + [-1], [400 * G] * 15,
                [400 * G] * 17, None, tuple([400 * G] * 16)):
        if bad is None:
            continue
        check_raises(lambda: call_with(impl, busbw=bad), "busbw", f"triage(.., busbw={bad!r}, ..)")
    for bad in ([F(1)] * 15 + [1.5], [F(1)] * 15 + [True], [F(1)] * 15 + [0], [F(1)] * 15 + [F(-1, 2)],
                [F(1)] * 15, tuple([F(1)] * 16)):
        check_raises(lambda: call_with(impl, step_times=bad), "step_times", f"triage(.., step_times={bad!r})")
    check_raises(lambda: call_with(impl, busbw=[400 * G] * 16, step_times=[F(1)] * 15 + ["1"]), "step_times",
                 "triage(.., step_times=[.., '1'])")


# one invalid value per argument, in signature order, and the name its message must begin with
BAD = (("cluster", (0, 8, frozenset()), "num_domains"), ("links", (0, NETWORK, LAT_NV, LAT_NET), "nvlink_bandwidth"),
       ("tp", 1, "tp"), ("before", [], "before"), ("after", "x", "after"), ("busbw", [1.0], "busbw"),
       ("step_times", [0.5], "step_times"))


@graded(5, 2, "triage: with two invalid arguments, the earlier one in the signature is named (every pair)")
def test_validation_order_every_pair(impl):
    for i, (first, bad_first, name) in enumerate(BAD):
        for second, bad_second, _ in BAD[i + 1:]:
            kwargs = {first: bad_first, second: bad_second}
            check_raises(lambda: call_with(impl, **kwargs), name, f"triage with {first} and {second} invalid")
