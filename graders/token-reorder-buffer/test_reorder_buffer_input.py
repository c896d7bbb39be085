"""Hidden suite, level 1: invalid arguments, their order, the clock, and sequence numbers past 2**53."""

import pytest
from reorder_buffer_oracle import check, expect_raise

BAD_INTS = [True, 1.0, "1", None]


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("seq below 0 or not an int raises ValueError naming seq")
@pytest.mark.parametrize("bad", [-1, *BAD_INTS])
def test_bad_seq(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    expect_raise(lambda: b.push(bad, "a", 0), ValueError, "seq", f"push({bad!r}, 'a', 0)")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("a token that is not a str raises ValueError naming token")
@pytest.mark.parametrize("bad", [1, None, b"a"], ids=["int", "None", "bytes"])
def test_bad_token(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    expect_raise(lambda: b.push(0, bad, 0), ValueError, "token", f"push(0, {bad!r}, 0)")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("now below 0 or not an int raises ValueError naming now, in push and in tick")
@pytest.mark.parametrize("bad", [-1, *BAD_INTS])
def test_bad_now(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    expect_raise(lambda: b.push(0, "a", bad), ValueError, "now", f"push(0, 'a', {bad!r})")
    expect_raise(lambda: b.tick(bad), ValueError, "now", f"tick({bad!r})")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("now smaller than an earlier call's raises ValueError naming now and changes nothing")
def test_now_goes_back(impl):
    b = impl.ReorderBuffer(2, 5)
    b.push(1, "b", 10)
    expect_raise(lambda: b.push(0, "a", 9), ValueError, "now", "push(0, 'a', 9) after a call at 10")
    expect_raise(lambda: b.tick(9), ValueError, "now", "tick(9) after a call at 10")
    check(b.stats(), {"next": 0, "buffered": 1, "released": 0, "duplicates": 0, "late": 0, "lost": 0},
          "stats() after the refused calls")
    check(b.push(0, "a", 10), ["a", "b"], "push(0, 'a', 10)")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a tick that releases nothing still moves the clock: a later push or tick at an earlier now raises ValueError naming now")
def test_now_goes_back_after_idle_tick(impl):
    b = impl.ReorderBuffer(2, 5)
    check(b.tick(10), [], "tick(10) on a new buffer")
    expect_raise(lambda: b.push(0, "a", 9), ValueError, "now", "push(0, 'a', 9) after tick(10)")
    expect_raise(lambda: b.tick(9), ValueError, "now", "tick(9) after tick(10)")
    check(b.stats(), {"next": 0, "buffered": 0, "released": 0, "duplicates": 0, "late": 0, "lost": 0},
          "stats() after the refused calls")
    check(b.push(0, "a", 10), ["a"], "push(0, 'a', 10) after tick(10)")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a refused call does not move the clock: a later call at an earlier now still works")
def test_refused_call_keeps_clock(impl):
    b = impl.ReorderBuffer(2, 5)
    b.push(0, "a", 1)
    expect_raise(lambda: b.push(1, None, 100), ValueError, "token", "push(1, None, 100)")
    check(b.push(1, "b", 50), ["b"], "push(1, 'b', 50) after the refused call at 100")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("seq and token both invalid: seq is named")
def test_order_seq_token(impl):
    b = impl.ReorderBuffer(2, 5)
    expect_raise(lambda: b.push(-1, 5, 0), ValueError, "seq", "push(-1, 5, 0)")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("token and now both invalid: token is named")
def test_order_token_now(impl):
    b = impl.ReorderBuffer(2, 5)
    expect_raise(lambda: b.push(0, None, -1), ValueError, "token", "push(0, None, -1)")


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("seq invalid and now going back: seq is named")
def test_order_seq_now(impl):
    b = impl.ReorderBuffer(2, 5)
    b.tick(5)
    expect_raise(lambda: b.push(True, "a", 4), ValueError, "seq", "push(True, 'a', 4) after tick(5)")


@pytest.mark.level(1)
@pytest.mark.points(3)
@pytest.mark.timeout(5)
@pytest.mark.edge("a jump of 2**60 sequence numbers: counted exactly, without one entry per lost number")
def test_huge_jump(impl):
    b = impl.ReorderBuffer(2, 0)
    check(b.push(2**60, "x", 0), ["x"], "push(2**60, 'x', 0) with max_wait 0")
    check(b.stats(), {"next": 2**60 + 1, "buffered": 0, "released": 1, "duplicates": 0, "late": 0, "lost": 2**60},
          "stats()")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.timeout(5)
@pytest.mark.edge("inside a lost stretch of 2**60 numbers every seq is late; the first after it is a duplicate")
def test_huge_jump_late(impl):
    b = impl.ReorderBuffer(2, 0)
    b.push(2**60, "x", 0)
    for seq in (0, 2**53 + 1, 2**60 - 1, 2**60):
        b.push(seq, "y", 1)
    check(b.stats()["late"], 3, "stats()['late'] after pushing 0, 2**53 + 1, 2**60 - 1, 2**60")
    check(b.stats()["duplicates"], 1, "stats()['duplicates']")


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("many separate lost stretches: late and duplicate tokens are told apart in each")
def test_many_lost_stretches(impl):
    b = impl.ReorderBuffer(3, 0)
    for k in range(1, 40):
        b.push(3 * k, "t", k)          # 0, 1, 2 lost first; then 3k - 2 and 3k - 1 each time
    late = [seq for seq in range(0, 117) if seq % 3 != 0 or seq == 0]
    for seq in range(0, 117):
        b.push(seq, "again", 50)
    got = b.stats()
    check((got["late"], got["duplicates"]), (len(late), 117 - len(late)), "late and duplicate counts after re-pushing 0..116")
