"""Visible tests for edf-admission: the prompt's example and a few more.

Run them with `kata check edf-admission`. The hidden suite checks many more cases.
"""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    J = impl.Job
    got = impl.schedule([J("A", 0, 4, 10), J("B", 1, 2, 4), J("C", 2, 3, 6), J("D", 3, 1, 3),
                         J("E", 5, 2, 12), J("F", 5, 2, 11), J("G", 6, 1, 10)])
    assert got.finish == {"A": 9, "B": 3, "C": 6, "E": 12, "G": 10}
    assert got.rejected == {"D": "too_late", "F": "overload"}


@pytest.mark.level(1)
def test_finishing_exactly_at_the_deadline_is_in_time(impl):
    J = impl.Job
    got = impl.schedule([J("a", 2, 3, 5), J("b", 2, 1, 6)])
    assert got.finish == {"a": 5, "b": 6}
    assert got.rejected == {}


@pytest.mark.level(1)
def test_empty_and_invalid(impl):
    got = impl.schedule([])
    assert (got.finish, got.rejected) == ({}, {})
    with pytest.raises(ValueError, match="duration"):
        impl.schedule([impl.Job("a", 0, 0, 5)])
    with pytest.raises(ValueError, match="duration"):  # the second job's duration before its id
        impl.schedule([impl.Job("a", 0, 1, 5), impl.Job("a", 0, 0, 5)])
