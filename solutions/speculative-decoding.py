"""Reference solution for the kata `speculative-decoding`.

Level 1 is the roofline: a step takes max(FLOPs / peak, bytes / bandwidth), so a long prefill is
compute-bound and a small-batch decode, which reads every weight to produce one token per
sequence, is memory-bound. Level 2 is the arithmetic of speculative decoding: how many tokens a
round yields, what it costs, and when drafting stops paying (at large batch the verification pass
is compute-bound and costs g + 1 decode steps). Level 3 is the verification step itself, the
rejection sampler whose output is distributed exactly as the target model's. Level 4 gives a
batch's spare verification tokens to the sequences whose next draft adds the most.

Every quantity is exact: ints for FLOPs and bytes, fractions.Fraction for times and probabilities,
so equalities at a boundary (a step exactly balanced, two draft lengths with the same speedup) are
decided, not rounded.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

# --- level 1: the roofline ----------------------------------------------------------


@dataclass(frozen=True)
class Device:
    name: str
    peak_flops: int  # FLOP/s
    hbm_bandwidth: int  # bytes/s


@dataclass(frozen=True)
class Model:
    name: str
    num_params: int
    weight_bytes: int  # all weights, in their storage dtype
    kv_bytes_per_token: int  # K and V of one token, every layer


@dataclass(frozen=True)
class Cost:
    flops: int
    bytes: int


DEVICES = {  # datasheet figures: dense bf16 FLOP/s and HBM bytes/s
    "A10G": Device("A10G", 70 * 10**12, 600 * 10**9),
    "A100": Device("A100", 312 * 10**12, 2_039 * 10**9),
    "H100": Device("H100", 989 * 10**12, 3_350 * 10**9),
    "H200": Device("H200", 989 * 10**12, 4_800 * 10**9),
}


def _check_int(name: str, value, minimum: int) -> None:
    # type() is int: a bool is not a count
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_model(model: Model) -> None:
    _check_int("num_params", model.num_params, 1)
    _check_int("weight_bytes", model.weight_bytes, 1)
    _check_int("kv_bytes_per_token", model.kv_bytes_per_token, 0)


def _check_device(device: Device) -> None:
    _check_int("peak_flops", device.peak_flops, 1)
    _check_int("hbm_bandwidth", device.hbm_bandwidth, 1)


def prefill_cost(model: Model, num_tokens: int) -> Cost:
    """A prompt of num_tokens: 2 FLOPs per parameter per token; weights read once, KV written."""
    _check_model(model)
    _check_int("num_tokens", num_tokens, 1)
    return Cost(2 * model.num_params * num_tokens,
                model.weight_bytes + num_tokens * model.kv_bytes_per_token)


def decode_cost(model: Model, batch: int, context: int) -> Cost:
    """One decode step: each of `batch` sequences reads its `context` cached tokens, adds one."""
    _check_model(model)
    _check_int("batch", batch, 1)
    _check_int("context", context, 0)
    return Cost(2 * model.num_params * batch,
                model.weight_bytes + batch * (context + 1) * model.kv_bytes_per_token)


def _check_cost(cost: Cost) -> None:
    _check_int("flops", cost.flops, 0)
    _check_int("bytes", cost.bytes, 0)


def step_time(cost: Cost, device: Device) -> Fraction:
    _check_cost(cost)
    _check_device(device)
    return max(Fraction(cost.flops, device.peak_flops), Fraction(cost.bytes, device.hbm_bandwidth))


def bound(cost: Cost, device: Device) -> str:
    """"compute" when the FLOPs take at least as long as the bytes (a tie is compute), else "memory"."""
    _check_cost(cost)
    _check_device(device)
    # flops / peak >= bytes / bw, cross-multiplied: exact in ints
    return "compute" if cost.flops * device.hbm_bandwidth >= cost.bytes * device.peak_flops else "memory"


def decode_crossover_batch(model: Model, device: Device, context: int) -> int | None:
    """The smallest batch whose decode step is compute-bound, or None if none is.

    compute-bound <=> 2 P b * bw >= (W + b (c + 1) kv) * peak
                  <=> b * (2 P bw - (c + 1) kv peak) >= W peak.
    Each sequence adds FLOPs and KV bytes in a fixed ratio; the weights are read once. If a
    sequence's own bytes outweigh its FLOPs, no batch ever gets there. No loop over b: the answer
    can be in the billions.
    """
    _check_model(model)
    _check_device(device)
    _check_int("context", context, 0)
    per_seq = (2 * model.num_params * device.hbm_bandwidth
               - (context + 1) * model.kv_bytes_per_token * device.peak_flops)
    if per_seq <= 0:
        return None
    return max(1, -(-model.weight_bytes * device.peak_flops // per_seq))


# --- level 2: what a round of speculation yields and costs ---------------------------


def _check_rational(name: str, value, low, high=None) -> Fraction:
    # Fraction and int (not bool) are exact; a float is not
    if isinstance(value, bool) or not isinstance(value, Rational):
        raise ValueError(f"{name} must be a Fraction or an int, got {value!r}")
    if value < low or (high is not None and value > high):
        limit = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {limit}, got {value}")
    return Fraction(value)


def expected_tokens(a, g: int) -> Fraction:
    """Tokens one round yields per sequence: 1 + a + ... + a^g (the bonus or corrected token is
    the 1). Example: a = 1/2, g = 2 -> 7/4."""
    a = _check_rational("a", a, 0, 1)
    _check_int("g", g, 0)
    if a == 1:
        return Fraction(g + 1)  # the closed form divides by 1 - a
    return (1 - a ** (g + 1)) / (1 - a)


def speedup(a, g: int, c) -> Fraction:
    """Tokens per target-step-equivalent: a round costs g draft steps (c each) + one target pass."""
    a = _check_rational("a", a, 0, 1)
    _check_int("g", g, 0)
    c = _check_rational("c", c, 0)
    return expected_tokens(a, g) / (1 + g * c)


def best_draft_length(a, c, max_g: int) -> int:
    """The g in 0..max_g with the largest speedup; the smallest such g on a tie (0: do not draft)."""
    a = _check_rational("a", a, 0, 1)
    c = _check_rational("c", c, 0)
    _check_int("max_g", max_g, 0)
    best, best_speedup = 0, Fraction(1)
    for g in range(1, max_g + 1):
        s = speedup(a, g, c)
        if s > best_speedup:  # strictly better: ties keep the smaller g
            best, best_speedup = g, s
    return best


def verify_cost(model: Model, batch: int, context: int, g: int) -> Cost:
    """The target's pass over g drafted tokens + 1: g + 1 tokens per sequence, weights read once."""
    _check_model(model)
    _check_int("batch", batch, 1)
    _check_int("context", context, 0)
    _check_int("g", g, 0)
    return Cost(2 * model.num_params * batch * (g + 1),
                model.weight_bytes + batch * (context + g + 1) * model.kv_bytes_per_token)


