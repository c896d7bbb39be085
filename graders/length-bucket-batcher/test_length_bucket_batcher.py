"""Hidden suite for length-bucket-batcher, level 1: buckets, batches, padding, validation.

Results are compared as plain values (`_flat`), with every number required to be an `int` (a
float that equals it is a mistake), so a dataclass's own `==` never decides.
"""

import copy

import pytest
from hypothesis import example, given, strategies as st

from kata.checks import check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(80)


# --- helpers ----------------------------------------------------------------------


def _num(x):
    """An int stays itself; anything else becomes a string that no expected value equals."""
    return x if type(x) is int else f"<{type(x).__name__} {x!r}>"


def _flat(plan):
    """(batches, rejected, waste_by_bucket items in order, padding_waste) as plain values."""
    batches = [(_num(b.bucket), list(b.request_ids) if type(b.request_ids) is list else b.request_ids,
                _num(b.padded_tokens), _num(b.useful_tokens), b.reason) for b in plan.batches]
    waste = [(_num(k), _num(v)) for k, v in plan.waste_by_bucket.items()]
    return (batches, plan.rejected, waste, _num(plan.padding_waste))


def oracle(requests, boundaries, max_batch_tokens, max_batch_size):
    """Slow and plain: a linear scan for the bucket, open batches as lists of requests, every sum
    recomputed when needed. Returns _flat's shape."""
    open_batches = {}  # bucket -> list of (id, tokens)
    closed = []
    rejected = []

    def close(bucket, reason):
        members = open_batches.pop(bucket)
        closed.append((bucket, [i for i, _ in members], len(members) * bucket,
                       sum(t for _, t in members), reason))

    for r in requests:
        fits = [b for b in boundaries if b >= r.tokens]
        if not fits:
            rejected.append(r.id)
            continue
        bucket = min(fits)
        members = open_batches.get(bucket)
        if members is not None and bucket * (len(members) + 1) > max_batch_tokens:
            close(bucket, "budget")
        open_batches.setdefault(bucket, []).append((r.id, r.tokens))
        if len(open_batches[bucket]) >= max_batch_size:
            close(bucket, "full")
    for bucket in sorted(open_batches):
        close(bucket, "end")
    waste = [(b, sum(p - u for bb, _, p, u, _ in closed if bb == b)) for b in boundaries]
    return (closed, rejected, waste, sum(w for _, w in waste))


def _run(impl, spec, boundaries, max_batch_tokens, max_batch_size):
    """spec: [(id, tokens), ...]. Returns (got, want, call) for a check."""
    reqs = [impl.Request(i, t) for i, t in spec]
    got = _flat(impl.plan_buckets(reqs, boundaries, max_batch_tokens, max_batch_size))
    want = oracle(reqs, boundaries, max_batch_tokens, max_batch_size)
    call = f"plan_buckets({spec!r} as Requests, {boundaries!r}, {max_batch_tokens!r}, {max_batch_size!r})"
    return got, want, call


def _check_run(impl, spec, boundaries, max_batch_tokens, max_batch_size, expected=None):
    got, want, call = _run(impl, spec, boundaries, max_batch_tokens, max_batch_size)
    if expected is not None:
        assert same(want, expected), "grader self-check: the oracle disagrees with the stated answer"
    assert same(got, want), f"Called {call}. Returned {got!r}, expected {want!r}."
    return got


def _reqs(impl, spec):
    return [impl.Request(i, t) for i, t in spec]


EXAMPLE = [("a", 3), ("b", 7), ("c", 4), ("d", 9), ("e", 2), ("f", 8), ("g", 1), ("h", 5)]


# --- the worked example and the bucket rule ------------------------------------------------


@graded(1, 3, "the prompt's worked example, every field")
def test_prompt_example(impl):
    expected = ([(4, ["a", "c", "e"], 12, 9, "full"), (8, ["b", "f"], 16, 15, "budget"),
                 (4, ["g"], 4, 1, "end"), (8, ["h"], 8, 5, "end")], ["d"], [(4, 6), (8, 4)], 10)
    _check_run(impl, EXAMPLE, [4, 8], 16, 3, expected)


