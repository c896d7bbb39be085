"""Safety interceptor: a classifier racing prefill, held-back streaming, tenant-isolated prefix
caching and multi-turn drift.

Read PROMPT.md for the rules. Times are ints; scores and thresholds are fractions.Fraction (a float
is never accepted where a rational is asked for). Invalid input raises ValueError whose message
begins with the offending field's or argument's name. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

# --- level 1: the classifier races prefill -----------------------------------------------


@dataclass(frozen=True)
class Request:
    id: str
    arrival: int  # an int >= 0
    prompt_tokens: int  # an int >= 1
    classify_time: int  # an int >= 0: the input classifier's latency
    flagged: bool  # its verdict


@dataclass(frozen=True)
class Outcome:
    status: str  # "served" | "refused"
    first_token_time: int | None  # served: when the first token may leave
    refused_time: int | None  # refused: when the refusal is sent
    prefill_tokens: int  # prompt tokens the engine computed for it


def run_gateway(requests: list[Request], prefill_cost: int) -> dict[str, Outcome]:
    """One prefill engine in arrival order; the classifier runs beside it from each arrival.

    Example: run_gateway([Request("a", 0, 100, 30, False)], 1)
             -> {"a": Outcome("served", 100, None, 100)}
    """
    # TODO
    raise NotImplementedError


# --- level 2: streaming hold-back (opens at level 2) ------------------------------------------


@dataclass(frozen=True)
class Stream:
    release_times: list[int]  # one per released token, in token order
    refusal_time: int | None  # None when nothing was flagged
    max_added_latency: int  # max of release - generation time over released tokens (0 if none)


def hold_back(num_tokens: int, first_token_time: int, tpot: int, k: int, check_time: int,
              flag_at: int | None) -> Stream:
    """Chunks of k tokens, each released when its check is done and the previous chunk is out.

    Example: hold_back(7, 100, 10, 3, 5, None).release_times -> [125, 125, 125, 155, 155, 155, 165]
    """
    # TODO
    raise NotImplementedError


# --- level 3: a prefix cache tenants never share (opens at level 3) ----------------------------


class TenantPrefixCache:
    """Full prompt blocks keyed by tenant and every token up to the block's end; LRU per tenant."""

    def __init__(self, block_size: int, quotas: dict[str, int]) -> None:
        # TODO
        raise NotImplementedError

    def admit(self, tenant: str, tokens: list[int]) -> tuple[int, int]:
        """(leading full blocks already cached for this tenant, full blocks cached now)."""
        # TODO
        raise NotImplementedError

    def cached_blocks(self, tenant: str) -> int:
        # TODO
        raise NotImplementedError


# --- level 4: a conversation's risk (opens at level 4) -----------------------------------------


@dataclass(frozen=True)
class Policy:
    turn_threshold: Fraction  # a rational in [0, 1]
    conversation_threshold: Fraction  # a rational >= 0
    decay: Fraction  # a rational in [0, 1)


def first_flagged_turn(scores: list, policy: Policy) -> int | None:
    """risk = decay * risk + score; the first turn whose score or risk reaches its threshold."""
    # TODO
    raise NotImplementedError
