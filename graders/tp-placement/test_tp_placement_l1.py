"""Hidden suite of `tp-placement`, level 1: placement."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from tp_placement_oracle import clusters, o_crossings, o_place

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def place(impl, num_domains, size, down, t, n):
    return impl.place_groups(impl.Cluster(num_domains, size, frozenset(down)), t, n)


def call(num_domains, size, down, t, n):
    return f"place_groups(Cluster({num_domains}, {size}, {set(down) or '{}'}), {t}, {n})"


# --- crossings ---------------------------------------------------------------------


@graded(1, 1, "crossings: distinct domains minus one, whatever the order of the group")
def test_crossings(impl):
    c = impl.Cluster(4, 8)
    for group, want in (([0, 1, 2], 0), ([6, 7, 8, 9], 1), ([31, 0, 16], 2), ([8], 0), ([9, 0, 17, 25], 3)):
        check(impl.crossings(c, group), want, f"crossings(Cluster(4, 8), {group})")


@graded(1, 1, "crossings accepts a down GPU: it describes a group, it does not place one")
def test_crossings_down_gpu(impl):
    check(impl.crossings(impl.Cluster(2, 4, frozenset({3, 4})), [3, 4]), 1, "crossings(Cluster(2, 4, {3, 4}), [3, 4])")


@graded(1, 1, "crossings rejects an empty group, repeated ids, ids outside the cluster, bools and non-lists, naming group")
def test_crossings_invalid(impl):
    c = impl.Cluster(2, 4)
    for bad in ([], [1, 1], [8], [-1], [True], [1.0], (1, 2), None):
        check_raises(lambda: impl.crossings(c, bad), "group", f"crossings(Cluster(2, 4), {bad!r})")


# --- place_groups: one case per rule -----------------------------------------------


@graded(1, 2, "the prompt's example: best fit, then the only domain with room, then across")
def test_prompt_example(impl):
    got = place(impl, 2, 8, {3, 9, 10}, 4, 3)
    check(got, [[8, 11, 12, 13], [0, 1, 2, 4], [5, 6, 7, 14]], call(2, 8, {3, 9, 10}, 4, 3))


@graded(1, 2, "best fit: the domain with the fewest free GPUs that still holds the group, not the first or the roomiest")
def test_best_fit(impl):
    # free: d0 8, d1 5, d2 6: a group of 5 goes to d1 (exactly fits)
    got = place(impl, 3, 8, {8, 9, 10, 16, 17}, 5, 1)
    check(got, [[11, 12, 13, 14, 15]], call(3, 8, {8, 9, 10, 16, 17}, 5, 1))


@graded(1, 1, "best-fit ties go to the lowest domain index")
def test_best_fit_tie(impl):
    got = place(impl, 3, 4, {0, 8}, 2, 1)  # d0 and d2 have 3 free, d1 4
    check(got, [[1, 2]], call(3, 4, {0, 8}, 2, 1))


@graded(1, 1, "inside a domain the group takes its lowest-numbered free GPUs, skipping down ones")
def test_lowest_numbered_in_domain(impl):
    got = place(impl, 1, 8, {0, 2, 5}, 3, 1)
    check(got, [[1, 3, 4]], call(1, 8, {0, 2, 5}, 3, 1))


@graded(1, 2, "with no room anywhere, the domains with the most free GPUs go first (fewest domains spanned)")
def test_across_fullest_first(impl):
    # free: d0 2 (2, 3), d1 3 (5, 6, 7), d2 1 (8): a group of 4 takes d1's 3, then d0's lowest 1
    got = place(impl, 3, 4, {0, 1, 4, 9, 10, 11}, 4, 1)
    check(got, [[2, 5, 6, 7]], call(3, 4, {0, 1, 4, 9, 10, 11}, 4, 1))


@graded(1, 1, "across domains, equally full domains go in index order")
def test_across_tie_lowest_index(impl):
    # every domain has 2 free; a group of 3 takes d0's two and d1's lowest
    got = place(impl, 3, 3, {0, 3, 6}, 3, 1)
    check(got, [[1, 2, 4]], call(3, 3, {0, 3, 6}, 3, 1))


@graded(1, 2, "a group larger than a domain spans several (TP 32 over four 8-GPU nodes), returned sorted")
def test_group_larger_than_domain(impl):
    got = place(impl, 5, 8, {3}, 32, 1)  # d0 has 7 free: d1..d4 (8 each) go first
    check(got, [list(range(8, 40))], call(5, 8, {3}, 32, 1))


@graded(1, 1, "each group is sorted ascending, and groups come in placement order")
def test_sorted_groups(impl):
    got = place(impl, 2, 4, {1}, 3, 2)  # group 0: best fit d0 (3 free) [0, 2, 3]; group 1: d1
    check(got, [[0, 2, 3], [4, 5, 6]], call(2, 4, {1}, 3, 2))


@graded(1, 1, "num_groups 0 places nothing; exactly as many GPUs up as needed fills every one")
def test_empty_and_exact(impl):
    check(place(impl, 2, 4, set(), 3, 0), [], call(2, 4, set(), 3, 0))
    got = place(impl, 2, 3, {2}, 5, 1)
    check(got, [[0, 1, 3, 4, 5]], call(2, 3, {2}, 5, 1))


@graded(1, 2, "no crossing while groups can still fit inside domains: later groups never break an earlier fit")
def test_no_crossing_when_avoidable(impl):
    # d0: 6 free, d1: 4 free, t = 2, 5 groups: all five fit inside domains
    got = place(impl, 2, 8, {6, 7, 8, 9, 10, 11}, 2, 5)
    check([impl.crossings(impl.Cluster(2, 8), g) for g in got], [0] * 5, call(2, 8, {6, 7, 8, 9, 10, 11}, 2, 5) + " crossings")


# --- properties --------------------------------------------------------------------


@graded(1, 4, "place_groups matches the oracle on generated clusters (down GPUs, any t, any number of groups)")
@PROPERTY
@given(cl=clusters(), data=st.data())
@example(cl=(2, 8, frozenset({3, 9, 10})), data=None)
def test_matches_oracle(impl, cl, data):
    num_domains, size, down = cl
    up = num_domains * size - len(down)
    if data is None:
        t, n = 4, 3
    else:
        t = data.draw(st.integers(1, max(1, up)))
        n = data.draw(st.integers(0, up // t))
    check(place(impl, num_domains, size, down, t, n), o_place(num_domains, size, down, t, n),
          call(num_domains, size, down, t, n))


@graded(1, 2, "every placement: groups of t distinct GPUs that are up, no GPU shared; zero crossings when sum(up // t) >= groups")
@PROPERTY
@given(cl=clusters(max_domains=6), data=st.data())
def test_placement_invariants(impl, cl, data):
    num_domains, size, down = cl
    up = num_domains * size - len(down)
    t = data.draw(st.integers(1, max(1, up)))
    n = data.draw(st.integers(0, up // t))
    got = place(impl, num_domains, size, down, t, n)
    flat = [g for group in got for g in group]
    ok = (len(got) == n and all(len(group) == t for group in got) and len(set(flat)) == len(flat)
          and not set(flat) & set(down) and all(0 <= g < num_domains * size for g in flat))
    assert ok, f"Called {call(num_domains, size, down, t, n)}. Returned {got!r}: not {n} disjoint groups of {t} GPUs that are up."
    per_domain = [sum(1 for g in range(d * size, d * size + size) if g not in down) for d in range(num_domains)]
    if sum(u // t for u in per_domain) >= n:
        total = sum(o_crossings(size, group) for group in got)
        check(total, 0, call(num_domains, size, down, t, n) + " total crossings (a crossing-free placement exists)")


# --- invalid input ------------------------------------------------------------------


@graded(1, 2, "too few GPUs up raises ValueError naming num_groups, before placing anything")
def test_too_few_gpus(impl):
    check_raises(lambda: place(impl, 2, 4, {0, 5}, 3, 3), "num_groups", call(2, 4, {0, 5}, 3, 3))
    check_raises(lambda: place(impl, 1, 2, set(), 3, 1), "num_groups", call(1, 2, set(), 3, 1))


@graded(1, 2, "t and num_groups reject True, 2.0, None, '2' and values below their minimum, naming them")
def test_invalid_t_and_groups(impl):
    c = impl.Cluster(2, 4)
    for bad in (True, 2.0, None, "2", 0):
        check_raises(lambda: impl.place_groups(c, bad, 1), "t", f"place_groups(Cluster(2, 4), {bad!r}, 1)")
    for bad in (True, 1.0, None, "1", -1):
        check_raises(lambda: impl.place_groups(c, 1, bad), "num_groups", f"place_groups(Cluster(2, 4), 1, {bad!r})")


@graded(1, 2, "Cluster fields: num_domains, domain_size (ints >= 1) and down (a set of GPU ids) are each named")
def test_invalid_cluster(impl):
    for fields, name in (((0, 4), "num_domains"), ((True, 4), "num_domains"), ((2.0, 4), "num_domains"),
                         ((2, 0), "domain_size"), ((2, None), "domain_size"), ((2, "4"), "domain_size"),
                         ((2, 4, frozenset({8})), "down"), ((2, 4, frozenset({-1})), "down"),
                         ((2, 4, [1]), "down"), ((2, 4, frozenset({True})), "down"), ((2, 4, None), "down")):
        check_raises(lambda: impl.place_groups(impl.Cluster(*fields), 1, 1), name, f"place_groups(Cluster{fields}, 1, 1)")
        check_raises(lambda: impl.crossings(impl.Cluster(*fields), [0]), name, f"crossings(Cluster{fields}, [0])")


@graded(1, 1, "several invalid arguments: cluster, then t, then num_groups, then the GPU count")
def test_invalid_order(impl):
    check_raises(lambda: impl.place_groups(impl.Cluster(0, 0), 0, -1), "num_domains", "place_groups(Cluster(0, 0), 0, -1)")
    check_raises(lambda: impl.place_groups(impl.Cluster(1, 2), 0, -1), "t", "place_groups(Cluster(1, 2), 0, -1)")
    check_raises(lambda: impl.place_groups(impl.Cluster(1, 2), 3, -1), "num_groups", "place_groups(Cluster(1, 2), 3, -1)")


@graded(1, 1, "place_groups does not change the cluster's down set (a plain set passed in stays as it was)")
def test_down_not_modified(impl):
    down = {1, 2}
    got = impl.place_groups(impl.Cluster(1, 8, down), 2, 3)
    check((got, down), ([[0, 3], [4, 5], [6, 7]], {1, 2}), "place_groups(Cluster(1, 8, {1, 2}), 2, 3), then the down set")


@graded(1, 1, "domains of one GPU: a group spans t domains, fullest (1 free) first in index order, skipping empty ones")
def test_domains_of_one(impl):
    check(place(impl, 4, 1, {1}, 3, 1), [[0, 2, 3]], call(4, 1, {1}, 3, 1))


@graded(1, 1, "a fully down domain is never chosen; best fit among the rest")
def test_fully_down_domain(impl):
    check(place(impl, 3, 2, {0, 1}, 2, 2), [[2, 3], [4, 5]], call(3, 2, {0, 1}, 2, 2))


@graded(1, 2, "best fit changes as groups are placed: each group sees only the GPUs still free")
def test_best_fit_is_recomputed(impl):
    # free: d0 4, d1 6. t = 3: d0 (4, best fit) -> d0 1 left; d1 (6) -> 3 left; d1 (3) -> 0; then across d0 (1) ...
    got = place(impl, 2, 8, {4, 5, 6, 7, 14, 15}, 3, 3)
    check(got, [[0, 1, 2], [8, 9, 10], [11, 12, 13]], call(2, 8, {4, 5, 6, 7, 14, 15}, 3, 3))


@graded(1, 2, "a crossing group takes all of the fullest domain before touching the next")
def test_crossing_takes_whole_domains(impl):
    # free: d0 3 (0, 1, 2), d1 2 (4, 5), d2 3 (8, 9, 10); t = 5: d0 then d2 (tie on 3: index order), 2 from d2
    got = place(impl, 3, 4, {3, 6, 7, 11}, 5, 1)
    check(got, [[0, 1, 2, 8, 9]], call(3, 4, {3, 6, 7, 11}, 5, 1))
