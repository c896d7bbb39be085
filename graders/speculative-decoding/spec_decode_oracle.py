"""Shared helpers of the speculative-decoding hidden suite: calls and messages, a literal oracle of
the prompt (slow, obviously right, independent of the reference), strategies, and the exact
enumeration of a verifier's output distribution.

The enumeration: `verify` is deterministic given its draws, and each draw only matters through
which side of finitely many thresholds it falls (p/q for an acceptance, cumulative sums for a
sample). Splitting [0, 1) at every threshold gives intervals on which any correct verifier behaves
the same, so evaluating it once per interval (at the midpoint) and weighting by the interval's
length gives its exact output distribution, in Fractions.
"""

from __future__ import annotations

from fractions import Fraction as F
import heapq
from itertools import product

from hypothesis import strategies as st

from kata.engine.hardware import HARDWARE


# --- models and devices used across the suite ----------------------------------------------

LLAMA8B = ("llama-3-8b", 8_030_000_000, 16_060_000_000, 131_072)
DRAFT1B = ("draft-1b", 1_240_000_000, 2_480_000_000, 32_768)
H100 = ("H100", 989 * 10**12, 3_350 * 10**9)
ENGINE_TABLE = {  # the reference engine's datasheet table, read from it, as exact ints
    name: (int(h.peak_flops), int(h.hbm_bandwidth)) for name, h in HARDWARE.items()}

# --- the oracle: a literal reading of the prompt -------------------------------------------


def o_prefill(m, n):
    _, params, weights, kv = m
    return (2 * params * n, weights + n * kv)


def o_decode(m, b, c):
    _, params, weights, kv = m
    flops = sum(2 * params for _ in range(b))
    read = sum(c * kv for _ in range(b))
    write = sum(kv for _ in range(b))
    return (flops, weights + read + write)


def o_verify_cost(m, b, c, g):
    _, params, weights, kv = m
    return (2 * params * b * (g + 1), weights + b * c * kv + b * (g + 1) * kv)


def o_time(cost, d):
    flops, moved = cost
    return max(F(flops, d[1]), F(moved, d[2]))


def o_compute_bound(cost, d):
    flops, moved = cost
    return F(flops, d[1]) >= F(moved, d[2])


def o_crossover(m, d, c):
    """Doubling, then bisection, on the exact predicate (monotone in the batch)."""
    if not o_compute_bound(o_decode(m, 1, c), d):
        hi = 1
        while hi < 2**80 and not o_compute_bound(o_decode_fast(m, hi, c), d):
            hi *= 2
        if not o_compute_bound(o_decode_fast(m, hi, c), d):
            return None
        lo = hi // 2  # predicate false at lo, true at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if o_compute_bound(o_decode_fast(m, mid, c), d):
                hi = mid
            else:
                lo = mid
        return hi
    return 1


def o_decode_fast(m, b, c):
    _, params, weights, kv = m
    return (2 * params * b, weights + b * (c + 1) * kv)


def o_expected(a, g):
    return sum((F(a) ** i for i in range(g + 1)), F(0))


def o_speedup(a, g, c):
    return o_expected(a, g) / (g * F(c) + 1)


def o_best(a, c, max_g):
    values = [o_speedup(a, g, c) for g in range(max_g + 1)]
    top = max(values)
    return values.index(top)  # first = smallest g


def o_speedup_at_batch(t, dr, d, b, c, a, g):
    plain = o_time(o_decode_fast(t, b, c), d)
    rnd = sum((o_time(o_decode_fast(dr, b, c + j), d) for j in range(g)), F(0))
    rnd += o_time(o_verify_cost(t, b, c, g), d)
    return o_expected(a, g) * plain / rnd


