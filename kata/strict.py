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
    same(pytest.approx(x), got) -> False   (the expected value goes second)

Rules: None, bool, numbers, str and bytes compare by the built-in types' methods (a subclass is
compared by its built-in value, never by an __eq__ of its own); numbers compare exactly by value
(int, float, complex, Fraction, Decimal, numpy's scalar numbers); lists, tuples, dicts, sets and
frozensets must be of the same kind (a subclass of the kind passes: a namedtuple is a tuple) and
are compared item by item, read with the kind's own methods; any other value must be of exactly
the same type and then `==` decides.

A kind is recognised by the type itself, never by a name its class can set: an object whose class
says its `__module__` is pytest's or numpy's is neither an approx nor a number, nor is an object
whose `__class__` or metaclass claims a built-in kind. numpy is never imported here.

Every grader's `assert A == B` is written `assert same(A, B)` (kata validate checks it).
"""

from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction
from math import gcd, isinf, isnan
from typing import cast

# Every kind this module trusts is recognised by identity (`id(type(x))` against types taken here,
# when kata.strict is imported, before any learner code loads), never by a name a class can set
# (`__module__`, `__qualname__`), by `isinstance` (which asks the object's own `__class__`) or by
# `==` between types (which a metaclass answers). Values are read with the built-in types' own
# unbound methods, never through the object's attributes.

_CONTAINERS = (list, tuple, dict, set, frozenset)
_NUMBERS = (int, float, complex, Fraction, Decimal)
_NUMBER_IDS = frozenset(id(t) for t in _NUMBERS)
_BUILTIN_NUMBER_IDS = frozenset(id(t) for t in (int, float, complex))
_NOT = object()  # "not a number" / "not a plain value"

# read a Fraction's and a Decimal's value with the methods they had at import
_numerator, _denominator = Fraction.__dict__["_numerator"], Fraction.__dict__["_denominator"]
_dec_ratio, _dec_nan, _dec_inf, _dec_signed = (
    Decimal.as_integer_ratio, Decimal.is_nan, Decimal.is_infinite, Decimal.is_signed)
_complex_real, _complex_imag = complex.__dict__["real"], complex.__dict__["imag"]


def _approx_types() -> tuple[type, ...]:
    """pytest.approx's classes, exactly (a subclass made elsewhere is not one of them)."""
    from importlib import import_module

    try:
        module = import_module("_pytest.approx")
    except ImportError:  # pragma: no cover - older pytest keeps approx in python_api
        module = import_module("_pytest.python_api")
    base = getattr(module, "Approx", None) or module.ApproxBase  # its base, by either name
    return tuple(v for v in vars(module).values() if isinstance(v, type) and issubclass(v, base))


_APPROX_TYPES = _approx_types()  # held, so that no other class can ever take one of their ids
_APPROX_IDS = frozenset(id(t) for t in _APPROX_TYPES)

# numpy's scalar number types, read from numpy itself, only once numpy is imported (a genuine
# numpy scalar implies it is): [the numpy module seen, ids of its number types, ids of its complex
# ones, numpy.generic.item]. Only types made in C count: a class made in Python is a heap type
# that can be changed, one of numpy's is static (or immutable), whatever its name says.
_numpy: list = [None, frozenset(), frozenset(), None]
_HEAPTYPE, _IMMUTABLETYPE = 1 << 9, 1 << 8


def _made_in_c(t) -> bool:
    if type(t) is not type:  # a metaclass of its own could answer anything below
        return False
    flags = t.__flags__
    return not flags & _HEAPTYPE or bool(flags & _IMMUTABLETYPE)


def _c_subclasses(t) -> list:
    found, todo = [], [t]
    while todo:
        for sub in type.__subclasses__(todo.pop()):
            if _made_in_c(sub):
                found.append(sub)
                todo.append(sub)
    return found


def _numpy_types(np) -> list:
    try:
        generic, number, cfloat = np.generic, np.number, np.complexfloating
    except Exception:  # noqa: BLE001 - not numpy after all
        return [np, frozenset(), frozenset(), None]
    if not (_made_in_c(generic) and _made_in_c(number) and _made_in_c(cfloat)
            and issubclass(number, generic) and issubclass(cfloat, number)):
        return [np, frozenset(), frozenset(), None]
    numbers = frozenset(id(t) for t in _c_subclasses(number))
    complexes = frozenset(id(t) for t in _c_subclasses(cfloat))
    return [np, numbers, complexes, type.__dict__["__dict__"].__get__(generic)["item"]]


def _numpy_value(x):
    """A numpy scalar number's value as a built-in number (_NOT for anything else)."""
    np = sys.modules.get("numpy")
    if np is None:
        return _NOT
    if np is not _numpy[0]:
        _numpy[:] = _numpy_types(np)
    t = type(x)
    if id(t) not in _numpy[1]:
        return _NOT
    value = _numpy[3](x)  # numpy.generic.item, numpy's own code: the type is numpy's
    if id(type(value)) not in _BUILTIN_NUMBER_IDS:  # a longdouble has no exact built-in twin
        value = complex(value) if id(t) in _numpy[2] else float(value)
    return value


def _builtin_number(x):
    """`x` as an int, float, complex, Fraction or Decimal (_NOT when it is not a number).

    A subclass of int, float or complex (an IntEnum, say) counts by its built-in value; a bool
    never counts.
    """
    t = type(x)
    if id(t) in _NUMBER_IDS:
        return x
    if t is bool:
        return _NOT
    if issubclass(t, int):
        return int.__index__(x)
    if issubclass(t, float):
        return float.__float__(x)
    if issubclass(t, complex):
        return complex(_complex_real.__get__(x), _complex_imag.__get__(x))
    return _numpy_value(x)


def _exact(x):
    """A plain number's value in a form only built-in comparisons read, equal exactly when the
    numbers are (as Python compares them): an int, ("ratio", n, d), ("inf", positive),
    ("complex", re, im), or a fresh object for a NaN (equal to nothing)."""
    t = type(x)
    if t is int:
        return x
    if t is float:
        if isnan(x):
            return object()
        if isinf(x):
            return ("inf", x > 0)
        return _ratio(*float.as_integer_ratio(x))
    if t is Fraction:
        n, d = _numerator.__get__(x), _denominator.__get__(x)
        if type(n) is not int or type(d) is not int or d == 0:
            return object()
        return _ratio(n, d)
    if t is Decimal:
        if _dec_nan(x):
            return object()
        if _dec_inf(x):
            return ("inf", not _dec_signed(x))
        return _ratio(*_dec_ratio(x))
    re, im = _exact(x.real), _exact(x.imag)  # a complex (an exact one: nothing else gets here)
    return re if type(im) is int and im == 0 else ("complex", re, im)


def _ratio(n: int, d: int):
    g = gcd(n, d)
    n, d = (n // g, d // g) if d > 0 else (-n // g, -d // g)
    return n if d == 1 else ("ratio", n, d)


def _number(x):
    """The exact value of a number (see _exact), or _NOT when `x` is not one."""
    value = _builtin_number(x)
    return value if value is _NOT else _exact(value)


def _plain(x):
    """A copy of `x` made only of built-in values (numbers as built-in numbers), which is what an
    approx is compared with, or _NOT: an approx asks the values it is compared with."""
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is list or t is tuple:
        items = [_plain(v) for v in x]
        return _NOT if any(v is _NOT for v in items) else t(items)
    if t is dict:
        out = {}
        for k, v in dict.items(x):
            if type(k) is not str:
                return _NOT
            out[k] = value = _plain(v)
            if value is _NOT:
                return _NOT
        return out
    return _builtin_number(x)


def same(got, expected) -> bool:
    """True when `got` and `expected` are equal values of the same kind (see the module doc)."""
    tg, te = type(got), type(expected)
    if id(te) in _APPROX_IDS:
        plain = _plain(got)
        return plain is not _NOT and bool(expected == plain)
    if id(tg) in _APPROX_IDS:
        return False  # the expected value goes second: an approx built elsewhere may allow anything
    if got is None or expected is None:
        return got is None and expected is None
    if tg is bool or te is bool:
        return tg is bool and te is bool and got is expected
    a, b = _number(got), _number(expected)
    if a is not _NOT or b is not _NOT:
        return a is not _NOT and b is not _NOT and a == b
    if issubclass(tg, str) or issubclass(te, str):
        return issubclass(tg, str) and issubclass(te, str) and str.__eq__(got, expected) is True
    if issubclass(tg, bytes) or issubclass(te, bytes):
        return issubclass(tg, bytes) and issubclass(te, bytes) and \
            bytes.__eq__(got, expected) is True
    for kind in _CONTAINERS:
        mine, theirs = issubclass(tg, kind), issubclass(te, kind)
        if mine or theirs:
            if not (mine and theirs):
                return False
            if kind is dict:
                return _same_dict(cast(dict, got), cast(dict, expected))
            if kind is set or kind is frozenset:
                return _same_set(kind, got, expected)
            # a list or a tuple, read with its kind's own methods (a subclass's are not asked)
            return kind.__len__(got) == kind.__len__(expected) and all(
                same(a, b) for a, b in zip(kind.__iter__(got), kind.__iter__(expected), strict=True))
    return tg is te and bool(got == expected)


def _same_dict(got: dict, expected: dict) -> bool:
    if dict.__len__(got) != dict.__len__(expected):
        return False
    mine = {_key(k): v for k, v in dict.items(got)}
    if len(mine) != dict.__len__(got):
        return False
    for k, v in dict.items(expected):
        value = mine.get(_key(k), _MISSING)
        if value is _MISSING or not same(value, v):
            return False
    return True


def _same_set(kind, got, expected) -> bool:
    return kind.__len__(got) == kind.__len__(expected) and \
        {_key(k) for k in kind.__iter__(got)} == {_key(k) for k in kind.__iter__(expected)}


_MISSING = object()


def _key(k):
    """A hashable stand-in for a dict key or set item that keeps its kind: True is not 1, and a
    value of any other kind only ever meets a value of its exact type."""
    t = type(k)
    if t is bool:
        return ("bool", k)
    n = _number(k)
    if n is not _NOT:
        return ("number", n)
    if issubclass(t, str):
        return ("str", str.__str__(k))
    if issubclass(t, tuple):
        return ("tuple", tuple(_key(x) for x in tuple.__iter__(k)))
    if issubclass(t, frozenset):
        return ("frozenset", frozenset(_key(x) for x in frozenset.__iter__(k)))
    return ("object", id(t), k)
