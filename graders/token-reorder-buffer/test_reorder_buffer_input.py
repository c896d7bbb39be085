"""Hidden suite, level 1: invalid arguments, their order, the clock, and sequence numbers past 2**53."""

import pytest
from reorder_buffer_oracle import check

from kata.checks import check_raises, graded

BAD_INTS = [True, 1.0, "1", None]


@graded(1, 1, "seq below 0 or not an int raises ValueError naming seq")
@pytest.mark.parametrize("bad", [-1, *BAD_INTS])
def test_bad_seq(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    check_raises(lambda: b.push(bad, "a", 0), "seq", f"push({bad!r}, 'a', 0)", anywhere=True)


@graded(1, 1, "a token that is not a str raises ValueError naming token")
@pytest.mark.parametrize("bad", [1, None, b"a"], ids=["int", "None", "bytes"])
def test_bad_token(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    check_raises(lambda: b.push(0, bad, 0), "token", f"push(0, {bad!r}, 0)", anywhere=True)


@graded(1, 1, "now below 0 or not an int raises ValueError naming now, in push and in tick")
@pytest.mark.parametrize("bad", [-1, *BAD_INTS])
def test_bad_now(impl, bad):
    b = impl.ReorderBuffer(2, 5)
    check_raises(lambda: b.push(0, "a", bad), "now", f"push(0, 'a', {bad!r})", anywhere=True)
    check_raises(lambda: b.tick(bad), "now", f"tick({bad!r})", anywhere=True)


@graded(1, 2, "now smaller than an earlier call's raises ValueError naming now and changes nothing")
def test_now_goes_back(impl):
    b = impl.ReorderBuffer(2, 5)
    b.push(1, "b", 10)
    check_raises(lambda: b.push(0, "a", 9), "now", "push(0, 'a', 9) after a call at 10", anywhere=True)
    check_raises(lambda: b.tick(9), "now", "tick(9) after a call at 10", anywhere=True)
    check(b.stats(), {"next": 0, "buffered": 1, "released": 0, "duplicates": 0, "late": 0, "lost": 0},
          "stats() after the refused calls")
    check(b.push(0, "a", 10), ["a", "b"], "push(0, 'a', 10)")


@graded(1, 2, "a tick that releases nothing still moves the clock: a later push or tick at an earlier now raises ValueError naming now")
def test_now_goes_back_after_idle_tick(impl):
    b = impl.ReorderBuffer(2, 5)
    check(b.tick(10), [], "tick(10) on a new buffer")
    check_raises(lambda: b.push(0, "a", 9), "now", "push(0, 'a', 9) after tick(10)", anywhere=True)
    check_raises(lambda: b.tick(9), "now", "tick(9) after tick(10)", anywhere=True)
    check(b.stats(), {"next": 0, "buffered": 0, "released": 0, "duplicates": 0, "late": 0, "lost": 0},
          "stats() after the refused calls")
    check(b.push(0, "a", 10), ["a"], "push(0, 'a', 10) after tick(10)")


@graded(1, 2, "a refused call does not move the clock: a later call at an earlier now still works")
def test_refused_call_keeps_clock(impl):
    b = impl.ReorderBuffer(2, 5)
    b.push(0, "a", 1)
    check_raises(lambda: b.push(1, None, 100), "token", "push(1, None, 100)", anywhere=True)
    check(b.push(1, "b", 50), ["b"], "push(1, 'b', 50) after the refused call at 100")


@graded(1, 1, "seq and token both invalid: seq is named")
def test_order_seq_token(impl):
    b = impl.ReorderBuffer(2, 5)
    check_raises(lambda: b.push(-1, 5, 0), "seq", "push(-1, 5, 0)", anywhere=True)


@graded(1, 1, "token and now both invalid: token is named")
def test_order_token_now(impl):
    b = impl.ReorderBuffer(2, 5)
    check_raises(lambda: b.push(0, None, -1), "token", "push(0, None, -1)", anywhere=True)


@graded(1, 1, "seq invalid and now going back: seq is named")
def test_order_seq_now(impl):
    b = impl.ReorderBuffer(2, 5)
    b.tick(5)
    check_raises(lambda: b.push(True, "a", 4), "seq", "push(True, 'a', 4) after tick(5)", anywhere=True)


@graded(1, 3, "a jump of 2**60 sequence numbers: counted exactly, without one entry per lost number")
@pytest.mark.timeout(5)
def test_huge_jump(impl):
    b = impl.ReorderBuffer(2, 0)
    check(b.push(2**60, "x", 0), ["x"], "push(2**60, 'x', 0) with max_wait 0")
    check(b.stats(), {"next": 2**60 + 1, "buffered": 0, "released": 1, "duplicates": 0, "late": 0, "lost": 2**60},
          "stats()")


@graded(1, 2, "inside a lost stretch of 2**60 numbers every seq is late; the first after it is a duplicate")
@pytest.mark.timeout(5)
def test_huge_jump_late(impl):
    b = impl.ReorderBuffer(2, 0)
    b.push(2**60, "x", 0)
    for seq in (0, 2**53 + 1, 2**60 - 1, 2**60):
        b.push(seq, "y", 1)
    check(b.stats()["late"], 3, "stats()['late'] after pushing 0, 2**53 + 1, 2**60 - 1, 2**60")
    check(b.stats()["duplicates"], 1, "stats()['duplicates']")


@graded(1, 2, "many separate lost stretches: late and duplicate tokens are told apart in each")
def test_many_lost_stretches(impl):
    b = impl.ReorderBuffer(3, 0)
    for k in range(1, 40):
        b.push(3 * k, "t", k)          # 0, 1, 2 lost first; then 3k - 2 and 3k - 1 each time
    late = [seq for seq in range(0, 117) if seq % 3 != 0 or seq == 0]
    for seq in range(0, 117):
        b.push(seq, "again", 50)
    got = b.stats()
    check((got["late"], got["duplicates"]), (len(late), 117 - len(late)), "late and duplicate counts after re-pushing 0..116")
