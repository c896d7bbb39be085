"""Hidden suite, level 1: invalid prices and usages, the order of the checks, and refused calls
that must change nothing."""

from fractions import Fraction

import pytest
from cost_ledger_oracle import check

from kata.checks import check_raises, graded

M = 1_000_000
BAD_INTS = [-1, True, 1.0, "1", None]
FIELDS = ["request_id", "tenant", "model", "input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"]


def _ledger(impl):
    return impl.Ledger({"m": impl.Price(M, M, M, M)})


def _usage(impl, **changes):
    fields = {"request_id": "r", "tenant": "t", "model": "m", "input_tokens": 5, "cached_tokens": 1,
              "cache_write_tokens": 1, "output_tokens": 2}
    fields.update(changes)
    return impl.Usage(**fields)


def _refused(impl, word, **changes):
    ledger = _ledger(impl)
    check_raises(lambda: ledger.record(_usage(impl, **changes)), word, f"record(Usage with {changes!r})", anywhere=True)
    check((ledger.tenant_total("t"), ledger.top_tenants(3), ledger.cache_hit_rate("m")), (0, [], None),
          f"statistics after the refused record(Usage with {changes!r})")


# --- prices ----------------------------------------------------------------------


@graded(1, 1, "prices that is not a dict, or maps a non-str or to a non-Price, raises ValueError naming prices")
@pytest.mark.parametrize("which", ["list", "None", "int key", "tuple value"])
def test_bad_prices(impl, which):
    bad = {"list": [], "None": None, "int key": {1: impl.Price(0, 0, 0, 0)}, "tuple value": {"m": (0, 0, 0, 0)}}[which]
    check_raises(lambda: impl.Ledger(bad), "prices", f"Ledger({bad!r})", anywhere=True)


@graded(1, 1, "a Price rate below 0 or not an int raises ValueError naming that field")
@pytest.mark.parametrize("field", ["input", "cached_input", "cache_write", "output"])
@pytest.mark.parametrize("bad", BAD_INTS)
def test_bad_rate(impl, field, bad):
    rates = {"input": 1, "cached_input": 1, "cache_write": 1, "output": 1, field: bad}
    check_raises(lambda: impl.Ledger({"m": impl.Price(**rates)}), field, f"Ledger({{'m': Price(**{rates!r})}})", anywhere=True)


@graded(1, 1, "long_threshold below 0 or not an int (None aside) raises ValueError naming long_threshold")
@pytest.mark.parametrize("bad", [-1, True, 2.0, "3"])
def test_bad_threshold(impl, bad):
    check_raises(lambda: impl.Ledger({"m": impl.Price(1, 1, 1, 1, bad)}), "long_threshold", f"Ledger({{'m': Price(1, 1, 1, 1, {bad!r})}})", anywhere=True)


@graded(1, 1, "every entry's key and value are checked before any Price's fields")
def test_prices_order_entries_first(impl):
    bad = {"a": impl.Price(-1, 0, 0, 0), "b": "not a price"}
    check_raises(lambda: impl.Ledger(bad), "prices", "Ledger({'a': Price(-1, ...), 'b': 'not a price'})", anywhere=True)


PRICE_FIELDS = ["input", "cached_input", "cache_write", "output", "long_threshold"]


@graded(1, 1, "a single Price with two bad fields names the earlier one (input, cached_input, cache_write, output, long_threshold)")
@pytest.mark.parametrize("first", range(4))
def test_prices_order_within_one_price(impl, first):
    a, b = PRICE_FIELDS[first], PRICE_FIELDS[first + 1]
    fields = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "long_threshold": None, a: -1, b: -1}
    call = f"Ledger({{'m': Price(**{fields!r})}})"
    check_raises(lambda: impl.Ledger({"m": impl.Price(**fields)}), a, call, anywhere=True)
    try:
        impl.Ledger({"m": impl.Price(**fields)})
    except ValueError as exc:  # "input" is inside "cached_input": the later name must be absent
        assert b not in str(exc), f"Called {call}. Raised ValueError({str(exc)!r}), expected it to name {a!r}, not {b!r}."


@graded(1, 1, "Prices are checked in the dict's order, fields in order: the first model's output before the second's input")
def test_prices_order_fields(impl):
    bad = {"a": impl.Price(0, 0, 0, -1, -1), "b": impl.Price(-1, 0, 0, 0)}
    check_raises(lambda: impl.Ledger(bad), "output", "Ledger({'a': Price(0, 0, 0, -1, -1), 'b': Price(-1, 0, 0, 0)})", anywhere=True)


