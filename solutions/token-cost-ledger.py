"""Token cost ledger: the reference solution.

Everything is an integer until cache_hit_rate builds its Fraction. Running totals make record and
the lookups O(1):
    _totals   dict, tenant -> total cost (only tenants with a recorded request)
    _hits     dict, model -> [sum of cached_tokens, sum of input_tokens]
    _seen     dict, request_id -> (usage, cost), to answer retries

Example:
    ledger = Ledger({"small": Price(150_000, 75_000, 187_500, 600_000)})
    ledger.record(Usage("r1", "acme", "small", 1000, 0, 0, 500)) -> 450
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from fractions import Fraction

PER = 1_000_000  # rates are per million tokens


@dataclass(frozen=True)
class Price:
    input: int
    cached_input: int
    cache_write: int
    output: int
    long_threshold: int | None = None


@dataclass(frozen=True)
class Usage:
    request_id: str
    tenant: str
    model: str
    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int


def _check_int(value, name: str) -> None:
    if type(value) is not int or value < 0:  # type() is int: rejects bool and 2.0
        raise ValueError(f"{name} must be an int >= 0, got {value!r}")


def _check_prices(prices) -> None:
    if type(prices) is not dict:
        raise ValueError(f"prices must be a dict, got {type(prices).__name__}")
    for model, price in prices.items():
        if type(model) is not str or not isinstance(price, Price):
            raise ValueError(f"prices must map str to Price, got {model!r}: {price!r}")
    for price in prices.values():
        for name in ("input", "cached_input", "cache_write", "output"):
            _check_int(getattr(price, name), name)
        if price.long_threshold is not None:
            _check_int(price.long_threshold, "long_threshold")


def _cost(usage: Usage, price: Price) -> int:
    """Micro-dollars, rounded half up. Example: 10 plain tokens at 150,000 -> raw 1,500,000 -> 2."""
    plain = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    raw = (plain * price.input + usage.cached_tokens * price.cached_input
           + usage.cache_write_tokens * price.cache_write + usage.output_tokens * price.output)
    if price.long_threshold is not None and usage.input_tokens > price.long_threshold:
        raw *= 2
    return (raw + PER // 2) // PER  # exact: no float ever holds raw


class Ledger:
    def __init__(self, prices: dict[str, Price]) -> None:
        _check_prices(prices)
        self._prices = dict(prices)  # Price is frozen: a shallow copy is enough
        self._totals: dict[str, int] = {}
        self._hits = {model: [0, 0] for model in self._prices}
        self._seen: dict[str, tuple[Usage, int]] = {}

    def _check_model(self, model) -> None:
        if type(model) is not str or model not in self._prices:
            raise ValueError(f"model must be one of the priced models, got {model!r}")

    def record(self, usage: Usage) -> int:
        if not isinstance(usage, Usage):
            raise ValueError(f"usage must be a Usage, got {usage!r}")
        for name in ("request_id", "tenant", "model"):
            if type(getattr(usage, name)) is not str:
                raise ValueError(f"{name} must be a str, got {getattr(usage, name)!r}")
        self._check_model(usage.model)
        for name in ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"):
            _check_int(getattr(usage, name), name)
        if usage.cached_tokens + usage.cache_write_tokens > usage.input_tokens:
            raise ValueError("cached_tokens + cache_write_tokens must be <= input_tokens")
        if usage.request_id in self._seen:
            first, first_cost = self._seen[usage.request_id]
            if first != usage:
                raise ValueError(f"request_id {usage.request_id!r} was recorded with a different usage")
            return first_cost  # a retry: bill once
        charge = _cost(usage, self._prices[usage.model])
        self._seen[usage.request_id] = (usage, charge)
        self._totals[usage.tenant] = self._totals.get(usage.tenant, 0) + charge
        hits = self._hits[usage.model]
        hits[0] += usage.cached_tokens
        hits[1] += usage.input_tokens
        return charge

    def tenant_total(self, tenant: str) -> int:
        if type(tenant) is not str:
            raise ValueError(f"tenant must be a str, got {tenant!r}")
        return self._totals.get(tenant, 0)

    def top_tenants(self, k: int) -> list[tuple[str, int]]:
        _check_int(k, "k")
        return heapq.nsmallest(k, self._totals.items(), key=lambda item: (-item[1], item[0]))

    def cache_hit_rate(self, model: str) -> Fraction | None:
        self._check_model(model)
        cached, total = self._hits[model]
        return Fraction(cached, total) if total else None