@graded(1, 2, "a request exactly a boundary's length goes to that bucket (<=), not the next")
def test_length_equal_to_boundary(impl):
    got = _check_run(impl, [("a", 4), ("b", 8)], [4, 8, 16], 64, 9)
    assert same([b[0] for b in got[0]], [4, 8])


@graded(1, 2, "one token past a boundary goes to the next bucket")
def test_length_one_past_boundary(impl):
    _check_run(impl, [("a", 5), ("b", 9)], [4, 8, 16], 64, 9,
               ([(8, ["a"], 8, 5, "end"), (16, ["b"], 16, 9, "end")], [], [(4, 0), (8, 3), (16, 7)], 10))


@graded(1, 1, "a 1-token request goes to the smallest bucket")
def test_one_token_smallest_bucket(impl):
    _check_run(impl, [("a", 1)], [3, 5], 5, 2, ([(3, ["a"], 3, 1, "end")], [], [(3, 2), (5, 0)], 2))


@graded(1, 2, "a request longer than the largest boundary is rejected; exactly the largest is not")
def test_rejected_only_past_largest(impl):
    _check_run(impl, [("a", 8), ("b", 9)], [4, 8], 16, 3,
               ([(8, ["a"], 8, 8, "end")], ["b"], [(4, 0), (8, 0)], 0))


@graded(1, 2, "a rejected request neither closes nor joins the open batch between two requests")
def test_rejected_does_not_touch_batches(impl):
    _check_run(impl, [("a", 8), ("x", 100), ("b", 7)], [8], 16, 2,
               ([(8, ["a", "b"], 16, 15, "full")], ["x"], [(8, 1)], 1))


@graded(1, 1, "several rejected ids are listed in input order")
def test_rejected_in_input_order(impl):
    got = _check_run(impl, [("z", 50), ("a", 2), ("m", 60), ("b", 70)], [4], 8, 2)
    assert same(got[1], ["z", "m", "b"])


@graded(1, 1, "every request rejected: no batches and zero waste everywhere")
def test_all_rejected(impl):
    _check_run(impl, [("a", 9), ("b", 10)], [2, 4], 4, 1, ([], ["a", "b"], [(2, 0), (4, 0)], 0))


# --- batch closing -----------------------------------------------------------------------


@graded(1, 2, "padded tokens exactly equal to max_batch_tokens still fit (> closes, = does not)")
def test_budget_equality_fits(impl):
    _check_run(impl, [("a", 1), ("b", 2), ("c", 3)], [4], 12, 9,
               ([(4, ["a", "b", "c"], 12, 6, "end")], [], [(4, 6)], 6))


@graded(1, 2, "a request that would exceed the budget closes the open batch 'budget' and opens a new one")
def test_budget_closes_before_join(impl):
    _check_run(impl, [("a", 4), ("b", 4), ("c", 1)], [4], 8, 9,
               ([(4, ["a", "b"], 8, 8, "budget"), (4, ["c"], 4, 1, "end")], [], [(4, 3)], 3))


@graded(1, 2, "the budget counts padded tokens (count * bucket), not the requests' own tokens")
def test_budget_uses_padded_tokens(impl):
    # useful 1 + 1 = 2 <= 10, but padded 2 * 8 = 16 > 10
    _check_run(impl, [("a", 1), ("b", 1)], [8], 10, 9,
               ([(8, ["a"], 8, 1, "budget"), (8, ["b"], 8, 1, "end")], [], [(8, 14)], 14))


@graded(1, 2, "a batch closes 'full' the moment it holds max_batch_size requests, not one later")
def test_full_at_exact_size(impl):
    _check_run(impl, [("a", 1), ("b", 1), ("c", 1)], [2], 100, 2,
               ([(2, ["a", "b"], 4, 2, "full"), (2, ["c"], 2, 1, "end")], [], [(2, 3)], 3))


@graded(1, 1, "max_batch_size 1: every request is its own 'full' batch, none left for 'end'")
def test_size_one(impl):
    _check_run(impl, [("a", 1), ("b", 5), ("c", 2)], [2, 8], 8, 1,
               ([(2, ["a"], 2, 1, "full"), (8, ["b"], 8, 5, "full"), (2, ["c"], 2, 2, "full")],
                [], [(2, 1), (8, 3)], 4))


