"""kata.strict.same: equality that never asks the learner's objects."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from enum import IntEnum
from fractions import Fraction

import pytest

from kata.strict import same


class Anything:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class LyingList(list):
    def __eq__(self, other):
        return True

    __hash__ = None


class LyingStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class Level(IntEnum):
    ONE = 1


Pair = namedtuple("Pair", "a b")


@pytest.mark.parametrize("got, expected", [
    ([1, 2], [1, 2]), ((1, "a"), (1, "a")), ({"a": [1, (2, 3)]}, {"a": [1, (2, 3)]}),
    (5, 5.0), (5.0, 5), (Fraction(1, 2), 0.5), (True, True), (None, None), ("x", "x"),
    (OrderedDict(a=1), {"a": 1}), (Pair(1, 2), (1, 2)), (Level.ONE, 1), ({1, 2}, {2, 1}),
    (frozenset({"a"}), frozenset({"a"})), (0.1 + 0.2, pytest.approx(0.3)),
    ([0.1 + 0.2], pytest.approx([0.3])), (2**60 + 1, 2**60 + 1),
])
def test_equal_values_of_the_same_kind_are_the_same(got, expected):
    assert same(got, expected)


@pytest.mark.parametrize("got, expected", [
    (True, 1), (1, True), (False, 0), (0.0, False), (None, 0), (None, []), ([], None),
    (Anything(), [1, 2]), (Anything(), 3), (Anything(), "x"), (Anything(), None),
    (LyingList([9]), [1, 2]), (LyingStr("no"), "yes"), ((1, 2), [1, 2]), ([1, 2], (1, 2)),
    ({"a": True}, {"a": 1}), ({1: "x"}, {True: "x"}), ({True}, {1}), ("1", 1), (b"a", "a"),
    ([1, 2], [1, 2, 3]), ({"a": 1}, {"b": 1}), (2**60 + 1, float(2**60 + 1)),
    (Anything(), pytest.approx(3.0)),
])
def test_different_values_or_kinds_are_not(got, expected):
    assert not same(got, expected)


def test_every_graders_equality_assert_uses_same():
    from pathlib import Path

    from kata.validate import plain_equality_asserts

    root = Path(__file__).resolve().parent.parent / "graders"
    plain = [f"{d.name}/{where}" for d in sorted(root.iterdir()) if d.is_dir()
             for where in plain_equality_asserts(d)]
    assert not plain, f"use `assert same(got, expected)` in graders: {plain[:5]}"


def test_validate_names_a_plain_equality_assert(tmp_path):
    from kata.validate import plain_equality_asserts

    (tmp_path / "test_x.py").write_text("def test_a(impl):\n    assert 1 == 1\n\n"
                                       "def test_b(impl):\n    assert same(1, 1)\n")
    assert plain_equality_asserts(tmp_path) == ["test_x.py:2"]