def o_breakeven(t, dr, d, c, a, g):
    """Scan every batch up to a bound past every compute/memory crossing, then extend the last,
    linear, stretch exactly. A pass's two lines cross at W * peak / (an int >= 1) <= W * peak, so
    past N = max(W) * peak + 2 every step time is one line and the gain below is linear."""
    def gain(b):  # > 0 exactly when speedup_at_batch > 1 (the round's time is > 0)
        plain = o_time(o_decode_fast(t, b, c), d)
        rnd = sum((o_time(o_decode_fast(dr, b, c + j), d) for j in range(g)), F(0))
        return o_expected(a, g) * plain - rnd - o_time(o_verify_cost(t, b, c, g), d)

    n = max(t[2], dr[2]) * d[1] + 2
    slope = gain(n + 1) - gain(n)
    if slope > 0 or (slope == 0 and gain(n) > 0):
        return None
    if gain(n) > 0:  # still paying at n: it stops where the line crosses zero
        q = gain(n) / -slope  # gain(n + k) = gain(n) + k * slope > 0  <=>  k < q
        return n + -(-q.numerator // q.denominator) - 1
    return next((b for b in range(n, 0, -1) if gain(b) > 0), 0)


def o_sample(weights, u):
    total = sum(weights)
    run = F(0)
    for k, w in enumerate(weights):
        run += w
        if u * total < run:
            return k
    raise AssertionError


def o_verify(p, q, drafts, draws):
    out = []
    g = len(drafts)
    for i, x in enumerate(drafts):
        if draws[i] < F(p[i][x]) / F(q[i][x]):
            out.append(x)
            continue
        out.append(o_sample([max(F(0), F(a) - F(b)) for a, b in zip(p[i], q[i])], draws[g]))
        return out
    out.append(o_sample(p[g], draws[g]))
    return out


# --- exact output distributions by enumeration -----------------------------------------------


def _cuts(weights):
    total = sum(weights)
    cuts, run = set(), F(0)
    for w in weights:
        run += w
        cuts.add(run / total)
    return cuts


def _intervals(cuts):
    """(midpoint, length) of the pieces [0, 1) is split into at `cuts`."""
    points = sorted({F(0), F(1)} | {c for c in cuts if 0 < c < 1})
    return [((lo + hi) / 2, hi - lo) for lo, hi in zip(points, points[1:])]


def output_distribution(verify, p, q):
    """{emitted tuple: probability} of verify(p, q, drafts, draws), with each drafted token drawn
    from its q and every draw uniform on [0, 1): exact, by enumeration (see the module docstring)."""
    g = len(q)
    accept_cuts = [{F(p[i][x]) / F(q[i][x]) for x in range(len(q[i])) if q[i][x] > 0} for i in range(g)]
    final_cuts = _cuts(p[g])
    for i in range(g):
        residual = [max(F(0), F(a) - F(b)) for a, b in zip(p[i], q[i])]
        if sum(residual) > 0:
            final_cuts |= _cuts(residual)
    dist: dict[tuple, F] = {}
    draft_choices = [[(x, F(q[i][x])) for x in range(len(q[i])) if q[i][x] > 0] for i in range(g)]
    accept_pieces = [_intervals(c) for c in accept_cuts]
    final_pieces = _intervals(final_cuts)
    for drafts in product(*draft_choices):
        weight = F(1)
        for _, w in drafts:
            weight *= w
        tokens = [x for x, _ in drafts]
        for pieces in product(*accept_pieces):
            w2 = weight
            for _, length in pieces:
                w2 *= length
            for mid, length in final_pieces:
                draws = [m for m, _ in pieces] + [mid]
                out = tuple(verify(p, q, list(tokens), list(draws)))
                dist[out] = dist.get(out, F(0)) + w2 * length
    return dist


def marginals(dist, position):
    """{token: P(the token at `position` is emitted and is that token)}."""
    out: dict[int, F] = {}
    for seq, pr in dist.items():
        if len(seq) > position:
            out[seq[position]] = out.get(seq[position], F(0)) + pr
    return out


def prefix_probability(dist, prefix):
    return sum((pr for seq, pr in dist.items() if seq[:len(prefix)] == tuple(prefix)), F(0))


# --- strategies ---------------------------------------------------------------------------


def o_allocate(rates, budget, max_g):
    """Level 4 read literally: one token at a time, rescanning every sequence's next gain."""
    drafts = [0] * len(rates)
    for _ in range(budget - len(rates)):
        best = None
        for i, a in enumerate(rates):
            gain = F(a) ** (drafts[i] + 1)
            if drafts[i] < max_g and gain > 0 and (best is None or gain > best[0]):
                best = (gain, i)
        if best is None:
            break
        drafts[best[1]] += 1
    return drafts


def o_allocate_fast(rates, budget, max_g):
    """The same greedy with a heap: the speed a solution is held to."""
    heap = [(-F(a), i) for i, a in enumerate(rates) if a > 0 and max_g > 0]
    heapq.heapify(heap)
    drafts = [0] * len(rates)
    for _ in range(budget - len(rates)):
        if not heap:
            break
        gain, i = heapq.heappop(heap)
        drafts[i] += 1
        if drafts[i] < max_g:
            heapq.heappush(heap, (gain * rates[i], i))
    return drafts


def o_best_total(rates, budget, max_g):
    """The most expected tokens any allocation within the budget reaches (brute force)."""
    best = F(0)
    for drafts in product(range(max_g + 1), repeat=len(rates)):
        if sum(drafts) + len(rates) <= budget:
            best = max(best, sum(o_expected(a, g) for a, g in zip(rates, drafts)))
    return best


@st.composite
def distributions(draw, vocab, allow_zero=True):
    """A distribution over `vocab` tokens: small integer weights, normalised (zeros allowed)."""
    low = 0 if allow_zero else 1
    weights = draw(st.lists(st.integers(low, 4), min_size=vocab, max_size=vocab).filter(lambda w: sum(w) > 0))
    total = sum(weights)
    return [F(w, total) for w in weights]


@st.composite
def spec_cases(draw, max_g=2, max_vocab=3):
    """(p, q): g drafted positions (q[i], p[i]) and the bonus distribution p[g]."""
    vocab = draw(st.integers(1, max_vocab))
    g = draw(st.integers(0, max_g))
    q = [draw(distributions(vocab)) for _ in range(g)]
    p = [draw(distributions(vocab)) for _ in range(g + 1)]
    return p, q


rationals = st.fractions(min_value=0, max_value=1, max_denominator=12)