@graded(1, 2, "when the budget binds before the size limit, the batch closes 'budget', not 'full'")
def test_budget_binds_before_size(impl):
    _check_run(impl, [("a", 5), ("b", 6), ("c", 6)], [6], 12, 3,
               ([(6, ["a", "b"], 12, 11, "budget"), (6, ["c"], 6, 6, "end")], [], [(6, 1)], 1))


@graded(1, 2, "max_batch_tokens equal to the largest bucket: that bucket's batches hold one request each")
def test_budget_equal_to_largest_bucket(impl):
    _check_run(impl, [("a", 7), ("b", 8), ("c", 2), ("d", 3)], [4, 8], 8, 5,
               ([(8, ["a"], 8, 7, "budget"), (4, ["c", "d"], 8, 5, "end"), (8, ["b"], 8, 8, "end")],
                [], [(4, 3), (8, 1)], 4))


@graded(1, 2, "a new batch after a close starts from zero requests and zero useful tokens")
def test_new_batch_starts_clean(impl):
    _check_run(impl, [("a", 3), ("b", 3), ("c", 2), ("d", 1), ("e", 3)], [3], 6, 5,
               ([(3, ["a", "b"], 6, 6, "budget"), (3, ["c", "d"], 6, 3, "budget"), (3, ["e"], 3, 3, "end")],
                [], [(3, 3)], 3))


@graded(1, 2, "at the end, open batches close in increasing bucket order, not the order they opened")
def test_end_in_bucket_order(impl):
    _check_run(impl, [("a", 16), ("b", 2), ("c", 7)], [2, 8, 16], 64, 9,
               ([(2, ["b"], 2, 2, "end"), (8, ["c"], 8, 7, "end"), (16, ["a"], 16, 16, "end")],
                [], [(2, 0), (8, 1), (16, 0)], 1))


@graded(1, 2, "batches are listed in the order they closed, interleaving buckets")
def test_closing_order_across_buckets(impl):
    _check_run(impl, [("a", 8), ("b", 2), ("c", 8), ("d", 2), ("e", 1), ("f", 8)], [2, 8], 16, 2,
               ([(8, ["a", "c"], 16, 16, "full"), (2, ["b", "d"], 4, 4, "full"), (2, ["e"], 2, 1, "end"),
                 (8, ["f"], 8, 8, "end")], [], [(2, 1), (8, 0)], 1))


@graded(1, 2, "a request in one bucket never closes another bucket's open batch")
def test_buckets_independent(impl):
    _check_run(impl, [("a", 2), ("b", 16), ("c", 16), ("d", 2)], [2, 16], 16, 9,
               ([(16, ["b"], 16, 16, "budget"), (2, ["a", "d"], 4, 4, "end"), (16, ["c"], 16, 16, "end")],
                [], [(2, 0), (16, 0)], 0))


# --- the report ---------------------------------------------------------------------------


@graded(1, 2, "waste_by_bucket has every boundary as a key, in increasing order, unused ones 0")
def test_waste_keys_every_boundary(impl):
    got = impl.plan_buckets(_reqs(impl, [("a", 30)]), [1, 10, 100, 1000], 1000, 3)
    keys = list(got.waste_by_bucket)
    assert same(keys, [1, 10, 100, 1000]), f"waste_by_bucket keys were {keys!r}, expected [1, 10, 100, 1000]."
    assert same([_num(v) for v in got.waste_by_bucket.values()], [0, 0, 70, 0])


@graded(1, 1, "padding_waste is the sum over all buckets")
def test_padding_waste_total(impl):
    _check_run(impl, [("a", 1), ("b", 9), ("c", 3), ("d", 14)], [4, 16], 32, 2,
               ([(4, ["a", "c"], 8, 4, "full"), (16, ["b", "d"], 32, 23, "full")], [], [(4, 4), (16, 9)], 13))


