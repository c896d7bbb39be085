"""Visible tests for token-cost-ledger: the prompt's example and a few more.

Run them with `kata check token-cost-ledger`. The hidden suite checks many more cases.
"""

from fractions import Fraction

import pytest


def _ledger(impl):
    P = impl.Price
    return impl.Ledger({"small": P(150_000, 75_000, 187_500, 600_000),
                        "large": P(3_000_000, 300_000, 3_750_000, 15_000_000, long_threshold=200_000)})


@pytest.mark.level(1)
def test_prompt_example(impl):
    ledger, U = _ledger(impl), impl.Usage
    assert ledger.record(U("r1", "acme", "small", 1000, 0, 0, 500)) == 450
    assert ledger.record(U("r2", "acme", "large", 1200, 1000, 0, 10)) == 1050
    assert ledger.record(U("r3", "beta", "small", 10, 0, 0, 0)) == 2
    assert ledger.record(U("r4", "beta", "small", 3, 0, 0, 0)) == 0
    assert ledger.record(U("r5", "beta", "large", 200_001, 0, 200_000, 100)) == 1503006
    assert ledger.record(U("r1", "acme", "small", 1000, 0, 0, 500)) == 450
    with pytest.raises(ValueError, match="request_id"):
        ledger.record(U("r1", "acme", "small", 1000, 0, 0, 501))
    assert ledger.tenant_total("acme") == 1500
    assert ledger.tenant_total("beta") == 1503008
    assert ledger.tenant_total("nobody") == 0
    assert ledger.top_tenants(5) == [("beta", 1503008), ("acme", 1500)]
    assert ledger.cache_hit_rate("large") == Fraction(1000, 201201)
    assert ledger.cache_hit_rate("small") == Fraction(0)


@pytest.mark.level(1)
def test_threshold_is_strict(impl):
    ledger = _ledger(impl)
    assert ledger.record(impl.Usage("a", "t", "large", 200_000, 0, 0, 0)) == 600_000
    assert ledger.record(impl.Usage("b", "t", "large", 200_001, 0, 0, 0)) == 1_200_006


@pytest.mark.level(1)
def test_invalid_usage(impl):
    ledger = _ledger(impl)
    with pytest.raises(ValueError, match="model"):
        ledger.record(impl.Usage("a", "t", "medium", 1, 0, 0, 0))
    with pytest.raises(ValueError, match="cached_tokens"):
        ledger.record(impl.Usage("a", "t", "small", 5, 3, 3, 0))
    assert ledger.cache_hit_rate("small") is None
