"""Shared helpers of the token-cost-ledger hidden suite: a slow oracle written from PROMPT.md, the
reference loaded for side-by-side timing, and assertion helpers.

`OracleLedger` shares no code with the reference: it keeps the list of recorded usages and
recomputes every statistic from it, prices a request with Fractions, and rounds half up as
floor(x + 1/2). Slow and obviously right.
"""

from __future__ import annotations

import math
from fractions import Fraction

from kata.checks import check, reference_at  # noqa: F401 - check: the suite imports it from here


def oracle_cost(u, p) -> int:
    plain = u.input_tokens - u.cached_tokens - u.cache_write_tokens
    dollars = Fraction(plain * p.input + u.cached_tokens * p.cached_input + u.cache_write_tokens * p.cache_write
                       + u.output_tokens * p.output, 10**6)
    if p.long_threshold is not None and u.input_tokens > p.long_threshold:
        dollars = dollars * 2
    return math.floor(dollars + Fraction(1, 2))


class OracleLedger:
    def __init__(self, prices):
        self.prices = dict(prices)
        self.log = []  # (usage, cost) of every recorded request, in order

    def record(self, u):
        for old, old_cost in self.log:
            if old.request_id == u.request_id:
                if (old.tenant, old.model, old.input_tokens, old.cached_tokens, old.cache_write_tokens,
                        old.output_tokens) != (u.tenant, u.model, u.input_tokens, u.cached_tokens,
                                               u.cache_write_tokens, u.output_tokens):
                    raise ValueError("request_id")
                return old_cost
        c = oracle_cost(u, self.prices[u.model])
        self.log.append((u, c))
        return c

    def tenant_total(self, tenant):
        return sum(c for u, c in self.log if u.tenant == tenant)

    def top_tenants(self, k):
        tenants = {u.tenant for u, _ in self.log}
        ranked = sorted(((t, self.tenant_total(t)) for t in tenants), key=lambda tc: (-tc[1], tc[0]))
        return ranked[:k]

    def cache_hit_rate(self, model):
        total = sum(u.input_tokens for u, _ in self.log if u.model == model)
        return Fraction(sum(u.cached_tokens for u, _ in self.log if u.model == model), total) if total else None


def check_rate(got, expected, call: str) -> None:
    """A Fraction equal to `expected`, or None when expected is None."""
    __tracebackhide__ = True
    ok = got is None if expected is None else (type(got) is Fraction and got == expected)
    assert ok, f"Called {call}. Returned {got!r} ({type(got).__name__}), expected {expected!r}."


# --- the reference, for side-by-side timing -------------------------------------

# what a solution too slow for the timing test most likely does
SLOW_HINT = "are totals re-added from the history on every call?"


reference = reference_at(__file__, "solutions/token-cost-ledger.py")  # call only inside a baseline measure
