"""Type-strict equality for hidden tests: `same(got, expected)`.

`got == expected` asks `got` whether it is equal, so a learner's object that says yes to everything
passes every such assert, and `True == 1`, `1.0 == True` pass as well. `same` never asks the
learner's objects: it walks both values with the built-in types' own comparisons.

    same([1, 2], [1, 2])        -> True
    same(True, 1)               -> False   (a bool is only ever the same as a bool)
    same(5, 5.0)                -> True    (numbers compare by value, as the prompts allow)
    same(Anything(), [1, 2])    -> False   (not a list)
    same((1, "a"), [1, "a"])    -> False   (a tuple is not a list)
    same(got, pytest.approx(x)) -> approx's answer, for plain numbers only

Rules: None, bool, numbers, str and bytes compare by the built-in types' methods (a subclass is
compared by its built-in value, never by an __eq__ of its own); lists, tuples, dicts, sets and
frozensets must be of the same kind (a subclass of the kind passes: a namedtuple is a tuple) and
are compared item by item; any other value must be of exactly the same type and then `==` decides.

Every grader's `assert A == B` is written `assert same(A, B)` (kata validate checks it).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import cast

_NUMBERS = (int, float, complex, Fraction, Decimal)
_CONTAINERS = (list, tuple, dict, set, frozenset)


def _is_number(x) -> bool:
    if isinstance(x, bool):
        return False
    if type(x) in _NUMBERS or type(x).__module__ == "numpy":
        return True
    # a subclass (an IntEnum, say) counts when it keeps the built-in comparison
    return isinstance(x, (int, float)) and type(x).__eq__ in (int.__eq__, float.__eq__)


def _number_value(x):
    if type(x).__module__ == "numpy":
        return x.item()
    if isinstance(x, int) and type(x) is not int:
        return int.__index__(x)
    if isinstance(x, float) and type(x) is not float:
        return float.__float__(x)
    return x


def _is_approx(x) -> bool:
    return type(x).__module__.startswith("_pytest")


def _plain(x) -> bool:
    """Only built-in values all the way down (what an approx may be compared with)."""
    if x is None or isinstance(x, bool) or _is_number(x) or type(x) is str:
        return True
    if type(x) in (list, tuple):
        return all(_plain(v) for v in x)
    if type(x) is dict:
        return all(type(k) is str and _plain(v) for k, v in x.items())
    return False


def same(got, expected) -> bool:
    """True when `got` and `expected` are equal values of the same kind (see the module doc)."""
    if _is_approx(expected):
        return _plain(got) and expected == got
    if _is_approx(got):
        return _plain(expected) and got == expected
    if got is None or expected is None:
        return got is None and expected is None
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is bool and type(expected) is bool and got is expected
    if _is_number(got) or _is_number(expected):
        return _is_number(got) and _is_number(expected) and \
            _number_value(got) == _number_value(expected)
    if isinstance(got, str) or isinstance(expected, str):
        return isinstance(got, str) and isinstance(expected, str) and \
            str.__eq__(got, expected) is True
    if isinstance(got, bytes) or isinstance(expected, bytes):
        return isinstance(got, bytes) and isinstance(expected, bytes) and \
            bytes.__eq__(got, expected) is True
    for kind in _CONTAINERS:
        if isinstance(got, kind) or isinstance(expected, kind):
            if not (isinstance(got, kind) and isinstance(expected, kind)):
                return False
            if kind is dict:  # both are dicts (isinstance above)
                return _same_dict(cast(dict, got), cast(dict, expected))
            if kind in (set, frozenset):
                return _same_set(got, expected)
            return len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected, strict=True))
    return type(got) is type(expected) and bool(got == expected)


def _same_dict(got: dict, expected: dict) -> bool:
    if len(got) != len(expected):
        return False
    keys = {_key(k): k for k in dict.keys(got)}
    for k, v in dict.items(expected):
        mine = keys.get(_key(k), _MISSING)
        if mine is _MISSING or not same(dict.__getitem__(got, mine), v):
            return False
    return True


def _same_set(got, expected) -> bool:
    return len(got) == len(expected) and {_key(k) for k in got} == {_key(k) for k in expected}


_MISSING = object()


def _key(k):
    """A hashable stand-in for a dict key or set item that keeps its kind: True is not 1."""
    if isinstance(k, bool):
        return ("bool", bool(k))
    if _is_number(k):
        return ("number", _number_value(k))
    if isinstance(k, str):
        return ("str", str.__str__(k))
    if isinstance(k, tuple):
        return ("tuple", tuple(_key(x) for x in k))
    if isinstance(k, frozenset):
        return ("frozenset", frozenset(_key(x) for x in k))
    return (type(k), k)
