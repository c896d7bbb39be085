"""Shared helpers of the tp-placement hidden suite: calls and messages, a literal oracle of the
prompt (slow, obviously right, independent of the reference), and strategies. The ring's cost
is the reference engine's formula (kata/engine/parallel.py): one model of the physics."""

from __future__ import annotations

import math
from fractions import Fraction as F

from hypothesis import strategies as st

from kata.engine.parallel import INTERCONNECTS, ring_allreduce_time
from kata.strict import same

# The engine's interconnect presets, as exact numbers.
NVLINK, NETWORK = (int(INTERCONNECTS[k].bandwidth) for k in ("nvlink", "network"))
LAT_NV, LAT_NET = (F(INTERCONNECTS[k].latency).limit_denominator(10**9)
                   for k in ("nvlink", "network"))
LINKS = (NVLINK, NETWORK, LAT_NV, LAT_NET)  # the Links most tests use
assert same((NVLINK, NETWORK, LAT_NV, LAT_NET), (450 * 10**9, 50 * 10**9, F(1, 10**6), F(5, 10**6)))  # the prompt's


# --- the oracle ------------------------------------------------------------------


def o_domain(size, g):
    return g // size


def o_crossings(size, group):
    return len({o_domain(size, g) for g in group}) - 1


def o_place(num_domains, size, down, t, num_groups):
    """Literal reading: one group at a time; best fit, else the fullest domains first."""
    used = set(down)
    groups = []
    for _ in range(num_groups):
        free = {d: [g for g in range(d * size, d * size + size) if g not in used] for d in range(num_domains)}
        roomy = [d for d in free if len(free[d]) >= t]
        if roomy:
            fewest = min(len(free[d]) for d in roomy)
            d = min(d for d in roomy if len(free[d]) == fewest)
            group = free[d][:t]
        else:
            group = []
            order = sorted(free, key=lambda d: (-len(free[d]), d))
            for d in order:
                for g in free[d]:
                    if len(group) < t:
                        group.append(g)
        used.update(group)
        groups.append(sorted(group))
    return groups


def o_ring(group):
    ring = sorted(group)
    if len(ring) == 1:
        return []
    if len(ring) == 2:
        return [frozenset(ring)]
    return [frozenset((ring[i], ring[(i + 1) % len(ring)])) for i in range(len(ring))]


def o_link(size, links, pair, degraded=None):
    a, b = sorted(pair)
    same_domain = o_domain(size, a) == o_domain(size, b)
    bw = links[0] if same_domain else links[1]
    lat = links[2] if same_domain else links[3]
    if degraded and pair in degraded:
        bw = degraded[pair]
    return bw, F(lat)


def o_allreduce(size, links, group, num_bytes, degraded=None):
    """The ring's slowest link and largest latency, charged by the reference engine's own
    formula (kata/engine/parallel.py), so the kata and the engine's TP cost model agree exactly."""
    n = len(group)
    if n == 1:
        return F(0)
    hops = [o_link(size, links, p, degraded) for p in o_ring(group)]
    return F(ring_allreduce_time(n, num_bytes, min(bw for bw, _ in hops),
                                 max(lat for _, lat in hops)))


def o_median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def o_diagnose(size, links, groups, stats, measured):
    out = []
    for group in groups:
        if all(stats[g][1] < F(1, 2) for g in group):
            out.append(("data_loader", None))
            continue
        slow = [(F(measured[p], o_link(size, links, p)[0]), sorted(p)) for p in o_ring(group)
                if 2 * measured[p] < o_link(size, links, p)[0]]
        if slow:
            out.append(("slow_link", min(slow)[1]))
            continue
        k = o_crossings(size, group)
        if k:
            out.append(("cross_domain", k))
            continue
        compute = {g: stats[g][0] * stats[g][1] for g in group}
        med = o_median(compute.values())
        worst = sorted(group, key=lambda g: (-compute[g], g))[0]
        out.append(("throttled_gpu", worst) if compute[worst] > F(6, 5) * med else ("healthy", None))
    return out


def o_valid(num_domains, size, job, plan):
    layers, _, _, tokens, *_ = job
    tp, pp, dp = plan
    return tp * pp * dp == num_domains * size and size % tp == 0 and layers % pp == 0 and tokens % dp == 0


def o_fits(job, plan):
    layers, layer_params, _, _, _, bytes_per_param, memory, _ = job
    return layers * layer_params * bytes_per_param <= memory * plan[0] * plan[1]