def speedup_at_batch(target: Model, draft: Model, device: Device, batch: int, context: int,
                     a, g: int) -> Fraction:
    """Speculation vs plain decoding on the roofline, per generated token.

    Plain: one target decode step per token. Speculative: g draft decode steps (the draft's
    context grows by one each), then one verification pass, for expected_tokens(a, g) tokens.
    """
    _check_model(target)
    _check_model(draft)
    _check_device(device)
    _check_int("batch", batch, 1)
    _check_int("context", context, 0)
    a = _check_rational("a", a, 0, 1)
    _check_int("g", g, 0)
    plain = step_time(decode_cost(target, batch, context), device)
    drafting = sum((step_time(decode_cost(draft, batch, context + j), device) for j in range(g)),
                   Fraction(0))
    round_time = drafting + step_time(verify_cost(target, batch, context, g), device)
    return expected_tokens(a, g) * plain / round_time


def _step_lines(model: Model, device: Device, context: int, tokens: int) -> tuple:
    """A pass of `tokens` new tokens per sequence as two lines in the batch b, seconds = u + v * b:
    (compute line, memory line); the step takes the larger. The weights are read once a pass."""
    compute = (Fraction(0), Fraction(2 * model.num_params * tokens, device.peak_flops))
    memory = (Fraction(model.weight_bytes, device.hbm_bandwidth),
              Fraction((context + tokens) * model.kv_bytes_per_token, device.hbm_bandwidth))
    return compute, memory


