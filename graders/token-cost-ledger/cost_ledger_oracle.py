"""Shared helpers of the token-cost-ledger hidden suite: a slow oracle written from PROMPT.md, the
reference loaded for side-by-side timing, and assertion helpers.

`OracleLedger` shares no code with the reference: it keeps the list of recorded usages and
recomputes every statistic from it, prices a request with Fractions, and rounds half up as
floor(x + 1/2). Slow and obviously right.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from kata import checks
from kata.checks import check, load_reference  # noqa: F401 - check: the suite imports it from here
from kata.strict import same


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


def expect_value_error(fn, word: str, call: str) -> None:
    """fn() raises ValueError whose message contains `word`."""
    __tracebackhide__ = True
    try:
        got = fn()
    except ValueError as exc:
        assert word in str(exc), f"Called {call}. Raised ValueError({str(exc)!r}), expected it to name {word!r}."
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"Called {call}. Raised {type(exc).__name__}({exc}), expected ValueError naming {word!r}.",
                    pytrace=False)
    pytest.fail(f"Called {call}. Returned {got!r}, expected ValueError naming {word!r}.", pytrace=False)


# --- the reference, for side-by-side timing -------------------------------------

SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "token-cost-ledger.py"
# what a solution too slow for the timing test most likely does
SLOW_HINT = "are totals re-added from the history on every call?"


def reference():
    """The reference solution, imported under its own module name (not the learner's)."""
    return load_reference(SOLUTION, "cost_ledger_reference")


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, **how):
    """kata.checks.compare_speed with this kata's hint: (the implementation's result, the
    reference's answer); `how`: its answer= and ref_setup=."""
    __tracebackhide__ = True
    return checks.compare_speed(call, impl_fn, ref_fn, factor, floor, hint=SLOW_HINT, **how)