@graded(1, 1, "empty requests: no batches, no rejections, every bucket 0")
def test_empty_requests(impl):
    _check_run(impl, [], [2, 16, 64], 64, 4, ([], [], [(2, 0), (16, 0), (64, 0)], 0))


@graded(1, 1, "a single boundary")
def test_single_boundary(impl):
    _check_run(impl, [("a", 5), ("b", 1)], [5], 10, 3, ([(5, ["a", "b"], 10, 6, "end")], [], [(5, 4)], 4))


@graded(1, 2, "lengths past 2**53 are summed and multiplied exactly")
def test_huge_integers_exact(impl):
    big = 2**53
    _check_run(impl, [("a", big + 1), ("b", big + 3), ("c", 1)], [big + 3, 2**60], 2**61, 5,
               ([(big + 3, ["a", "b", "c"], 3 * (big + 3), 2 * big + 5, "end")], [],
                [(big + 3, big + 4), (2**60, 0)], big + 4))


@graded(1, 2, "the budget test is exact past 2**53: a batch one token over max_batch_tokens closes, where a float ratio rounds it to fitting")
def test_budget_exact_past_float_precision(impl):
    big = 2**53 + 1
    # 2 * big is one over the budget; (2 * big - 1) / big rounds to 2.0 as a float
    _check_run(impl, [("a", big), ("b", big)], [big], 2 * big - 1, 5,
               ([(big, ["a"], big, big, "budget"), (big, ["b"], big, big, "end")], [],
                [(big, 0)], 0))


@graded(1, 2, "every number in the result is an int, never a float")
def test_numbers_are_ints(impl):
    plan = impl.plan_buckets(_reqs(impl, EXAMPLE), [4, 8], 16, 3)
    values = [v for b in plan.batches for v in (b.bucket, b.padded_tokens, b.useful_tokens)]
    values += list(plan.waste_by_bucket) + list(plan.waste_by_bucket.values()) + [plan.padding_waste]
    wrong = [v for v in values if type(v) is not int]
    assert not wrong, f"Called plan_buckets on the prompt's example. Non-int numbers in the result: {wrong!r}."


@graded(1, 1, "the result is made of the stub's dataclasses, with lists where lists are promised")
def test_result_types(impl):
    plan = impl.plan_buckets(_reqs(impl, EXAMPLE), [4, 8], 16, 3)
    kinds = (type(plan) is impl.BucketPlan, type(plan.batches) is list,
             all(type(b) is impl.Batch and type(b.request_ids) is list for b in plan.batches),
             type(plan.rejected) is list, type(plan.waste_by_bucket) is dict)
    assert same(kinds, (True,) * 5), f"Called plan_buckets on the prompt's example. Returned {plan!r}."


@graded(1, 1, "the arguments are not modified")
def test_arguments_unchanged(impl):
    reqs = _reqs(impl, EXAMPLE)
    bounds = [4, 8]
    before = (copy.copy(reqs), list(bounds))
    got = _flat(impl.plan_buckets(reqs, bounds, 16, 3))
    assert same([r.id for r in reqs], [r.id for r in before[0]]) and same(bounds, before[1]), (
        "Called plan_buckets on the prompt's example. It changed its requests or boundaries list.")
    assert same(got, oracle(reqs, bounds, 16, 3)), (
        f"Called plan_buckets on the prompt's example. Returned {got!r}, a wrong plan.")


# --- property -----------------------------------------------------------------------------


@st.composite
def _cases(draw):
    bounds = sorted(draw(st.sets(st.integers(1, 12), min_size=1, max_size=4)))
    n = draw(st.integers(0, 14))
    tokens = draw(st.lists(st.integers(1, 14), min_size=n, max_size=n))
    spec = [(f"r{i}", t) for i, t in enumerate(tokens)]
    mbt = draw(st.integers(bounds[-1], bounds[-1] * 4))
    mbs = draw(st.integers(1, 5))
    return spec, bounds, mbt, mbs


