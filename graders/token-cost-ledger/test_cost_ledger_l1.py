"""Hidden suite, level 1: the cost of one request, retries, and the statistics."""

from fractions import Fraction

import pytest
from cost_ledger_oracle import check, check_rate

from kata.checks import check_raises, graded

M = 1_000_000


def _ledger(impl, **prices):
    """A ledger with the given models; by default "m" at 1 micro-dollar per token for everything
    (rates of 1,000,000 per million) and no threshold."""
    prices = prices or {"m": impl.Price(M, M, M, M)}
    return impl.Ledger(prices)


def _record(impl, ledger, *fields):
    return ledger.record(impl.Usage(*fields))


# --- the cost of one request -----------------------------------------------------


@graded(1, 2, "plain prompt tokens at the input rate, output tokens at the output rate")
def test_plain_and_output(impl):
    ledger = _ledger(impl, m=impl.Price(2 * M, 0, 0, 7 * M))
    check(_record(impl, ledger, "r", "t", "m", 3, 0, 0, 4), 3 * 2 + 4 * 7, "record(Usage('r', 't', 'm', 3, 0, 0, 4)) at input 2, output 7 per token")


@graded(1, 2, "cached tokens at the cached rate, written tokens at the write rate, the rest of the prompt at the input rate")
def test_three_prompt_rates(impl):
    ledger = _ledger(impl, m=impl.Price(100 * M, 10 * M, 1000 * M, 0))
    check(_record(impl, ledger, "r", "t", "m", 10, 3, 2, 0), 5 * 100 + 3 * 10 + 2 * 1000,
          "record(Usage('r', 't', 'm', 10, 3, 2, 0)) at input 100, cached 10, write 1000 per token")


