"""Visible examples for token-latency-log: run with `kata check token-latency-log`."""

from fractions import Fraction

import pytest

EXAMPLE = [
    "100 r1 start", "130 r2 start", "160 r1 token 0", "175 r1 token 1", "150 r2 token 0",
    "190 r1 token 2", "205 r1 token 3", "210 r1 end", "199 r2 token 2", "240 r2 end",
    "170 r2 token 1", "300 r3 start", "340 r3 token 1", "360 r3 end", "150 r2 token 0",
    "400 r4 start", "390 r4 token 0", "420 r4 end", "500 r5 start", "520 r5 token 0",
    "9 r1 token  4", "510 r6 start", "515 r6 token 0", "abc r6 end", "x",
    "600 r7 start", "601 r7 token 0", "601 r7 end"]


@pytest.mark.level(1)
def test_prompt_example(impl):
    got = impl.latency_report(EXAMPLE)
    assert got == impl.LatencyReport(3, 2, 1, 1, 3, 20, 60, Fraction(15), Fraction(49, 2))


@pytest.mark.level(1)
def test_one_request(impl):
    got = impl.latency_report(["0 a start", "40 a token 0", "100 a token 3", "120 a end"])
    assert got == impl.LatencyReport(1, 0, 0, 0, 0, 40, 40, Fraction(20), Fraction(20))


@pytest.mark.level(1)
def test_empty(impl):
    assert impl.latency_report([]) == impl.LatencyReport(0, 0, 0, 0, 0, None, None, None, None)


@pytest.mark.level(1)
def test_not_a_list(impl):
    with pytest.raises(ValueError, match="^lines"):
        impl.latency_report("0 a start")