@graded(1, 6, "random plans agree with a slow, scan-everything oracle")
@PROPERTY
@given(_cases())
@example(([("a", 3), ("b", 3)], [3], 3, 1))
@example(([("a", 1), ("b", 2), ("c", 2)], [2], 4, 2))
@example(([("a", 13), ("b", 12)], [12], 12, 3))
def test_matches_oracle(impl, case):
    spec, bounds, mbt, mbs = case
    got, want, call = _run(impl, spec, bounds, mbt, mbs)
    assert same(got, want), f"Called {call}. Returned {got!r}, expected {want!r}."


# --- invalid input ------------------------------------------------------------------------


OK = ([("a", 2)], [4], 4, 1)


@graded(1, 1, "requests that is not a list (a tuple, None) names requests")
@pytest.mark.parametrize("bad", ["tuple", None], ids=["tuple", "None"])
def test_requests_not_list(impl, bad):
    value = tuple(_reqs(impl, [("a", 2)])) if bad == "tuple" else None
    check_raises(lambda: impl.plan_buckets(value, [4], 4, 1), "requests", f"plan_buckets({value!r}, [4], 4, 1)")


@graded(1, 1, "an item that is not a Request names requests")
def test_item_not_request(impl):
    check_raises(lambda: impl.plan_buckets([("a", 2)], [4], 4, 1), "requests", "plan_buckets([('a', 2)], [4], 4, 1)")


@graded(1, 1, "an id that is not a str (int, bool, float, None) names id")
@pytest.mark.parametrize("bad", [7, True, 2.5, None], ids=["int", "bool", "float", "None"])
def test_id_not_str(impl, bad):
    check_raises(lambda: impl.plan_buckets([impl.Request(bad, 2)], [4], 4, 1), "id",
                 f"plan_buckets([Request({bad!r}, 2)], [4], 4, 1)")


@graded(1, 2, "tokens 0, negative, bool, float, None or str names tokens")
@pytest.mark.parametrize("bad", [0, -3, True, 2.0, None, "2"], ids=["zero", "negative", "bool", "float", "None", "str"])
def test_tokens_invalid(impl, bad):
    check_raises(lambda: impl.plan_buckets([impl.Request("a", bad)], [4], 4, 1), "tokens",
                 f"plan_buckets([Request('a', {bad!r})], [4], 4, 1)")


@graded(1, 1, "two requests with the same id name id")
def test_duplicate_id(impl):
    check_raises(lambda: impl.plan_buckets(_reqs(impl, [("a", 1), ("a", 2)]), [4], 4, 2), "id",
                 "plan_buckets([Request('a', 1), Request('a', 2)], [4], 4, 2)")


@graded(1, 2, "bad tokens on the third item wins over a duplicate id on the fourth")
def test_order_bad_tokens_before_later_duplicate(impl):
    reqs = _reqs(impl, [("a", 1), ("b", 1), ("c", 0), ("a", 1)])
    check_raises(lambda: impl.plan_buckets(reqs, [4], 4, 4), "tokens", "plan_buckets([a 1, b 1, c 0, a 1], [4], 4, 4)")


@graded(1, 2, "a duplicate id on the second item wins over bad tokens on the fifth")
def test_order_duplicate_before_later_bad_tokens(impl):
    reqs = _reqs(impl, [("a", 1), ("a", 1), ("c", 1), ("d", 1), ("e", -1)])
    check_raises(lambda: impl.plan_buckets(reqs, [4], 4, 4), "id",
                 "plan_buckets([a 1, a 1, c 1, d 1, e -1], [4], 4, 4)")


@graded(1, 2, "a request with both a duplicate id and bad tokens raises the tokens error: its own fields are checked before its id is compared with earlier ones")
def test_order_within_item_tokens_before_duplicate(impl):
    reqs = _reqs(impl, [("a", 1), ("a", 0)])
    check_raises(lambda: impl.plan_buckets(reqs, [4], 4, 4), "tokens", "plan_buckets([a 1, a 0], [4], 4, 4)")


@graded(1, 1, "a bad item late in a long list is still caught, and nothing is planned")
def test_bad_item_late(impl):
    reqs = _reqs(impl, [(f"r{i}", 1 + i % 4) for i in range(2000)]) + [impl.Request("late", None)]
    check_raises(lambda: impl.plan_buckets(reqs, [4], 4, 1), "tokens",
                 "plan_buckets(2,000 good requests then Request('late', None), [4], 4, 1)")


