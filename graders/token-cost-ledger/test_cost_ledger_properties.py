"""Hidden suite, level 1: random usage streams against the slow oracle, and the timed workload."""

import random

import pytest
from cost_ledger_oracle import SLOW_HINT, OracleLedger, check, check_rate, reference
from hypothesis import example, given
from hypothesis import strategies as st

from kata.checks import check_speed, graded, property_settings

PROPERTY = property_settings(50)
RATE = st.sampled_from([0, 1, 250_000, 499_999, 500_000, 1_000_000, 1_500_000, 3_333_333, 10**9])
PRICE = st.tuples(RATE, RATE, RATE, RATE, st.sampled_from([None, 0, 3, 8, 20]))


@st.composite
def usages(draw):
    inp = draw(st.integers(0, 30))
    cached = draw(st.integers(0, inp))
    written = draw(st.integers(0, inp - cached))
    return (draw(st.sampled_from(["r0", "r1", "r2", "r3", "r4", "r5"])), draw(st.sampled_from(["t1", "t2", "t3", "u"])),
            draw(st.sampled_from(["a", "b"])), inp, cached, written, draw(st.integers(0, 30)))


@graded(1, 8, "random usage streams (retries, conflicts, rounding, thresholds) match a slow oracle, statistics included")
@PROPERTY
@given(price_a=PRICE, price_b=PRICE, stream=st.lists(usages(), max_size=14))
@example(price_a=(500_000, 0, 0, 0, None), price_b=(250_000, 0, 0, 0, 0),
         stream=[("r0", "t1", "a", 5, 0, 0, 0), ("r1", "t2", "b", 1, 0, 0, 0), ("r0", "t1", "a", 5, 0, 0, 0)])
def test_matches_oracle(impl, price_a, price_b, stream):
    prices = {"a": impl.Price(*price_a), "b": impl.Price(*price_b)}
    ledger, oracle = impl.Ledger(prices), OracleLedger(prices)
    log = [f"Ledger(a=Price{price_a}, b=Price{price_b})"]
    for fields in stream:
        log.append(f"record(Usage{fields!r})")
        try:
            want = oracle.record(impl.Usage(*fields))
        except ValueError:
            want = "ValueError"
        try:
            got = ledger.record(impl.Usage(*fields))
        except ValueError:
            got = "ValueError"
        check(got, want, "; ".join(log[-8:]))
    call = "; ".join(log[-8:])
    for tenant in ("t1", "t2", "t3", "u", "none"):
        check(ledger.tenant_total(tenant), oracle.tenant_total(tenant), f"{call}; tenant_total({tenant!r})")
    for k in (0, 1, 2, 5):
        check(ledger.top_tenants(k), oracle.top_tenants(k), f"{call}; top_tenants({k})")
    for model in ("a", "b"):
        check_rate(ledger.cache_hit_rate(model), oracle.cache_hit_rate(model), f"{call}; cache_hit_rate({model!r})")


# --- the timed workload ----------------------------------------------------------

RECORDS, TENANTS, MODELS = 20_000, 2_000, 20


def _replay(module):
    rng = random.Random(2026)
    prices = {f"m{i}": module.Price(rng.randint(0, 10**7), rng.randint(0, 10**6), rng.randint(0, 10**7),
                                    rng.randint(0, 10**8), rng.choice([None, 5_000, 100_000])) for i in range(MODELS)}
    ledger = module.Ledger(prices)
    acc = 0
    for i in range(RECORDS):
        inp = rng.randint(0, 200_000)
        cached = rng.randint(0, inp)
        tenant, model = f"t{rng.randrange(TENANTS)}", f"m{rng.randrange(MODELS)}"
        rid = f"r{i - 1}" if i and rng.random() < 0.05 else f"r{i}"
        try:
            acc += ledger.record(module.Usage(rid, tenant, model, inp, cached, rng.randint(0, inp - cached),
                                              rng.randint(0, 4000)))
        except ValueError:
            acc += 1
        acc += ledger.tenant_total(tenant)
        rate = ledger.cache_hit_rate(model)
        acc += 0 if rate is None else rate.numerator % 1000
        if i % 200 == 0:
            acc += sum(total for _, total in ledger.top_tenants(10))
    return acc, ledger.top_tenants(10)


@graded(1, 5, "20,000 records over 2,000 tenants with lookups after each: within 10x of the reference (running totals)")
@pytest.mark.complexity
@pytest.mark.timeout(60)
def test_large_stream_speed(impl):
    check_speed("20,000 record + tenant_total + cache_hit_rate calls", lambda: _replay(impl),
                lambda: _replay(reference()), hint=SLOW_HINT)
