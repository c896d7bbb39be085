"""Hidden suite, level 1: placing, releasing, capacity and timeout skips, close, invalid input."""

import pytest
from reorder_buffer_oracle import check

from kata.checks import check_raises, graded

BAD_INTS = [True, 1.0, "1", None]


def _stats(**changes):
    base = {"next": 0, "buffered": 0, "released": 0, "duplicates": 0, "late": 0, "lost": 0}
    base.update(changes)
    return base


def _feed(b, calls):
    """Run (seq, token, now) pushes; returns what each returned."""
    return [b.push(*call) for call in calls]


# --- constructor and stats -------------------------------------------------------


@graded(1, 2, "a new buffer's stats are all zero, with exactly the six keys")
def test_new_stats(impl):
    check(impl.ReorderBuffer(2, 3).stats(), _stats(), "ReorderBuffer(2, 3).stats()")


@graded(1, 1, "stats returns a new dict each call: changing it changes nothing")
def test_stats_copy(impl):
    b = impl.ReorderBuffer(2, 3)
    b.stats()["next"] = 99
    b.stats().clear()
    check(b.stats(), _stats(), "stats() after the caller changed earlier results")


@graded(1, 1, "capacity below 1 or not an int raises ValueError naming capacity")
@pytest.mark.parametrize("bad", [0, -1, *BAD_INTS])
def test_bad_capacity(impl, bad):
    check_raises(lambda: impl.ReorderBuffer(bad, 3), "capacity", f"ReorderBuffer({bad!r}, 3)", anywhere=True)


@graded(1, 1, "max_wait below 0 or not an int raises ValueError naming max_wait")
@pytest.mark.parametrize("bad", [-1, *BAD_INTS])
def test_bad_max_wait(impl, bad):
    check_raises(lambda: impl.ReorderBuffer(3, bad), "max_wait", f"ReorderBuffer(3, {bad!r})", anywhere=True)


@graded(1, 1, "capacity and max_wait both invalid: capacity is named")
def test_constructor_order(impl):
    check_raises(lambda: impl.ReorderBuffer(0, -1), "capacity", "ReorderBuffer(0, -1)", anywhere=True)


# --- placing and releasing -------------------------------------------------------


@graded(1, 2, "tokens arriving in order pass straight through")
def test_in_order(impl):
    b = impl.ReorderBuffer(2, 10)
    check(_feed(b, [(0, "a", 0), (1, "b", 0), (2, "c", 1)]), [["a"], ["b"], ["c"]], "push 0, 1, 2 in order")
    check(b.stats(), _stats(next=3, released=3), "stats()")


@graded(1, 2, "tokens that arrived early are released in order, all in the call that fills the gap")
def test_gap_filled(impl):
    b = impl.ReorderBuffer(5, 10)
    got = _feed(b, [(3, "d", 0), (1, "b", 1), (2, "c", 2), (0, "a", 3)])
    check(got, [[], [], [], ["a", "b", "c", "d"]], "push 3, 1, 2, then 0")


@graded(1, 2, "a release stops at the next gap: later tokens keep waiting")
def test_release_stops_at_gap(impl):
    b = impl.ReorderBuffer(5, 10)
    got = _feed(b, [(1, "b", 0), (3, "d", 0), (0, "a", 1)])
    check(got, [[], [], ["a", "b"]], "push 1, 3, then 0")
    check(b.stats(), _stats(next=2, buffered=1, released=2), "stats()")


@graded(1, 2, "a token whose seq was already released is a duplicate, dropped")
def test_duplicate_released(impl):
    b = impl.ReorderBuffer(2, 10)
    check(_feed(b, [(0, "a", 0), (0, "a", 1)]), [["a"], []], "push 0 twice")
    check(b.stats(), _stats(next=1, released=1, duplicates=1), "stats()")


@graded(1, 2, "a second copy of a buffered seq is a duplicate: the first copy stays, even if the tokens differ")
def test_duplicate_buffered_first_wins(impl):
    b = impl.ReorderBuffer(3, 10)
    got = _feed(b, [(1, "first", 0), (1, "second", 1), (0, "a", 2)])
    check(got, [[], [], ["a", "first"]], "push (1, 'first'), (1, 'second'), then 0")
    check(b.stats()["duplicates"], 1, "stats()['duplicates']")