def breakeven_batch(target: Model, draft: Model, device: Device, context: int, a, g: int) -> int | None:
    """The largest batch at which drafting g tokens still pays: speedup_at_batch(...) > 1.
    0 when no batch pays (g = 0 never does); None when it pays at every batch past some size.

    gain(b) = expected_tokens * plain(b) - round(b) is piecewise linear in b: each step time is
    the larger of a compute line and a memory line, which cross at most once. Between two
    crossings gain is one line, so each piece's largest positive integer is found in O(1), and
    the answer is the largest over the pieces (gain need not be monotone: at a long context
    speculation can start paying only at a larger batch). The answer can be in the billions.
    """
    _check_model(target)
    _check_model(draft)
    _check_device(device)
    _check_int("context", context, 0)
    a = _check_rational("a", a, 0, 1)
    _check_int("g", g, 0)
    tokens = expected_tokens(a, g)
    # (weight, lines): gain = sum of weight * max(lines) over the passes
    passes = [(tokens, _step_lines(target, device, context, 1))]
    passes += [(-1, _step_lines(draft, device, context + j, 1)) for j in range(g)]
    passes.append((-1, _step_lines(target, device, context, g + 1)))
    cuts = {Fraction(1)}
    for _, ((u1, v1), (u2, v2)) in passes:  # where compute and memory lines cross
        if v1 != v2 and (u2 - u1) / (v1 - v2) > 1:
            cuts.add((u2 - u1) / (v1 - v2))
    cuts = sorted(cuts)

    def gain(b: Fraction) -> Fraction:
        return sum(w * max(u1 + v1 * b, u2 + v2 * b) for w, ((u1, v1), (u2, v2)) in passes)

    best = 0
    for i, left in enumerate(cuts):
        right = cuts[i + 1] if i + 1 < len(cuts) else None
        probe = left + 1 if right is None else (left + right) / 2  # inside the piece
        slope = gain(probe + 1) - gain(probe) if right is None else (gain(right) - gain(left)) / (right - left)
        at_left = gain(left)
        if right is None and (slope > 0 or (slope == 0 and at_left > 0)):
            return None  # the last piece stays positive (or turns positive) for ever
        if slope >= 0:
            top = None if right is None else right.__floor__()
        else:  # positive while b < left + at_left / -slope
            root = left + at_left / -slope
            top = -(-root.numerator // root.denominator) - 1  # the largest integer below root
            if right is not None:
                top = min(top, right.__floor__())
        if top is not None and top >= left and gain(Fraction(top)) > 0:
            best = max(best, top)
    return best


# --- level 3: the verification step ---------------------------------------------------


def _check_dist(name: str, dist, size: int | None) -> list[Fraction]:
    if not isinstance(dist, list) or not dist or (size is not None and len(dist) != size):
        raise ValueError(f"{name}: every distribution must be a list of {size or 'one or more'} probabilities")
    for x in dist:
        if isinstance(x, bool) or not isinstance(x, Rational) or x < 0:
            raise ValueError(f"{name}: probabilities must be Fractions or ints >= 0, got {x!r}")
    if sum(dist) != 1:
        raise ValueError(f"{name}: a distribution must sum to exactly 1, got {sum(dist)}")
    return [Fraction(x) for x in dist]


def acceptance_rate(p: list, q: list) -> Fraction:
    """The chance a token drafted from q is accepted against p: sum of min(p(x), q(x))."""
    p = _check_dist("p", p, None)
    q = _check_dist("q", q, len(p))
    return sum((min(px, qx) for px, qx in zip(p, q)), Fraction(0))


def sample(weights: list, u) -> int:
    """Inverse CDF: the smallest k with u * S < w_0 + ... + w_k, S = sum(w). A zero weight is
    never chosen: the sum does not grow across it."""
    if not isinstance(weights, list) or not weights:
        raise ValueError("weights must be a non-empty list of rationals >= 0")
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, Rational) or w < 0:
            raise ValueError(f"weights must hold rationals >= 0, got {w!r}")
    total = sum(weights)
    if total <= 0:
        raise ValueError("weights must have a positive sum")
    if isinstance(u, bool) or not isinstance(u, Rational) or not 0 <= u < 1:
        raise ValueError(f"u must be a rational in [0, 1), got {u!r}")
    target = u * total
    cumulative = 0
    for k, w in enumerate(weights):
        cumulative += w
        if target < cumulative:
            return k
    raise AssertionError("unreachable: u < 1, so u * S < S")  # pragma: no cover


