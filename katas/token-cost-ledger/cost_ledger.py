"""Token cost ledger: your solution goes here. Read PROMPT.md first.

Standard library only. Each request costs
    raw = plain * input + cached * cached_input + written * cache_write + output * output
(rates per 1,000,000 tokens, in micro-dollars), doubled when input_tokens > long_threshold, then
raw / 1,000,000 rounded to the nearest integer, halves up.

Example:
    ledger = Ledger({"small": Price(150_000, 75_000, 187_500, 600_000)})
    ledger.record(Usage("r1", "acme", "small", 1000, 0, 0, 500))   -> 450
    ledger.tenant_total("acme")                                  -> 450
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Price:                        # rates in micro-dollars per 1,000,000 tokens
    input: int                      # a prompt token neither read from nor written to the cache
    cached_input: int               # a prompt token read from the cache
    cache_write: int                # a prompt token written to the cache
    output: int                     # an output token
    long_threshold: int | None = None   # prompts longer than this cost double; None: never


@dataclass(frozen=True)
class Usage:
    request_id: str
    tenant: str
    model: str
    input_tokens: int               # all prompt tokens, cached ones included
    cached_tokens: int              # of those, read from the cache
    cache_write_tokens: int         # of those, written to the cache
    output_tokens: int


class Ledger:
    """Bills requests by their tokens and keeps per-tenant and per-model statistics."""

    def __init__(self, prices: dict[str, Price]) -> None:
        """Keeps its own copy of prices. ValueError naming prices or the bad Price field."""
        # TODO
        raise NotImplementedError

    def record(self, usage: Usage) -> int:
        """Bill one request; returns its cost in micro-dollars. A retry (same request_id, equal
        Usage) returns the first cost and changes nothing; a different Usage under a recorded
        request_id raises ValueError naming request_id."""
        # TODO
        raise NotImplementedError

    def tenant_total(self, tenant: str) -> int:
        """The sum of the tenant's recorded costs; 0 if it has none."""
        # TODO
        raise NotImplementedError

    def top_tenants(self, k: int) -> list[tuple[str, int]]:
        """Up to k (tenant, total) pairs: largest total first, equal totals by name ascending."""
        # TODO
        raise NotImplementedError

    def cache_hit_rate(self, model: str) -> Fraction | None:
        """Sum of cached_tokens / sum of input_tokens over the model's requests; None if the
        latter is 0. ValueError naming model for a model not in the prices."""
        # TODO
        raise NotImplementedError