@graded(1, 3, "a token for a lost seq is late (not a duplicate); released seqs on either side of the lost stretch are duplicates")
def test_late_versus_duplicate(impl):
    b = impl.ReorderBuffer(1, 100)
    _feed(b, [(0, "a", 0), (1, "b", 0), (5, "f", 1), (6, "g", 1)])  # 6 overflows: 2, 3, 4 lost
    got = _feed(b, [(1, "b", 2), (2, "c", 2), (4, "e", 2), (5, "f", 2)])
    check(got, [[], [], [], []], "push 1, 2, 4, 5 after 2..4 were lost")
    check(b.stats(), _stats(next=7, released=4, duplicates=2, late=2, lost=3), "stats()")


@graded(1, 2, "a late token counts every time it arrives")
def test_late_twice(impl):
    b = impl.ReorderBuffer(1, 0)
    _feed(b, [(2, "c", 0)])  # max_wait 0: 0 and 1 lost at once
    _feed(b, [(1, "b", 0), (1, "b", 0), (0, "a", 1)])
    check(b.stats(), _stats(next=3, released=1, late=3, lost=2), "stats() after three late tokens")


@graded(1, 1, "the empty string is a valid token")
def test_empty_token(impl):
    b = impl.ReorderBuffer(2, 10)
    check(_feed(b, [(1, "", 0), (0, "", 0)]), [[], ["", ""]], "push (1, ''), then (0, '')")


@graded(1, 1, "several calls at the same now are allowed")
def test_same_now(impl):
    b = impl.ReorderBuffer(2, 10)
    check(_feed(b, [(1, "b", 7), (0, "a", 7)]) + [b.tick(7)], [[], ["a", "b"], []], "push, push, tick, all at 7")


# --- capacity --------------------------------------------------------------------


@graded(1, 2, "exactly capacity tokens may wait: no skip")
def test_capacity_exactly_full(impl):
    b = impl.ReorderBuffer(3, 100)
    check(_feed(b, [(1, "b", 0), (2, "c", 0), (3, "d", 0)]), [[], [], []], "push 1, 2, 3 with capacity 3")
    check(b.stats(), _stats(buffered=3), "stats()")


@graded(1, 3, "one more than capacity: skip to the smallest buffered seq, release from there, the gap is lost")
def test_capacity_overflow_skips(impl):
    b = impl.ReorderBuffer(3, 100)
    got = _feed(b, [(4, "e", 0), (2, "c", 0), (7, "h", 0), (3, "d", 1)])
    check(got, [[], [], [], ["c", "d", "e"]], "push 4, 2, 7, then 3 with capacity 3")
    check(b.stats(), _stats(next=5, buffered=1, released=3, lost=2), "stats()")


@graded(1, 1, "capacity 1: the second waiting token forces a skip")
def test_capacity_one(impl):
    b = impl.ReorderBuffer(1, 100)
    check(_feed(b, [(3, "d", 0), (5, "f", 0)]), [[], ["d"]], "push 3, then 5 with capacity 1")
    check(b.stats(), _stats(next=4, buffered=1, released=1, lost=3), "stats()")


@graded(1, 1, "a duplicate never counts toward capacity")
def test_duplicate_not_counted(impl):
    b = impl.ReorderBuffer(2, 100)
    check(_feed(b, [(1, "b", 0), (2, "c", 0), (2, "c", 0)]), [[], [], []], "push 1, 2, 2 with capacity 2")
    check(b.stats(), _stats(buffered=2, duplicates=1), "stats()")


# --- timeout ---------------------------------------------------------------------


@graded(1, 3, "a token buffered at t forces a skip at exactly t + max_wait, not one unit before")
def test_timeout_boundary(impl):
    b = impl.ReorderBuffer(5, 5)
    b.push(2, "c", 9)
    check((b.tick(13), b.tick(14)), ([], ["c"]), "push (2, 'c') at 9 with max_wait 5, then tick(13), tick(14)")
    check(b.stats()["lost"], 2, "stats()['lost']")


