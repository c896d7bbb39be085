"""Visible checks: the prompt's examples and a few more. The hidden suite has many more edge cases."""

from fractions import Fraction as F

import pytest


def links(impl):
    return impl.Links(450 * 10**9, 50 * 10**9, F(1, 10**6), F(5, 10**6))


# --- level 1 ----------------------------------------------------------------


@pytest.mark.level(1)
def test_prompt_placement(impl):
    c = impl.Cluster(2, 8, frozenset({3, 9, 10}))
    got = impl.place_groups(c, 4, 3)
    assert got == [[8, 11, 12, 13], [0, 1, 2, 4], [5, 6, 7, 14]], f"place_groups returned {got!r}."
    assert [impl.crossings(c, g) for g in got] == [0, 0, 1]


@pytest.mark.level(1)
def test_too_few_gpus(impl):
    with pytest.raises(ValueError, match="^num_groups"):
        impl.place_groups(impl.Cluster(1, 4, frozenset({0})), 2, 2)


@pytest.mark.level(1)
def test_no_groups(impl):
    assert impl.place_groups(impl.Cluster(1, 8), 3, 0) == []


# --- level 2 ----------------------------------------------------------------


@pytest.mark.level(2)
def test_ring_links(impl):
    assert impl.ring_links([5, 1, 3]) == [frozenset({1, 3}), frozenset({3, 5}), frozenset({5, 1})]
    assert impl.ring_links([4, 2]) == [frozenset({2, 4})]


@pytest.mark.level(2)
def test_prompt_allreduce(impl):
    c = impl.Cluster(4, 8, frozenset({5}))
    inside = impl.allreduce_time(c, links(impl), list(range(8)), 64 * 2**20)
    across = impl.allreduce_time(c, links(impl), [0, 1, 2, 3, 4, 6, 7, 8], 64 * 2**20)
    assert inside == F(3866891, 14062500000) and across == F(3779391, 1562500000), f"{inside!r}, {across!r}"


@pytest.mark.level(2)
def test_best_placement(impl):
    c = impl.Cluster(4, 8)
    assert impl.best_placement(c, links(impl), [[[6, 7, 8, 9]], [[0, 1, 2, 3]]], 2**20) == 1


# --- level 3 ----------------------------------------------------------------


@pytest.mark.level(3)
def test_prompt_diagnosis(impl):
    c = impl.Cluster(4, 8, frozenset({5}))
    groups = [[0, 1, 2, 3, 4, 6, 7, 8], list(range(16, 24)), list(range(24, 32))]
    stats = {g: impl.GPUStats(F(1), F(9, 10)) for g in range(32)}
    measured = {}
    for group in groups:
        for pair in impl.ring_links(group):
            same_domain = len({g // 8 for g in pair}) == 1
            measured[pair] = 450 * 10**9 if same_domain else 50 * 10**9
    measured[frozenset({26, 27})] = 100 * 10**9
    got = impl.diagnose(c, links(impl), groups, stats, measured)
    assert got == [("cross_domain", 1), ("healthy", None), ("slow_link", [26, 27])], f"diagnose returned {got!r}."


@pytest.mark.level(3)
def test_data_loader(impl):
    c = impl.Cluster(1, 4)
    stats = {g: impl.GPUStats(F(2), F(1, 4)) for g in range(4)}
    measured = {pair: 450 * 10**9 for pair in impl.ring_links([0, 1, 2, 3])}
    assert impl.diagnose(c, links(impl), [[0, 1, 2, 3]], stats, measured) == [("data_loader", None)]


# --- level 4 ----------------------------------------------------------------


def job68b(impl):
    return impl.Job(80, 856_000_000, 8192, 4 * 2**20, 8, 16, 80 * 10**9, 989 * 10**12)


@pytest.mark.level(4)
def test_prompt_plan(impl):
    c = impl.Cluster(4, 8)
    assert impl.best_plan(c, links(impl), job68b(impl)) == (8, 2, 2)
    got = impl.step_time(c, links(impl), job68b(impl), 8, 2, 2)
    assert got == F(230350732796041, 2781562500000), f"step_time returned {got!r}."


@pytest.mark.level(4)
def test_invalid_plan(impl):
    with pytest.raises(ValueError, match="^plan"):
        impl.step_time(impl.Cluster(4, 8), links(impl), job68b(impl), 16, 2, 1)  # TP across nodes


# --- level 5 ----------------------------------------------------------------


def incident(impl):
    c = impl.Cluster(4, 8, frozenset(range(8, 16)))
    G = 10**9
    after = list(range(8)) + [16, 17, 18, 19, 20, 24, 25, 26]
    busbw = [400 * G] * 4 + [150 * G, 390 * G, 380 * G, 395 * G] + [420 * G] * 4 + [45 * G, 46 * G, 45 * G, 47 * G]
    step_times = [F(1)] * 4 + [F(13, 10)] * 4 + [F(1)] * 4 + [F(21, 10)] * 4
    return c, list(range(16)), after, busbw, step_times


@pytest.mark.level(5)
def test_prompt_incident(impl):
    c, before, after, busbw, step_times = incident(impl)
    got = impl.triage(c, links(impl), 4, before, after, busbw, step_times)
    assert got == impl.Triage([3], list(range(8, 16)), [1], 3, {12: 27}, False), f"triage returned {got!r}."


@pytest.mark.level(5)
def test_after_on_a_down_gpu(impl):
    c, before, after, busbw, step_times = incident(impl)
    with pytest.raises(ValueError, match="^after"):
        impl.triage(c, links(impl), 4, before, before, busbw, step_times)  # ranks 8-15 on node 1, which is down
