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


# --- values that pass for a trusted kind by name, by `__class__` or by a metaclass ------------------


def _forged(module: str):
    """A class that names itself after `module` and says yes to every comparison."""
    return type("Forged", (), {"__module__": module, "__eq__": lambda self, other: True,
                               "__ne__": lambda self, other: False, "__hash__": object.__hash__,
                               "item": lambda self: Anything()})


class _SaysEqualTypes(type):
    def __eq__(cls, other):
        return True

    __hash__ = type.__hash__


class _TypeSaysEqual(metaclass=_SaysEqualTypes):
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _ClaimsToBeAList:
    """Says it is a list (isinstance asks `__class__`) and hands back the caller's expected items."""

    @property
    def __class__(self):
        return list

    def _expected(self):
        import sys

        frame = sys._getframe(2)
        return frame.f_locals.get("expected", [])

    def __len__(self):
        return len(self._expected())

    def __iter__(self):
        return iter(self._expected())


class _ListThatReadsTheExpected(list):
    def __len__(self):
        import sys

        return len(sys._getframe(1).f_locals.get("expected", []))

    def __iter__(self):
        import sys

        return iter(sys._getframe(1).f_locals.get("expected", []))


@pytest.mark.parametrize("module", ["_pytest.python_api", "_pytest.approx", "numpy"])
@pytest.mark.parametrize("expected", [[1, 2], 3, "x", {"a": 1}, 0.5])
def test_a_class_named_after_a_trusted_module_is_not_trusted(module, expected):
    assert not same(_forged(module)(), expected)


@pytest.mark.parametrize("expected", [3, 0.5, [1], "x"])
def test_a_subclass_of_approx_is_not_an_approx(expected):
    class Approving(type(pytest.approx(0))):  # type: ignore[misc]
        def __eq__(self, other):
            return True

    assert not same(object.__new__(Approving), expected)


def test_an_approx_is_trusted_only_as_the_expected_value():
    assert not same(pytest.approx(0, abs=float("inf")), 3)  # one the code under test built
    assert same(3.0000000001, pytest.approx(3))


@pytest.mark.parametrize("expected", [3, 0.5, "x", [1, 2]])
def test_a_metaclass_that_says_types_are_equal_is_not_asked(expected):
    assert not same(_TypeSaysEqual(), expected)
    assert not same([_TypeSaysEqual()], [expected])
    assert not same({_TypeSaysEqual()}, {3})


def test_a_claimed_class_or_a_subclass_that_reads_the_expected_value_is_not_asked():
    assert not same(_ClaimsToBeAList(), [1, 2, 3])
    assert not same(_ListThatReadsTheExpected(), [1, 2, 3])
    assert same(_ListThatReadsTheExpected([1, 2, 3]), [1, 2, 3])  # its list value, read as a list's


def test_a_number_subclass_is_compared_by_its_built_in_value():
    class LyingInt(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    assert same(LyingInt(3), 3) and not same(LyingInt(3), 4)
    assert not same(LyingInt(3), "3") and not same(LyingInt(1), True)


def test_a_fraction_is_read_by_its_value_not_by_its_class_methods(monkeypatch):
    monkeypatch.setattr(Fraction, "__eq__", lambda self, other: True)
    assert not same(Fraction(0), Fraction(1, 2)) and not same(Fraction(1, 3), 0.5)
    assert same(Fraction(1, 2), 0.5) and same(Fraction(4, 2), 2)


def test_numbers_compare_exactly_across_kinds():
    from decimal import Decimal

    assert same(Decimal("0.5"), Fraction(1, 2)) and same(Decimal("2"), 2.0) and same(2 + 0j, 2)
    assert not same(Decimal("0.1"), 0.1) and not same(float("nan"), float("nan"))
    assert not same(Decimal("NaN"), Decimal("NaN")) and same(float("inf"), Decimal("Infinity"))
    assert same({1: "a", 0.5: "b"}, {1.0: "a", Fraction(1, 2): "b"})


def test_numpy_scalars_are_numbers_by_their_own_type():
    np = pytest.importorskip("numpy")
    assert same(np.int64(3), 3) and same(np.float32(0.5), Fraction(1, 2))
    assert same(np.float64(0.1) + 0.2, pytest.approx(0.3)) and same([np.int8(1)], pytest.approx([1]))
    assert same(np.complex128(2), 2) and not same(np.int64(3), 4)
    assert not same(np.bool_(True), 1)  # a numpy bool is no more a number than a bool is

    class Float(np.float64):  # a subclass made in Python: its float value, not its own answers
        def __eq__(self, other):
            return True

        def item(self):
            return Anything()

    assert same(Float(0.5), 0.5) and not same(Float(0.5), 3)


def test_a_module_posing_as_numpy_is_not_trusted(monkeypatch):
    import types

    fake = types.ModuleType("numpy")
    fake.generic = type("generic", (), {"item": lambda self: 3})
    fake.number = type("number", (fake.generic,), {})
    fake.complexfloating = type("complexfloating", (fake.number,), {})
    scalar = type("int64", (fake.number,), {"__module__": "numpy", "__eq__": lambda s, o: True,
                                            "__hash__": object.__hash__})
    monkeypatch.setitem(__import__("sys").modules, "numpy", fake)
    assert not same(scalar(), 3)


def test_same_does_not_import_numpy():
    import subprocess
    import sys

    code = ("import sys, kata.strict as s; s.same([1, 2.0], [1, 2]); s.same(object(), 3); "
            "s.same(0.1, __import__('pytest').approx(0.1)); print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