@graded(1, 3, "the timeout looks at the oldest token, then skips to the smallest seq; it repeats while the oldest is too old")
def test_timeout_oldest_then_cascade(impl):
    b = impl.ReorderBuffer(5, 5)
    _feed(b, [(10, "k", 0), (5, "f", 3)])
    check(b.tick(5), ["f", "k"], "push (10, 'k') at 0, (5, 'f') at 3, then tick(5) with max_wait 5")
    check(b.stats(), _stats(next=11, released=2, lost=9), "stats()")


@graded(1, 2, "the cascade stops at a token that has not waited max_wait yet")
def test_timeout_stops_at_young(impl):
    b = impl.ReorderBuffer(5, 5)
    _feed(b, [(10, "k", 0), (20, "u", 4)])
    check(b.tick(5), ["k"], "push (10, 'k') at 0, (20, 'u') at 4, then tick(5)")
    check(b.stats(), _stats(next=11, buffered=1, released=1, lost=10), "stats()")


@graded(1, 3, "a released token no longer counts as the oldest: the next oldest one decides")
def test_timeout_ignores_released(impl):
    b = impl.ReorderBuffer(5, 5)
    _feed(b, [(0, "a", 0), (2, "c", 0), (5, "f", 3), (1, "b", 4)])
    check((b.tick(5), b.tick(7), b.tick(8)), ([], [], ["f"]), "after 2 (at 0) was released, tick(5), tick(7), tick(8)")


@graded(1, 2, "a duplicate does not refresh the waiting token's arrival time")
def test_duplicate_keeps_arrival(impl):
    b = impl.ReorderBuffer(5, 5)
    _feed(b, [(2, "c", 0), (2, "c", 4)])
    check(b.tick(5), ["c"], "push (2, 'c') at 0 and again at 4, then tick(5) with max_wait 5")


@graded(1, 2, "push applies the timeout at its own now, after placing its token")
def test_push_times_out(impl):
    b = impl.ReorderBuffer(5, 5)
    b.push(3, "d", 0)
    check(b.push(9, "j", 6), ["d"], "push (3, 'd') at 0, then (9, 'j') at 6 with max_wait 5")
    check(b.stats(), _stats(next=4, buffered=1, released=1, lost=3), "stats()")


@graded(1, 2, "max_wait 0: a gap is skipped in the call that creates it")
def test_max_wait_zero(impl):
    b = impl.ReorderBuffer(5, 0)
    check(_feed(b, [(2, "c", 0), (4, "e", 0)]), [["c"], ["e"]], "push 2, then 4 with max_wait 0")
    check(b.stats()["lost"], 3, "stats()['lost']")


# --- close -----------------------------------------------------------------------


@graded(1, 2, "close releases everything in order, counting every gap between as lost")
def test_close(impl):
    b = impl.ReorderBuffer(5, 100)
    _feed(b, [(6, "g", 0), (2, "c", 0), (3, "d", 0)])
    check(b.close(), ["c", "d", "g"], "close() holding 2, 3, 6")
    check(b.stats(), _stats(next=7, released=3, lost=4), "stats() after close()")


@graded(1, 1, "close with nothing waiting returns [] and loses nothing (the stream's end is unknown)")
def test_close_empty(impl):
    b = impl.ReorderBuffer(5, 100)
    b.push(0, "a", 0)
    check(b.close(), [], "close() with nothing buffered")
    check(b.stats(), _stats(next=1, released=1), "stats()")


@graded(1, 2, "after close, push, tick and close raise RuntimeError, even with invalid arguments")
def test_after_close(impl):
    b = impl.ReorderBuffer(5, 100)
    b.close()
    check_raises(lambda: b.push(1, "b", 1), None, "push(1, 'b', 1) after close()", kind=RuntimeError)
    check_raises(lambda: b.push(-1, None, -1), None, "push(-1, None, -1) after close()", kind=RuntimeError)
    check_raises(lambda: b.tick("x"), None, "tick('x') after close()", kind=RuntimeError)
    check_raises(lambda: b.close(), None, "a second close()", kind=RuntimeError)
    check(b.stats(), _stats(), "stats() after close()")