@graded(1, 3, "half a micro-dollar rounds up: 1.5 -> 2 and 2.5 -> 3 (not to even)")
@pytest.mark.parametrize("tokens, want", [(3, 2), (5, 3), (1, 1)])
def test_halves_round_up(impl, tokens, want):
    ledger = _ledger(impl, m=impl.Price(M // 2, 0, 0, 0))
    check(_record(impl, ledger, "r", "t", "m", tokens, 0, 0, 0), want,
          f"record of {tokens} plain tokens at 0.5 micro-dollars each")


@graded(1, 2, "just under half rounds down: raw 499,999 -> 0, raw 1,499,999 -> 1")
@pytest.mark.parametrize("rate, want", [(499_999, 0), (1_499_999, 1)])
def test_under_half_rounds_down(impl, rate, want):
    ledger = _ledger(impl, m=impl.Price(rate, 0, 0, 0))
    check(_record(impl, ledger, "r", "t", "m", 1, 0, 0, 0), want, f"record of 1 token at rate {rate}")


@graded(1, 2, "a prompt of exactly long_threshold tokens costs the normal price")
def test_threshold_equal_normal(impl):
    ledger = _ledger(impl, m=impl.Price(M, M, M, M, long_threshold=100))
    check(_record(impl, ledger, "r", "t", "m", 100, 0, 0, 5), 105, "record of 100 prompt tokens with long_threshold 100")


@graded(1, 3, "a prompt longer than long_threshold doubles everything, output included")
def test_threshold_exceeded_doubles(impl):
    ledger = _ledger(impl, m=impl.Price(M, M, M, M, long_threshold=100))
    check(_record(impl, ledger, "r", "t", "m", 101, 1, 0, 5), 2 * 106, "record of 101 prompt tokens and 5 output with long_threshold 100")


@graded(1, 2, "the threshold compares input_tokens (all prompt tokens), not only the plain ones")
def test_threshold_counts_cached(impl):
    ledger = _ledger(impl, m=impl.Price(M, 0, 0, 0, long_threshold=10))
    check(_record(impl, ledger, "r", "t", "m", 11, 8, 0, 0), 6, "record(Usage(.., 11, 8, 0, 0)) with long_threshold 10")


@graded(1, 2, "the doubling happens before rounding: raw 250,000 doubled is 500,000, which rounds to 1")
def test_double_before_rounding(impl):
    ledger = _ledger(impl, m=impl.Price(250_000, 0, 0, 0, long_threshold=0))
    check(_record(impl, ledger, "r", "t", "m", 1, 0, 0, 0), 1, "record of 1 token at 250,000 with long_threshold 0")


@graded(1, 1, "long_threshold 0: an empty prompt is not longer than 0, so it costs the normal price")
def test_threshold_zero_empty_prompt(impl):
    ledger = _ledger(impl, m=impl.Price(M, M, M, M, long_threshold=0))
    check(_record(impl, ledger, "r", "t", "m", 0, 0, 0, 3), 3, "record(Usage(.., 0, 0, 0, 3)) with long_threshold 0")


@graded(1, 1, "long_threshold None never doubles, however long the prompt")
def test_threshold_none(impl):
    ledger = _ledger(impl, m=impl.Price(M, 0, 0, 0))
    check(_record(impl, ledger, "r", "t", "m", 10**9, 0, 0, 0), 10**9, "record of 10**9 prompt tokens with no threshold")


@graded(1, 3, "past 2**53: raw 10**21 + 500,000 rounds up to 10**15 + 1 exactly (a float cannot)")
def test_exact_integers(impl):
    ledger = _ledger(impl, m=impl.Price(10**9, 0, 0, 500_000))
    check(_record(impl, ledger, "r", "t", "m", 10**12, 0, 0, 1), 10**15 + 1, "record(Usage(.., 10**12, 0, 0, 1)) at input 10**9, output 500,000")


@graded(1, 2, "past 2**53, every rate and the doubling stay exact")
def test_exact_integers_all_rates(impl):
    ledger = _ledger(impl, m=impl.Price(999_999_999, 333_333_333, 777_777_777, 1, long_threshold=10**12 - 1))
    u = ("r", "t", "m", 10**12, 10**11 + 7, 10**11 + 3, 10**12 - 1)
    raw = (8 * 10**11 - 10) * 999_999_999 + (10**11 + 7) * 333_333_333 + (10**11 + 3) * 777_777_777 + 10**12 - 1
    check(_record(impl, ledger, *u), (2 * raw + 500_000) // 10**6, f"record(Usage{u!r}) with rates near 10**9")


@graded(1, 1, "a model whose rates are all 0 bills 0 (an int)")
def test_free_model(impl):
    ledger = _ledger(impl, free=impl.Price(0, 0, 0, 0))
    check(_record(impl, ledger, "r", "t", "free", 50, 10, 10, 50), 0, "record on a model with all rates 0")


# --- retries ---------------------------------------------------------------------


@graded(1, 3, "a retry (same request_id, equal usage) returns the first cost and bills nothing more")
def test_retry(impl):
    ledger = _ledger(impl)
    first = _record(impl, ledger, "r", "t", "m", 5, 2, 1, 4)
    again = _record(impl, ledger, "r", "t", "m", 5, 2, 1, 4)
    check((first, again, ledger.tenant_total("t"), ledger.cache_hit_rate("m")), (9, 9, 9, Fraction(2, 5)),
          "record the same Usage twice, then tenant_total('t') and cache_hit_rate('m')")


@graded(1, 2, "a request_id recorded for one tenant conflicts when another tenant reports it")
def test_conflict_other_tenant(impl):
    ledger = _ledger(impl)
    _record(impl, ledger, "r", "t", "m", 5, 0, 0, 0)
    check_raises(lambda: _record(impl, ledger, "r", "u", "m", 5, 0, 0, 0), "request_id", "record(Usage('r', 'u', ...)) after 'r' was recorded for 't'", anywhere=True)
    check((ledger.tenant_total("t"), ledger.tenant_total("u"), ledger.top_tenants(5)), (5, 0, [("t", 5)]),
          "totals after the refused record")


@graded(1, 2, "a conflicting report with a different model changes nothing, not even the model's hit rate")
def test_conflict_other_model(impl):
    ledger = _ledger(impl, a=impl.Price(M, M, M, M), b=impl.Price(M, M, M, M))
    _record(impl, ledger, "r", "t", "a", 5, 1, 0, 0)
    check_raises(lambda: _record(impl, ledger, "r", "t", "b", 5, 1, 0, 0), "request_id", "record of 'r' on model b after model a", anywhere=True)
    check((ledger.cache_hit_rate("a"), ledger.cache_hit_rate("b")), (Fraction(1, 5), None), "cache_hit_rate('a'), cache_hit_rate('b')")


# --- statistics ------------------------------------------------------------------


@graded(1, 1, "tenant_total sums the tenant's costs; 0 for a tenant with none")
def test_tenant_total(impl):
    ledger = _ledger(impl)
    _record(impl, ledger, "a", "t", "m", 1, 0, 0, 1)
    _record(impl, ledger, "b", "t", "m", 2, 0, 0, 2)
    _record(impl, ledger, "c", "u", "m", 3, 0, 0, 0)
    check((ledger.tenant_total("t"), ledger.tenant_total("u"), ledger.tenant_total("v")), (6, 3, 0), "tenant_total of t, u, v")


@graded(1, 3, "top_tenants: largest total first, equal totals by name ascending, at most k")
def test_top_tenants_order(impl):
    ledger = _ledger(impl)
    for i, (tenant, tokens) in enumerate([("b", 5), ("c", 9), ("a", 5), ("d", 1), ("e", 5)]):
        _record(impl, ledger, f"r{i}", tenant, "m", tokens, 0, 0, 0)
    check(ledger.top_tenants(4), [("c", 9), ("a", 5), ("b", 5), ("e", 5)], "top_tenants(4)")


@graded(1, 2, "top_tenants with k above the number of tenants returns them all; k == 0 returns []")
def test_top_tenants_k_bounds(impl):
    ledger = _ledger(impl)
    _record(impl, ledger, "a", "x", "m", 1, 0, 0, 0)
    _record(impl, ledger, "b", "y", "m", 2, 0, 0, 0)
    check((ledger.top_tenants(10), ledger.top_tenants(0)), ([("y", 2), ("x", 1)], []), "top_tenants(10), top_tenants(0)")


@graded(1, 2, "a tenant whose requests cost 0 takes part in top_tenants; a tenant never recorded does not")
def test_top_tenants_zero_cost(impl):
    ledger = _ledger(impl, m=impl.Price(M, M, M, M), free=impl.Price(0, 0, 0, 0))
    _record(impl, ledger, "a", "payer", "m", 1, 0, 0, 0)
    _record(impl, ledger, "b", "freeloader", "free", 9, 0, 0, 0)
    ledger.tenant_total("ghost")
    check(ledger.top_tenants(5), [("payer", 1), ("freeloader", 0)], "top_tenants(5)")


@graded(1, 1, "top_tenants on an empty ledger is []")
def test_top_tenants_empty(impl):
    check(_ledger(impl).top_tenants(3), [], "top_tenants(3) on a new ledger")


@graded(1, 2, "cache_hit_rate: cached over input tokens, as a Fraction; written tokens are not hits")
def test_cache_hit_rate(impl):
    ledger = _ledger(impl)
    _record(impl, ledger, "a", "t", "m", 10, 4, 6, 0)
    _record(impl, ledger, "b", "u", "m", 5, 1, 0, 0)
    check_rate(ledger.cache_hit_rate("m"), Fraction(5, 15), "cache_hit_rate('m') after (10, 4 cached, 6 written), (5, 1 cached)")


@graded(1, 2, "cache_hit_rate is a Fraction even when it is 0 or 1")
def test_cache_hit_rate_zero_and_one(impl):
    ledger = _ledger(impl, a=impl.Price(M, M, M, M), b=impl.Price(M, M, M, M))
    _record(impl, ledger, "x", "t", "a", 4, 0, 0, 0)
    _record(impl, ledger, "y", "t", "b", 4, 4, 0, 0)
    check_rate(ledger.cache_hit_rate("a"), Fraction(0), "cache_hit_rate('a') with no cached tokens")
    check_rate(ledger.cache_hit_rate("b"), Fraction(1), "cache_hit_rate('b') with every token cached")


@graded(1, 2, "cache_hit_rate is None for a priced model with no requests, or only empty prompts")
def test_cache_hit_rate_none(impl):
    ledger = _ledger(impl, a=impl.Price(M, M, M, M), b=impl.Price(M, M, M, M))
    _record(impl, ledger, "x", "t", "b", 0, 0, 0, 7)
    check_rate(ledger.cache_hit_rate("a"), None, "cache_hit_rate('a') with no requests")
    check_rate(ledger.cache_hit_rate("b"), None, "cache_hit_rate('b') after only an empty prompt")


@graded(1, 1, "cache_hit_rate of a model not in the prices, or not a str, raises ValueError naming model")
@pytest.mark.parametrize("bad", ["nope", 1, None])
def test_cache_hit_rate_bad_model(impl, bad):
    ledger = _ledger(impl)
    check_raises(lambda: ledger.cache_hit_rate(bad), "model", f"cache_hit_rate({bad!r})", anywhere=True)


@graded(1, 1, "tenant_total of a tenant that is not a str raises ValueError naming tenant")
@pytest.mark.parametrize("bad", [1, None, b"t"], ids=["int", "None", "bytes"])
def test_tenant_total_bad(impl, bad):
    check_raises(lambda: _ledger(impl).tenant_total(bad), "tenant", f"tenant_total({bad!r})", anywhere=True)


@graded(1, 1, "top_tenants with k below 0 or not an int raises ValueError naming k")
@pytest.mark.parametrize("bad", [-1, True, 1.0, "1", None])
def test_top_tenants_bad_k(impl, bad):
    check_raises(lambda: _ledger(impl).top_tenants(bad), "k", f"top_tenants({bad!r})", anywhere=True)


@graded(1, 2, "past 2**53: raw 10**21 + 499,999 rounds down to 10**15 (a float rounds it up)")
def test_exact_integers_just_under_half(impl):
    ledger = _ledger(impl, m=impl.Price(10**9, 0, 0, 1))
    check(_record(impl, ledger, "r", "t", "m", 10**12, 0, 0, 499_999), 10**15,
          "record(Usage(.., 10**12, 0, 0, 499_999)) at input 10**9, output 1")