def o_step(num_domains, size, links, job, plan):
    """Level 4 read literally: compute with the bubble, 4 TP all-reduces per layer of a stage,
    one DP all-reduce of a GPU's 2-byte gradients rounded up."""
    layers, layer_params, hidden, tokens, micro, _, _, flops = job
    tp, pp, dp = plan
    n = num_domains * size
    params = layers * layer_params
    compute = F(6 * params * tokens, n * flops) * F(pp + micro - 1, micro)
    tp_comm = 4 * F(layers, pp) * o_allreduce(size, links, list(range(tp)), F(tokens, dp) * hidden * 2)
    grads = math.ceil(F(2 * params, tp * pp))
    dp_comm = o_allreduce(size, links, [d * tp * pp for d in range(dp)], grads)
    return compute + tp_comm + dp_comm


def o_plans(num_domains, size, job):
    n = num_domains * size
    return [(tp, pp, n // (tp * pp)) for tp in range(1, n + 1) for pp in range(1, n + 1)
            if n % (tp * pp) == 0 and o_valid(num_domains, size, job, (tp, pp, n // (tp * pp)))]


def o_best_plan(num_domains, size, links, job):
    ranked = sorted((o_step(num_domains, size, links, job, p), p[0], p[1], p)
                    for p in o_plans(num_domains, size, job) if o_fits(job, p))
    return ranked[0][3] if ranked else None


# --- strategies --------------------------------------------------------------------


@st.composite
def clusters(draw, max_domains=5, max_size=8):
    num_domains = draw(st.integers(1, max_domains))
    size = draw(st.integers(1, max_size))
    down = draw(st.frozensets(st.integers(0, num_domains * size - 1), max_size=num_domains * size // 2))
    return num_domains, size, down


# --- level 5: the incident, read literally ---------------------------------------------------


def o_remap(num_domains, size, down, tp, after, crossing):
    """Every choice of domains, simulated rank by rank; the fewest restarts, then the smallest
    tuple. Returns (remap, tie)."""
    moving = {r for i in crossing for r in range(i * tp, i * tp + tp)}
    outcomes = []
    for choice in _choices(num_domains, len(crossing)):
        stays = {r for i, d in zip(crossing, choice) for r in range(i * tp, i * tp + tp)
                 if o_domain(size, after[r]) == d}
        held = {after[r] for r in range(len(after)) if r not in moving or r in stays}
        remap, ok = {}, True
        for i, d in zip(crossing, choice):
            for r in range(i * tp, i * tp + tp):
                if r in stays:
                    continue
                free = [g for g in range(d * size, d * size + size) if g not in down and g not in held]
                if not free:
                    ok = False
                    break
                remap[r] = free[0]
                held.add(free[0])
        if ok:
            outcomes.append((len(remap), choice, remap))
    if not outcomes:
        return None, False
    outcomes.sort(key=lambda o: (o[0], o[1]))
    fewest = outcomes[0][0]
    return outcomes[0][2], sum(1 for o in outcomes if o[0] == fewest) > 1


def _choices(num_domains, k):
    if k == 0:
        return [()]
    return [(d,) + rest for d in range(num_domains) for rest in _choices(num_domains, k - 1)]


def o_triage(num_domains, size, down, links, tp, before, after, busbw, step_times):
    """(crossing, moved, suspects, slowest, remap, tie), each by the prompt's words."""
    n_groups = len(after) // tp
    groups = [[after[r] for r in range(i * tp, i * tp + tp)] for i in range(n_groups)]
    crossing = [i for i in range(n_groups) if o_crossings(size, groups[i]) > 0]
    moved = [r for r in range(len(after)) if before[r] != after[r]]
    ratios = []
    for i in range(n_groups):
        measured = min(busbw[r] for r in range(i * tp, i * tp + tp))
        nominal = min(o_link(size, links, p)[0] for p in o_ring(groups[i]))
        if 2 * measured < nominal:
            ratios.append((F(measured, nominal), i))
    suspects = [i for _, i in sorted(ratios)]
    worst = [max(step_times[r] for r in range(i * tp, i * tp + tp)) for i in range(n_groups)]
    slowest = worst.index(max(worst))  # the first, so the lowest index on a tie
    remap, tie = o_remap(num_domains, size, down, tp, after, crossing)
    return crossing, moved, suspects, slowest, remap, tie