@graded(1, 1, "an empty prices dict is valid; every model is then unknown")
def test_empty_prices(impl):
    ledger = impl.Ledger({})
    check_raises(lambda: ledger.record(_usage(impl)), "model", "record(...) on Ledger({})", anywhere=True)
    check(ledger.top_tenants(1), [], "top_tenants(1) on Ledger({})")


@graded(1, 2, "the ledger keeps its own copy of prices: the caller's later changes to the dict change nothing")
def test_prices_copied(impl):
    prices = {"m": impl.Price(M, M, M, M)}
    ledger = impl.Ledger(prices)
    prices["m"] = impl.Price(0, 0, 0, 0)
    prices["new"] = impl.Price(0, 0, 0, 0)
    check(ledger.record(_usage(impl)), 7, "record(...) after the caller replaced prices['m']")
    check_raises(lambda: ledger.record(_usage(impl, request_id="s", model="new")), "model", "record on a model the caller added after construction", anywhere=True)


# --- usage -----------------------------------------------------------------------


@graded(1, 1, "record of something that is not a Usage raises ValueError naming usage")
@pytest.mark.parametrize("bad", [None, ("r", "t", "m", 1, 0, 0, 0)], ids=["None", "tuple"])
def test_not_a_usage(impl, bad):
    check_raises(lambda: _ledger(impl).record(bad), "usage", f"record({bad!r})", anywhere=True)


@graded(1, 1, "request_id, tenant or model that is not a str raises ValueError naming it")
@pytest.mark.parametrize("field", ["request_id", "tenant", "model"])
@pytest.mark.parametrize("bad", [1, None])
def test_bad_names(impl, field, bad):
    _refused(impl, field, **{field: bad})


@graded(1, 1, "a model that is not in the prices raises ValueError naming model")
def test_unknown_model(impl):
    _refused(impl, "model", model="M")


@graded(1, 1, "a token count below 0 or not an int raises ValueError naming that field")
@pytest.mark.parametrize("field", ["input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"])
@pytest.mark.parametrize("bad", BAD_INTS)
def test_bad_counts(impl, field, bad):
    _refused(impl, field, **{field: bad})


@graded(1, 2, "cached + written tokens above input_tokens raises ValueError naming cached_tokens; equal is valid")
def test_cached_plus_written(impl):
    _refused(impl, "cached_tokens", input_tokens=5, cached_tokens=3, cache_write_tokens=3)
    check(_ledger(impl).record(_usage(impl, input_tokens=5, cached_tokens=2, cache_write_tokens=3)), 7,
          "record(Usage(.., 5, 2, 3, 2)): cached + written == input")


@graded(1, 1, "order: each field before the next (request_id, tenant, model, the four counts)")
@pytest.mark.parametrize("first", range(6))
def test_order_consecutive_fields(impl, first):
    bad_values = {"request_id": 1, "tenant": 1, "model": 1, "input_tokens": -1, "cached_tokens": -1,
                  "cache_write_tokens": -1, "output_tokens": -1}
    a, b = FIELDS[first], FIELDS[first + 1]
    _refused(impl, a, **{a: bad_values[a], b: bad_values[b]})


@graded(1, 1, "order: an unknown model before a bad input_tokens")
def test_order_unknown_model_first(impl):
    _refused(impl, "model", model="nope", input_tokens=True)


@graded(1, 1, "order: a bad output_tokens before cached + written above input")
def test_order_field_before_sum(impl):
    _refused(impl, "output_tokens", input_tokens=1, cached_tokens=1, cache_write_tokens=1, output_tokens=None)


@graded(1, 2, "order: a bad field on a conflicting request_id is reported as the field; cached + written before the conflict")
def test_order_fields_before_conflict(impl):
    ledger = _ledger(impl)
    ledger.record(_usage(impl))
    check_raises(lambda: ledger.record(_usage(impl, output_tokens=2.0)), "output_tokens", "record of the recorded 'r' with output_tokens 2.0", anywhere=True)
    check_raises(lambda: ledger.record(_usage(impl, cached_tokens=5)), "cached_tokens", "record of the recorded 'r' with cached_tokens 5 > input", anywhere=True)


@graded(1, 2, "a refused record reserves nothing: the request_id can be recorded afterwards")
def test_refused_reserves_nothing(impl):
    ledger = _ledger(impl)
    check_raises(lambda: ledger.record(_usage(impl, cached_tokens=9)), "cached_tokens", "record with cached_tokens 9", anywhere=True)
    check(ledger.record(_usage(impl, output_tokens=3)), 8, "record of 'r' after its refused first attempt")
    check(ledger.cache_hit_rate("m"), Fraction(1, 5), "cache_hit_rate('m')")
