"""Speculative decoding: the roofline, when drafting pays, and the exact verification sampler.

Read PROMPT.md for the rules. FLOPs and bytes are ints; times, speedups, rates and probabilities
are fractions.Fraction (a float is never accepted where a rational is asked for). Invalid input
raises ValueError whose message begins with the offending field's or argument's name. Standard
library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

# --- level 1: the roofline ----------------------------------------------------------


@dataclass(frozen=True)
class Device:
    name: str
    peak_flops: int  # FLOP/s, an int >= 1
    hbm_bandwidth: int  # bytes/s, an int >= 1


@dataclass(frozen=True)
class Model:
    name: str
    num_params: int  # an int >= 1
    weight_bytes: int  # all weights in their storage dtype, an int >= 1
    kv_bytes_per_token: int  # K and V of one token over every layer, an int >= 0


@dataclass(frozen=True)
class Cost:
    flops: int  # an int >= 0
    bytes: int  # an int >= 0: bytes moved to or from HBM


DEVICES = {  # datasheet figures: dense bf16 FLOP/s and HBM bytes/s
    "A10G": Device("A10G", 70 * 10**12, 600 * 10**9),
    "A100": Device("A100", 312 * 10**12, 2_039 * 10**9),
    "H100": Device("H100", 989 * 10**12, 3_350 * 10**9),
    "H200": Device("H200", 989 * 10**12, 4_800 * 10**9),
}


def prefill_cost(model: Model, num_tokens: int) -> Cost:
    """A prompt of num_tokens tokens: 2 FLOPs per parameter per token; weights read, K/V written.

    Example: prefill_cost(Model("m", 10, 20, 3), 4) -> Cost(flops=80, bytes=32)
    """
    # TODO
    raise NotImplementedError


def decode_cost(model: Model, batch: int, context: int) -> Cost:
    """One decode step of `batch` sequences, each with `context` cached tokens, one new token each.

    Example: decode_cost(Model("m", 10, 20, 3), 2, 5) -> Cost(flops=40, bytes=56)
    """
    # TODO
    raise NotImplementedError


def step_time(cost: Cost, device: Device) -> Fraction:
    """max(flops / peak_flops, bytes / hbm_bandwidth) seconds, as a Fraction.

    Example: step_time(Cost(80, 32), Device("d", 40, 8)) -> Fraction(4, 1)
    """
    # TODO
    raise NotImplementedError


def bound(cost: Cost, device: Device) -> str:
    """"compute" when flops / peak_flops >= bytes / hbm_bandwidth (a tie is compute), else "memory"."""
    # TODO
    raise NotImplementedError


def decode_crossover_batch(model: Model, device: Device, context: int) -> int | None:
    """The smallest batch >= 1 whose decode step is compute-bound, or None. Computed, not searched."""
    # TODO
    raise NotImplementedError


# --- level 2: when speculation pays (opens at level 2) ---------------------------------


def expected_tokens(a, g: int) -> Fraction:
    """1 + a + ... + a^g. Example: expected_tokens(Fraction(1, 2), 2) -> Fraction(7, 4)."""
    # TODO
    raise NotImplementedError


def speedup(a, g: int, c) -> Fraction:
    """expected_tokens(a, g) / (g * c + 1)."""
    # TODO
    raise NotImplementedError


def best_draft_length(a, c, max_g: int) -> int:
    """The g in 0..max_g with the largest speedup; the smallest on a tie (0: do not draft)."""
    # TODO
    raise NotImplementedError


def verify_cost(model: Model, batch: int, context: int, g: int) -> Cost:
    """The target's pass over g drafted tokens + 1, for `batch` sequences of `context` tokens."""
    # TODO
    raise NotImplementedError


def speedup_at_batch(target: Model, draft: Model, device: Device, batch: int, context: int,
                     a, g: int) -> Fraction:
    """expected_tokens(a, g) * (plain decode step time) / (g draft steps + one verify pass)."""
    # TODO
    raise NotImplementedError


def breakeven_batch(target: Model, draft: Model, device: Device, context: int, a, g: int) -> int | None:
    """The largest batch >= 1 with speedup_at_batch(...) > 1; 0 when none; None when it pays at
    every batch past some size. Can be near 10**12: compute it, do not scan batches.

    Example: breakeven_batch(llama-3-8b, draft-1b, H100, 100, Fraction(4, 5), 4) -> 182
    """
    # TODO
    raise NotImplementedError


# --- level 3: the verification step (opens at level 3) ---------------------------------


def acceptance_rate(p: list, q: list) -> Fraction:
    """sum over x of min(p[x], q[x]): the chance a token drawn from q is accepted against p."""
    # TODO
    raise NotImplementedError


def sample(weights: list, u) -> int:
    """The smallest k with u * sum(weights) < weights[0] + ... + weights[k].

    Example: sample([Fraction(1, 4), Fraction(1, 4), 0], Fraction(1, 2)) -> 1
    """
    # TODO
    raise NotImplementedError


def verify(p: list, q: list, draft_tokens: list, draws: list) -> list[int]:
    """Accept or reject each drafted token, then emit one more token; returns the emitted tokens.

    Example: p = [[1/2, 1/2, 0], [1/3, 1/3, 1/3]], q = [[1/4, 1/4, 1/2]] (Fractions):
    verify(p, q, [0], [9/10, 1/2]) -> [0, 1]; verify(p, q, [2], [0, 1/2]) -> [1]
    """
    # TODO
    raise NotImplementedError


# --- level 4: drafts for a batch (opens at level 4) -------------------------------------


def allocate_drafts(rates: list, budget: int, max_g: int) -> list[int]:
    """Draft lengths for a batch whose verification pass holds `budget` tokens (g_i + 1 each).

    Example: rates [9/10, 1/2, 0, 1, 3/4] (Fractions), budget 16, max_g 4 -> [4, 1, 0, 4, 2]
    """
    # TODO
    raise NotImplementedError


def batch_expected_tokens(rates: list, drafts: list) -> Fraction:
    """The sum of expected_tokens(rates[i], drafts[i]).

    Example: with the rates above and drafts [4, 1, 0, 4, 2] -> Fraction(34769, 2500)
    """
    # TODO
    raise NotImplementedError
