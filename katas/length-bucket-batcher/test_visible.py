"""Visible examples for length-bucket-batcher: run with `kata check length-bucket-batcher`."""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    R, B = impl.Request, impl.Batch
    got = impl.plan_buckets([R("a", 3), R("b", 7), R("c", 4), R("d", 9), R("e", 2), R("f", 8),
                             R("g", 1), R("h", 5)], [4, 8], 16, 3)
    assert got.batches == [B(4, ["a", "c", "e"], 12, 9, "full"), B(8, ["b", "f"], 16, 15, "budget"),
                           B(4, ["g"], 4, 1, "end"), B(8, ["h"], 8, 5, "end")]
    assert got.rejected == ["d"]
    assert got.waste_by_bucket == {4: 6, 8: 4}
    assert got.padding_waste == 10


@pytest.mark.level(1)
def test_empty_input_lists_every_bucket(impl):
    got = impl.plan_buckets([], [2, 16, 64], 64, 4)
    assert got == impl.BucketPlan([], [], {2: 0, 16: 0, 64: 0}, 0)


@pytest.mark.level(1)
def test_equal_to_budget_fits(impl):
    R = impl.Request
    got = impl.plan_buckets([R("a", 8), R("b", 8)], [8], 16, 10)
    assert [b.request_ids for b in got.batches] == [["a", "b"]]


@pytest.mark.level(1)
def test_bad_tokens_named(impl):
    with pytest.raises(ValueError, match="tokens"):
        impl.plan_buckets([impl.Request("a", 0)], [4], 4, 1)
