"""Visible examples for ngram-loop-detector: run with `kata check ngram-loop-detector`."""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    d = impl.LoopDetector(n=2, window=5, threshold=2)
    assert d.feed([7, 3, 7]) == []
    assert d.feed([3, 1, 1]) == [3]
    assert d.feed([7, 3]) == []
    assert d.feed([1, 1, 1]) == [10]
    assert (d.tokens_seen, d.count([1, 1]), d.count([7, 3]), d.count([3, 7])) == (11, 2, 1, 0)


@pytest.mark.level(1)
def test_overlapping_occurrences_count(impl):
    d = impl.LoopDetector(n=2, window=10, threshold=3)
    assert d.feed([4, 4, 4, 4]) == [3]


@pytest.mark.level(1)
def test_bad_chunk_changes_nothing(impl):
    d = impl.LoopDetector(n=1, window=3, threshold=2)
    with pytest.raises(ValueError, match="^tokens"):
        d.feed([1, 2, -1])
    assert d.tokens_seen == 0


@pytest.mark.level(1)
def test_window_smaller_than_n(impl):
    with pytest.raises(ValueError, match="^window"):
        impl.LoopDetector(n=3, window=2, threshold=2)
