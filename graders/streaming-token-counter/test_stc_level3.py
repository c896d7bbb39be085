"""Hidden suite, level 3: the clock, late events, tenant totals, the sliding window, memory."""

from __future__ import annotations

import math
import tracemalloc

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import stc_oracle as oracle
from stc_oracle import delta, end, start
from stc_oracle import reference
from test_stc_level2_monitor import build_monitor_stream, compare_with_oracle

from kata.checks import check_speed, graded
from kata.strict import same

KIB = 1024


def request(rid, tenant, text, ts_start, ts_end, prompt_tokens=1, reported=0) -> bytes:
    return start(rid, tenant, prompt_tokens, ts=ts_start) + delta(rid, text, ts=ts_start) + end(rid, reported, ts=ts_end)


def words(n: int) -> str:
    """A text of exactly n tokens: 'w w w ...' alternates letters and spaces ('' for 0)."""
    if n == 0:
        return ""
    return " ".join(["w"] * ((n + 1) // 2)) + (" " if n % 2 == 0 else "")


def stats_of(impl, stream: bytes, k: int = 3, **kwargs):
    monitor = impl.UsageMonitor(**kwargs)
    monitor.feed(stream)
    return monitor, monitor.window_stats(k)


def check_stats(monitor_stats, expected, what):
    got = oracle.stats_tuple(monitor_stats)
    assert got[:3] == expected[:3] and math.isclose(got[3], expected[3], rel_tol=1e-9, abs_tol=1e-12) \
        and got[4:] == expected[4:], (
        f"Called window_stats() after {what}. Returned (now, requests, tokens, tokens_per_second, top_tenants, "
        f"p50, p99) = {got!r}, expected {expected!r}.")


# --- the clock and late events ------------------------------------------------------


@graded(3, 1, "now is None before any accepted event, then the largest accepted ts (not the last)")
def test_clock_is_max_accepted_ts(impl):
    monitor = impl.UsageMonitor()
    assert monitor.window_stats().now is None, "Called window_stats() on a new monitor. now is not None, expected None."
    monitor.feed(start("r1", ts=10) + delta("r1", "a", ts=4) + start("r2", ts=7.5))
    got = monitor.window_stats().now
    assert same(got, 10), f"Accepted events with ts 10, 4, 7.5. window_stats().now is {got!r}, expected 10."


@graded(3, 2, "bad, duplicate, ignored and late events never move the clock")
def test_unaccepted_events_do_not_move_clock(impl):
    monitor = impl.UsageMonitor(max_lateness_s=1)
    monitor.feed(start("r1", ts=5, event_id="1")
                 + delta("ghost", "x", ts=100, event_id="2")  # bad: unknown request
                 + start("r1", ts=200, event_id="3")  # bad: already open
                 + start("r9", ts=300, event_id="1")  # duplicate
                 + oracle.event_bytes("ping", {"request_id": "r1", "ts": 400}, event_id="4")  # ignored
                 + oracle.event_bytes("end", {"request_id": "r1", "ts": 500}, event_id="5")  # bad: no usage
                 + delta("r1", "x", ts=1, event_id="6"))  # late
    counters = (monitor.bad_events, monitor.duplicate_events, monitor.late_events)
    assert same(counters, (3, 1, 1)), f"(bad_events, duplicate_events, late_events) is {counters!r}, expected (3, 1, 1)."
    got = monitor.window_stats().now
    assert same(got, 5), f"Only a start with ts 5 was accepted. window_stats().now is {got!r}, expected 5."


@graded(3, 2, "an accepted delta moves the clock too, though it returns no result: a later event older than max_lateness_s before it is late")
def test_accepted_delta_moves_clock(impl):
    monitor = impl.UsageMonitor(window_s=10, max_lateness_s=5)
    got = monitor.feed(start("r1", ts=0) + delta("r1", "a b", ts=20))
    assert same(got, []), f"Fed a start at 0 and a delta at 20. feed returned {got!r}, expected []."
    now = monitor.window_stats().now
    assert same(now, 20), f"Accepted a start at ts 0 and a delta at ts 20. window_stats().now is {now!r}, expected 20."
    monitor.feed(start("r2", ts=14) + end("r1", 3, ts=14.5))
    got = (monitor.late_events, monitor.bad_events, monitor.finish())
    assert same(got, (2, 0, ["r1"])), (
        f"After a delta at 20 (max_lateness_s=5), a start at 14 and an end at 14.5: (late_events, bad_events, "
        f"finish()) = {got!r}, expected (2, 0, ['r1']).")


@graded(3, 3, "lateness edge: ts == now - max_lateness_s is accepted; a hair older is late")
def test_lateness_boundary(impl):
    monitor = impl.UsageMonitor(max_lateness_s=5)
    monitor.feed(start("r1", ts=12))
    monitor.feed(start("r2", ts=7))
    assert same(monitor.late_events, 0), f"now=12, max_lateness_s=5: a start with ts 7 counted late (late_events={monitor.late_events}), expected not late."
    monitor.feed(start("r3", ts=6.75))
    assert same(monitor.late_events, 1), f"now=12, max_lateness_s=5: a start with ts 6.75 gave late_events={monitor.late_events}, expected 1."
    left = monitor.finish()
    assert same(left, ["r1", "r2"]), f"Called finish(). Returned {left!r}, expected ['r1', 'r2'] (r3 was late)."


@graded(3, 1, "max_lateness_s=0: anything older than now is late, ts == now is not")
def test_zero_lateness(impl):
    monitor = impl.UsageMonitor(max_lateness_s=0)
    monitor.feed(start("r1", ts=3) + delta("r1", "a", ts=3) + delta("r1", "b", ts=2.5) + end("r1", 1, ts=3))
    assert same(monitor.late_events, 1), f"late_events is {monitor.late_events}, expected 1 (only the delta with ts 2.5)."


@graded(3, 2, "a late event is dropped before its request is looked at: late, not bad")
def test_late_checked_before_request_state(impl):
    monitor = impl.UsageMonitor(max_lateness_s=2)
    monitor.feed(start("r1", ts=10) + delta("ghost", "x", ts=1) + end("ghost", 1, ts=1) + start("r1", ts=0))
    counters = (monitor.bad_events, monitor.late_events)
    assert same(counters, (0, 3)), f"Three late events for unknown/open requests: (bad_events, late_events) is {counters!r}, expected (0, 3)."


@graded(3, 1, "a malformed payload is bad even when its ts is old; duplicates are counted before lateness")
def test_bad_and_duplicate_before_late(impl):
    monitor = impl.UsageMonitor(max_lateness_s=1)
    monitor.feed(start("r1", ts=10, event_id="1")
                 + oracle.event_bytes("delta", {"request_id": "r1", "ts": 0}, event_id="2")  # no text: bad
                 + start("r2", ts=0, event_id="1"))  # duplicate, and would be late
    counters = (monitor.bad_events, monitor.duplicate_events, monitor.late_events)
    assert same(counters, (1, 1, 0)), f"(bad_events, duplicate_events, late_events) is {counters!r}, expected (1, 1, 0)."


@graded(3, 2, "a late delta is not appended (the request ends with a mismatch); a late start opens nothing")
def test_late_delta_and_late_start(impl):
    monitor = impl.UsageMonitor(max_lateness_s=3)
    got = monitor.feed(start("r1", ts=10) + delta("r1", "one ", ts=10) + delta("r1", "two", ts=6)
                       + delta("r1", "three", ts=7) + end("r1", 3, ts=11) + start("r2", ts=7.5)
                       + delta("r2", "x", ts=11))
    got = [oracle.result_tuple(r) for r in got]
    assert same(got, [("r1", "acme", 1, 3, 3)]), f"Fed deltas 'one ' (ts 10), 'two' (ts 6, late), 'three' (ts 7). Results {got!r}, expected [('r1', 'acme', 1, 3, 3)]."
    counters = (monitor.bad_events, monitor.late_events)
    assert same(counters, (1, 2)), f"(bad_events, late_events) is {counters!r}, expected (1, 2): a late delta, a late start, then a bad delta for it."


# --- the window -----------------------------------------------------------------------


@graded(3, 3, "window edge: an end exactly window_s older than now is out; any younger end is in")
def test_window_edge_exactly_window_old_is_out(impl):
    stream = (request("old", "acme", words(4), 0, 2) + request("edge", "beta", words(5), 2, 5)
              + request("in", "zeta", words(6), 5, 5.5) + start("tick", ts=15))
    monitor, stats = stats_of(impl, stream, window_s=10)
    check_stats(stats, (15, 1, 6, 0.6, [("zeta", 6)], 6, 6), "ends at ts 2, 5 (= 15 - 10) and 5.5 with now=15, window_s=10")
    monitor.feed(start("tick2", ts=15.5))
    check_stats(monitor.window_stats(), (15.5, 0, 0, 0.0, [], None, None), "now moved to 15.5: the end at 5.5 is exactly 10 s old")


@graded(3, 2, "an end accepted with a ts already outside the window counts in the totals, never in the window")
def test_late_but_allowed_end_outside_window(impl):
    stream = request("r1", "acme", words(2), 20, 20) + start("r2", "beta", 4, ts=1) + delta("r2", words(3), ts=1) + end("r2", 3, ts=9)
    monitor, stats = stats_of(impl, stream, window_s=5, max_lateness_s=math.inf)
    check_stats(stats, (20, 1, 2, 0.4, [("acme", 2)], 2, 2), "an end at ts 9 arriving when now=20 (window_s=5)")
    totals = {t: (v.requests, v.prompt_tokens, v.completion_tokens) for t, v in monitor.tenant_totals().items()}
    assert same(totals, {"acme": (1, 1, 2), "beta": (1, 4, 3)}), f"Called tenant_totals(). Returned {totals!r}, expected {{'acme': (1, 1, 2), 'beta': (1, 4, 3)}}."


@graded(3, 1, "the defaults: window_s=60 (an end 60 s older than now is out) and window_stats() lists the top 3")
def test_default_window_and_k(impl):
    tenants = [("acme", 4), ("beta", 3), ("zeta", 2), ("omega", 1)]
    stream = b"".join(request(f"r{i}", tenant, words(n), 0, 1) for i, (tenant, n) in enumerate(tenants))
    monitor = impl.UsageMonitor()
    monitor.feed(stream + start("tick", ts=60.5))
    check_stats(monitor.window_stats(), (60.5, 4, 10, 10 / 60, tenants[:3], 2, 4),
                "ends at ts 1 with now=60.5 and the default window_s (60)")
    monitor.feed(start("tock", ts=61))
    check_stats(monitor.window_stats(), (61, 0, 0, 0.0, [], None, None),
                "now moved to 61: the ends at ts 1 are exactly 60 s old (the default window_s)")


@graded(3, 1, "tokens_per_second divides by the full window_s, even early in the stream; uses counted tokens")
def test_tokens_per_second(impl):
    stream = request("r1", "acme", words(7), 0, 1, reported=100)
    _, stats = stats_of(impl, stream, window_s=4)
    check_stats(stats, (1, 1, 7, 1.75, [("acme", 7)], 7, 7), "one request with 7 counted (100 reported) tokens, window_s=4")


@graded(3, 3, "top-k ties are broken by tenant name ascending (plain str order: 'Acme' < 'acme')")
def test_top_k_ties_by_name(impl):
    stream = b"".join(request(f"r{i}", tenant, words(n), i, i) for i, (tenant, n) in enumerate(
        [("zeta", 5), ("acme", 5), ("beta", 9), ("Acme", 5), ("b", 2), ("acme", 0)]))
    monitor, stats = stats_of(impl, stream, k=4, window_s=100)
    top = [tuple(x) for x in stats.top_tenants]
    expected = [("beta", 9), ("Acme", 5), ("acme", 5), ("zeta", 5)]
    assert same(top, expected), f"Called window_stats(k=4) with tenants zeta 5, acme 5+0, beta 9, Acme 5, b 2. top_tenants is {top!r}, expected {expected!r}."
    top = [tuple(x) for x in monitor.window_stats(k=2).top_tenants]
    assert same(top, expected[:2]), f"Called window_stats(k=2). top_tenants is {top!r}, expected {expected[:2]!r}."


@graded(3, 1, "top-k: fewer tenants than k returns them all; a tenant with 0 tokens in the window is listed")
def test_top_k_short_list_and_zero_tokens(impl):
    stream = request("r1", "quiet", "", 0, 1) + request("r2", "loud", words(3), 0, 2)
    _, stats = stats_of(impl, stream, k=10, window_s=60)
    top = [tuple(x) for x in stats.top_tenants]
    assert same(top, [("loud", 3), ("quiet", 0)]), f"Called window_stats(k=10) with two tenants (3 and 0 tokens). top_tenants is {top!r}, expected [('loud', 3), ('quiet', 0)]."


@graded(3, 3, "nearest-rank p50/p99: n=1, n=2, n=100 and n=101 values")
def test_percentiles_nearest_rank(impl):
    def percentiles(counts):
        stream = b"".join(request(f"r{i}", "t", words(n) if n else "", 0, 1) for i, n in enumerate(counts))
        _, stats = stats_of(impl, stream, window_s=60)
        return stats.p50, stats.p99

    for counts, expected in [([4], (4, 4)), ([9, 2], (2, 9)), ([3, 1, 2], (2, 3)), ([5, 1, 4, 2], (2, 5)),
                             (list(range(100, 0, -1)), (50, 99)), (list(range(1, 102)), (51, 100)),
                             ([0] * 99 + [7], (0, 0)), ([0] * 98 + [7, 8], (0, 7))]:
        got = percentiles(counts)
        shown = counts if len(counts) < 6 else f"{len(counts)} values {sorted(counts)[:3]}...{sorted(counts)[-3:]}"
        assert same(got, expected), f"Called window_stats() with counted tokens {shown}. (p50, p99) is {got!r}, expected {expected!r}."


@graded(3, 1, "an empty window: requests 0, tokens 0, 0.0 per second, no tenants, percentiles None")
def test_empty_window(impl):
    _, stats = stats_of(impl, start("r1", ts=3), window_s=5)
    check_stats(stats, (3, 0, 0, 0.0, [], None, None), "only a start (no request ended)")
    _, stats = stats_of(impl, b"", window_s=5)
    check_stats(stats, (None, 0, 0, 0.0, [], None, None), "no events at all")


@graded(3, 1, "window_s=math.inf keeps every ended request in the window")
def test_infinite_window(impl):
    stream = request("r1", "a", words(2), 0, 0) + request("r2", "b", words(3), 1e9, 1e9)
    _, stats = stats_of(impl, stream, window_s=math.inf)
    check_stats(stats, (1e9, 2, 5, 0.0, [("b", 3), ("a", 2)], 2, 3), "two requests 1e9 s apart, window_s=inf")


@graded(3, 1, "window_stats(k) rejects k that is not an int >= 1 (bool included) with ValueError naming k")
def test_window_stats_k_validation(impl):
    monitor = impl.UsageMonitor()
    for bad in (0, -1, True, 2.0, "3", None):
        with pytest.raises(ValueError, match="k"):
            monitor.window_stats(bad)
    assert same(monitor.window_stats(1).top_tenants, [])


@graded(3, 2, "constructor: window_s > 0 and max_lateness_s >= 0, numbers only, NaN and bool rejected, inf allowed")
def test_constructor_validation(impl):
    for bad in (0, -1, -0.5, float("nan"), True, "60", None):
        with pytest.raises(ValueError, match="window_s"):
            impl.UsageMonitor(window_s=bad)
    for bad in (-1, -0.001, float("nan"), False, "1", None):
        with pytest.raises(ValueError, match="max_lateness_s"):
            impl.UsageMonitor(max_lateness_s=bad)
    with pytest.raises(ValueError, match="window_s"):  # both invalid: window_s is checked first
        impl.UsageMonitor(window_s=0, max_lateness_s=-1)
    impl.UsageMonitor(window_s=math.inf, max_lateness_s=0)
    impl.UsageMonitor(window_s=0.001, max_lateness_s=math.inf)
    impl.UsageMonitor(window_s=1, max_lateness_s=2)


# --- tenant totals ----------------------------------------------------------------------


@graded(3, 2, "tenant totals sum every ended request since the start, with counted (not reported) tokens")
def test_tenant_totals(impl):
    stream = (request("r1", "acme", words(3), 0, 1, prompt_tokens=10, reported=99)
              + request("r2", "beta", words(1), 1, 2, prompt_tokens=2)
              + request("r3", "acme", words(4), 500, 501, prompt_tokens=5)
              + start("open", "zeta", 7, ts=502))
    monitor = impl.UsageMonitor(window_s=1)
    monitor.feed(stream)
    totals = monitor.tenant_totals()
    got = {t: (v.requests, v.prompt_tokens, v.completion_tokens) for t, v in totals.items()}
    expected = {"acme": (2, 15, 7), "beta": (1, 2, 1)}
    assert same(got, expected), f"Called tenant_totals() after 3 ended requests (1 open). Returned {got!r}, expected {expected!r}."
    totals.clear()
    again = monitor.tenant_totals()
    assert same(len(again), 2), f"Cleared the dict returned by tenant_totals() and called it again. Returned {again!r}, expected the two tenants again."
    assert same(impl.UsageMonitor().tenant_totals(), {})


@graded(3, 1, "prompt_tokens past 2**53 are summed exactly (ints, never floats)")
def test_tenant_totals_exact_beyond_2_53(impl):
    big = 2**53 + 1  # float(big) == 2**53
    stream = (start("r1", "acme", big, ts=0) + end("r1", 0, ts=1)
              + start("r2", "acme", 1, ts=2) + end("r2", 0, ts=3))
    monitor = impl.UsageMonitor()
    results = monitor.feed(stream)
    got = ([r.prompt_tokens for r in results], monitor.tenant_totals()["acme"].prompt_tokens)
    assert same(got, ([big, 1], big + 1)), f"Fed two ended requests of tenant acme with prompt_tokens {big} and 1. (prompt_tokens of the results, acme's total) is {got!r}, expected {([big, 1], big + 1)!r}."


# --- property against the oracle ---------------------------------------------------------

late_streams = st.builds(build_monitor_stream, st.integers(0, 2**32 - 1), st.integers(0, 40), st.just(True))


@graded(3, 5, "property: out-of-order streams with random window_s and max_lateness_s match an independent monitor (counts, totals, window, top-k, percentiles)")
@settings(max_examples=120)
@given(case=late_streams, window_s=st.sampled_from([0.5, 1, 2.5, 5, 10, 30, math.inf]),
       max_lateness_s=st.sampled_from([0, 1, 2.5, 4, math.inf]), k=st.integers(1, 4))
@example(case=(request("a", "t", "x", 0, 3) + start("b", ts=8), []), window_s=5, max_lateness_s=0, k=1)
def test_property_windowed_monitor_matches_oracle(impl, case, window_s, max_lateness_s, k):
    data, cuts = case
    monitor, expected = compare_with_oracle(impl, data, cuts, window_s, max_lateness_s, ks=(k,))
    totals = {t: (v.requests, v.prompt_tokens, v.completion_tokens) for t, v in monitor.tenant_totals().items()}
    assert same(totals, expected["totals"]), f"Called tenant_totals() after a generated stream. Returned {totals!r}, expected {expected['totals']!r}."
    check_stats(monitor.window_stats(k), expected["stats"][k],
                f"a generated stream (window_s={window_s}, max_lateness_s={max_lateness_s}, k={k})")


# --- memory and time ------------------------------------------------------------------------

MEMORY_BOUND = 256 * KIB  # the prompt's bound for level 3


def many_requests(n: int, open_at_once: int = 4) -> bytes:
    parts = []
    for base in range(0, n, open_at_once):
        group = range(base, min(n, base + open_at_once))
        # ids as long as a real API's ("chatcmpl-" and 32 hex digits), so that keeping every ended
        # id costs what it would in production
        parts += [start(f"chatcmpl-{i:032x}", f"tenant-{i % 7}", 10, ts=i) for i in group]
        parts += [delta(f"chatcmpl-{i:032x}", "six tokens, 123", ts=i) for i in group if i % 4 == 0]
        parts += [end(f"chatcmpl-{i:032x}", 6, ts=i) for i in group]
    return b"".join(parts)


def feed_measuring_peak(monitor, chunks, what):
    tracemalloc.start()
    try:
        for i, chunk in enumerate(chunks):
            monitor.feed(chunk)
            peak = tracemalloc.get_traced_memory()[1]
            if peak > MEMORY_BOUND:
                pytest.fail(f"Fed {what}: after chunk {i + 1} of {len(chunks)} the peak traced memory was {peak:,} bytes, "
                            f"expected it to stay below {MEMORY_BOUND:,} (256 KiB).")
    finally:
        tracemalloc.stop()


@graded(3, 3, "memory: 3 000 requests through a 50 s window stay below 256 KiB (nothing kept per ended request)")
def test_memory_many_requests(impl):
    # Kept per ended request, the window's entries or the ended ids go over the bound by 1.6x or
    # more at this size (measured: 436 KiB and 412 KiB); the reference peaks near 24 KiB.
    data = many_requests(3000)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    monitor = impl.UsageMonitor(window_s=50)
    feed_measuring_peak(monitor, chunks, f"3 000 requests ({len(data):,} bytes) in 4 KiB chunks, window_s=50")
    stats = monitor.window_stats(2)
    # ends at ts 2950..2999 are in; every 4th (2952, 2956, ..., 2996) had a 6-token delta, two each
    # for tenants 0, 2, 3, 5, 6 (tied at 12: by name) and one each for tenants 1 and 4
    expected = (2999, 50, 72, 1.44, [("tenant-0", 12), ("tenant-2", 12)], 0, 6)
    check_stats(stats, expected, "3 000 requests, one ending per second, window_s=50")


@graded(3, 3, "memory: one request with 1 MB of delta text stays below 256 KiB (count deltas, do not keep them)")
def test_memory_long_request(impl):
    piece = "lorem ipsum 12345 dolor, sit amet é " * 28  # 1 008 characters, 16 * 28 = 448 tokens
    n = 1000
    data = start("big", "acme", 1, ts=0) + b"".join(delta("big", piece, ts=1) for _ in range(n)) + end("big", 0, ts=2)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    monitor = impl.UsageMonitor()
    feed_measuring_peak(monitor, chunks, f"one request with {n} deltas of {len(piece)} characters")
    expected = oracle.count_stream(piece.encode()) * n  # the piece ends with a space and starts with a letter
    got = monitor.tenant_totals().get("acme")
    got = got and got.completion_tokens
    assert same(got, expected), f"Fed one request with 1 MB of delta text. Its counted completion_tokens is {got!r}, expected {expected}."


OPEN = 5_000  # the prompt states these sizes
REQUESTS = 5_000


def _window_stats(make, chunks):
    """A monitor from make() fed every chunk: its window_stats(5), as a tuple."""
    monitor = make()
    for chunk in chunks:
        monitor.feed(chunk)
    return oracle.stats_tuple(monitor.window_stats(5))


@graded(3, 1, "time: 5 000 requests left open, then 5 000 requests all in one large window, within 10x of the "
              "reference")
def test_time_large_window(impl):
    # OPEN requests start and never end; then groups of 50 start at one second and end one to
    # three seconds later, out of order (never late), so every end stays in the 1e6 s window.
    # Work per event that grows with the window or with the open requests costs over 20x the
    # reference's at these sizes (measured: 26x rescanning the window on every event, 50x
    # scanning the open requests), so it fails the 10x bound by a wide margin while the
    # reference's run stays near 0.1 s. The events are formatted directly (the same bytes as
    # stc_oracle.start/end): json.dumps of every payload would cost as much as the reference's run.
    parts = [b'event: start\ndata: {"request_id": "open%d", "tenant": "t%d", "prompt_tokens": 1, "ts": 0}\n\n'
             % (i, i % 97) for i in range(OPEN)]
    for base in range(0, REQUESTS, 50):
        group = range(base, base + 50)
        parts += [b'event: start\ndata: {"request_id": "q%d", "tenant": "t%d", "prompt_tokens": 1, "ts": %d}\n\n'
                  % (i, i % 97, base) for i in group]
        parts += [b'event: end\ndata: {"request_id": "q%d", "usage": {"completion_tokens": 0}, "ts": %d}\n\n'
                  % (i, base + 3 - (i * 7) % 3) for i in reversed(group)]
    data = b"".join(parts)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    # a slow reference run only widens the bound; a slow run of the code under test is measured
    # once more before it fails (the machine may have been busy)
    check_speed(f"UsageMonitor(window_s=1e6, max_lateness_s=10).feed on {OPEN:,} requests left open, then "
                f"{REQUESTS:,} requests all in the window ({len(data):,} bytes), then window_stats(5)",
                lambda: _window_stats(lambda: impl.UsageMonitor(window_s=1e6, max_lateness_s=10), chunks),
                lambda: _window_stats(lambda: reference().UsageMonitor(window_s=1e6, max_lateness_s=10), chunks),
                "window_stats(5)", floor=0.0, slack=0.05, confirm=True,
                hint="per-event work must not grow with the window or the open requests")