@graded(1, 2, "boundaries empty, not a list, with 0, repeated, decreasing, or a bool/float/None/str item")
@pytest.mark.parametrize("bad", [[], (4,), [0, 4], [4, 4], [8, 4], [True, 4], [2.0, 4], [None], ["4"]],
                         ids=["empty", "tuple", "zero", "repeat", "decreasing", "bool", "float", "None", "str"])
def test_boundaries_invalid(impl, bad):
    check_raises(lambda: impl.plan_buckets([impl.Request("a", 2)], bad, 16, 1), "boundaries",
                 f"plan_buckets([Request('a', 2)], {bad!r}, 16, 1)")


@graded(1, 2, "max_batch_tokens below the largest boundary, or a bool/float/None/str, names max_batch_tokens")
@pytest.mark.parametrize("bad", [7, 0, True, 8.0, None, "8"], ids=["below", "zero", "bool", "float", "None", "str"])
def test_max_batch_tokens_invalid(impl, bad):
    check_raises(lambda: impl.plan_buckets([impl.Request("a", 2)], [4, 8], bad, 1), "max_batch_tokens",
                 f"plan_buckets([Request('a', 2)], [4, 8], {bad!r}, 1)")


@graded(1, 1, "max_batch_tokens exactly the largest boundary is valid")
def test_max_batch_tokens_equal_largest_valid(impl):
    _check_run(impl, [("a", 2)], [4, 8], 8, 1, ([(4, ["a"], 4, 2, "full")], [], [(4, 2), (8, 0)], 2))


@graded(1, 2, "max_batch_size 0, negative, bool, float, None or str names max_batch_size")
@pytest.mark.parametrize("bad", [0, -1, True, 1.0, None, "1"], ids=["zero", "negative", "bool", "float", "None", "str"])
def test_max_batch_size_invalid(impl, bad):
    check_raises(lambda: impl.plan_buckets([impl.Request("a", 2)], [4], 4, bad), "max_batch_size",
                 f"plan_buckets([Request('a', 2)], [4], 4, {bad!r})")


@graded(1, 2, "validation order with two broken rules at once: requests, boundaries, max_batch_tokens, max_batch_size")
@pytest.mark.parametrize("which", ["req-bound", "req-mbt", "req-mbs", "bound-mbt", "bound-mbs", "mbt-mbs",
                                   "dup-bound", "id-tokens", "item-later-id", "reject-not-error"])
def test_validation_order_pairs(impl, which):
    bad_req = [impl.Request("a", 0)]
    dup = _reqs(impl, [("a", 1), ("a", 1)])
    good = [impl.Request("a", 1)]
    cases = {
        "req-bound": ("tokens", (bad_req, [], 4, 1)),
        "req-mbt": ("tokens", (bad_req, [4], 3, 1)),
        "req-mbs": ("tokens", (bad_req, [4], 4, 0)),
        "bound-mbt": ("boundaries", (good, [4, 2], 1, 1)),
        "bound-mbs": ("boundaries", (good, [0], 4, 0)),
        "mbt-mbs": ("max_batch_tokens", (good, [4], 2, 0)),
        "dup-bound": ("id", (dup, [4, 4], 4, 1)),
        "id-tokens": ("id", ([impl.Request(5, 0)], [4], 4, 1)),
        "item-later-id": ("requests", ([("x", 1), impl.Request(5, 1)], [4], 4, 1)),
        # a request too long for every bucket is rejected, not an error, and is checked after nothing
        "reject-not-error": ("max_batch_size", ([impl.Request("a", 99)], [4], 4, 0)),
    }
    name, args = cases[which]
    check_raises(lambda: impl.plan_buckets(*args), name, f"plan_buckets with two broken rules ({which})")


@graded(1, 1, "a tokens error does not hide behind a request that would be rejected for length")
def test_long_request_is_not_invalid(impl):
    _check_run(impl, [("a", 10**6)], [4], 4, 1, ([], ["a"], [(4, 0)], 0))