def verify(p: list, q: list, draft_tokens: list, draws: list) -> list[int]:
    """Accept each drafted token with probability min(1, p/q); on the first rejection emit a token
    of the residual max(0, p - q) (normalised) and stop; after g acceptances emit a bonus token of
    p[g]. Returns the emitted tokens: the accepted drafts, then one more."""
    if not isinstance(p, list) or not p:
        raise ValueError("p must be a non-empty list of distributions")
    ps = [_check_dist("p", d, len(p[0]) if isinstance(p[0], list) else None) for d in p]
    vocab, g = len(ps[0]), len(ps) - 1
    if not isinstance(q, list) or len(q) != g:
        raise ValueError(f"q must be a list of len(p) - 1 = {g} distributions")
    qs = [_check_dist("q", d, vocab) for d in q]
    if not isinstance(draft_tokens, list) or len(draft_tokens) != g:
        raise ValueError(f"draft_tokens must be a list of {g} tokens")
    for i, x in enumerate(draft_tokens):
        if type(x) is not int or not 0 <= x < vocab or qs[i][x] == 0:
            raise ValueError(f"draft_tokens[{i}] = {x!r}: not a token the draft could have drawn")
    if not isinstance(draws, list) or len(draws) != g + 1:
        raise ValueError(f"draws must be a list of len(p) = {g + 1} numbers in [0, 1)")
    for u in draws:
        if isinstance(u, bool) or not isinstance(u, Rational) or not 0 <= u < 1:
            raise ValueError(f"draws must be Fractions in [0, 1), got {u!r}")

    out = []
    for i, x in enumerate(draft_tokens):
        if draws[i] * qs[i][x] < ps[i][x]:  # u < p/q, without dividing
            out.append(x)
            continue
        # rejected: p(x) < q(x), so p != q and the residual has mass somewhere
        residual = [max(Fraction(0), px - qx) for px, qx in zip(ps[i], qs[i])]
        out.append(sample(residual, draws[g]))
        return out
    out.append(sample(ps[g], draws[g]))  # every draft accepted: the bonus token
    return out


# --- level 4: drafts for a batch -------------------------------------------------------


def _check_rates(rates) -> list[Fraction]:
    if not isinstance(rates, list) or not rates:
        raise ValueError(f"rates must be a non-empty list of acceptance rates, got {rates!r}")
    return [_check_rational("rates", a, 0, 1) for a in rates]


def allocate_drafts(rates: list, budget: int, max_g: int) -> list[int]:
    """Draft lengths for a batch whose verification pass holds `budget` tokens: one token per
    sequence first, then each spare token to the sequence whose next draft adds the most expected
    tokens, a^(g + 1) (ties: the lowest index), while that gain is > 0 and g < max_g."""
    rates = _check_rates(rates)
    _check_int("budget", budget, len(rates))
    _check_int("max_g", max_g, 0)
    drafts = [0] * len(rates)
    # the gains of one sequence only shrink (a^1 >= a^2 >= ...), so a heap of each sequence's
    # next gain gives the greedy choice, which is also the best allocation
    heap = [(-a, i) for i, a in enumerate(rates) if a > 0 and max_g > 0]
    heapq.heapify(heap)
    spare = budget - len(rates)
    while spare and heap:
        neg_gain, i = heapq.heappop(heap)
        drafts[i] += 1
        spare -= 1
        if drafts[i] < max_g:
            heapq.heappush(heap, (neg_gain * rates[i], i))
    return drafts


def batch_expected_tokens(rates: list, drafts: list) -> Fraction:
    """Expected tokens one verification round yields over the batch: sum of expected_tokens."""
    rates = _check_rates(rates)
    if (not isinstance(drafts, list) or len(drafts) != len(rates)
            or any(type(g) is not int or g < 0 for g in drafts)):
        raise ValueError(f"drafts must be a list of ints >= 0, one per rate, got {drafts!r}")
    return sum((expected_tokens(a, g) for a, g in zip(rates, drafts)), Fraction(0))
