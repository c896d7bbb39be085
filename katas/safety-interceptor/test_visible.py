"""Visible checks: the prompt's examples and a few more. The hidden suite has many more edge cases."""

from fractions import Fraction as F

import pytest


@pytest.mark.level(1)
def test_prompt_gateway(impl):
    R, O = impl.Request, impl.Outcome
    reqs = [R("a", 0, 100, 30, False), R("b", 10, 50, 20, True), R("c", 20, 40, 200, False),
            R("d", 25, 100, 130, True), R("e", 30, 20, 5, False)]
    got = impl.run_gateway(reqs, 1)
    want = {"a": O("served", 100, None, 100), "b": O("refused", None, 30, 0), "c": O("served", 220, None, 40),
            "d": O("refused", None, 155, 15), "e": O("served", 175, None, 20)}
    assert got == want, f"run_gateway returned {got!r}."


@pytest.mark.level(1)
def test_invalid_prefill_cost(impl):
    with pytest.raises(ValueError, match="^prefill_cost"):
        impl.run_gateway([], 0)


@pytest.mark.level(2)
def test_prompt_hold_back(impl):
    s = impl.hold_back(7, 100, 10, 3, 5, None)
    assert s == impl.Stream([125, 125, 125, 155, 155, 155, 165], None, 25), f"hold_back returned {s!r}."
    s = impl.hold_back(7, 100, 10, 3, 5, 4)
    assert s == impl.Stream([125, 125, 125], 155, 25), f"hold_back(.., flag_at=4) returned {s!r}."


@pytest.mark.level(3)
def test_prompt_prefix_cache(impl):
    c = impl.TenantPrefixCache(4, {"acme": 3, "beta": 8})
    assert c.admit("acme", list(range(10))) == (0, 2)
    assert c.admit("acme", list(range(9))) == (2, 0)
    assert c.admit("beta", list(range(10))) == (0, 2)
    assert c.admit("acme", [0, 1, 2, 3, 9, 9, 9, 9, 5, 5, 5, 5]) == (1, 2)
    assert c.cached_blocks("acme") == 3


@pytest.mark.level(4)
def test_prompt_drift(impl):
    policy = impl.Policy(F(1, 2), 1, F(3, 4))
    assert impl.first_flagged_turn([F(2, 5)] * 5, policy) == 3
    assert impl.first_flagged_turn([F(1, 5)] * 500, policy) is None
    assert impl.first_flagged_turn([F(1, 5), F(3, 5)], policy) == 1
