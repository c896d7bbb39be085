"""Visible tests for streaming-token-counter: the prompt's examples and a few more.

Run them with `kata check streaming-token-counter`. The hidden suite checks many more cases,
and feeds every stream in many chunkings (one byte at a time included).
"""

import json

import pytest


def event(kind, **payload):
    return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()


def feed_all(obj, chunks):
    out = []
    for chunk in chunks:
        got = obj.feed(chunk)
        if got:
            out.extend(got)
    return out


def one_byte_chunks(data):
    return [data[i:i + 1] for i in range(len(data))]


# --- level 1 -----------------------------------------------------------------


@pytest.mark.level(1)
def test_pre_tokenize_prompt_example(impl):
    got = impl.pre_tokenize("Hello, wörld!  12345 ❤️\n")
    expected = ["Hello", ",", " ", "wörld", "!", "  ", "123", "45", " ", "❤", "\ufe0f", "\n"]
    assert got == expected, f"Called pre_tokenize('Hello, wörld!  12345 ❤️\\n'). Returned {got!r}, expected {expected!r}."


@pytest.mark.level(1)
def test_counter_prompt_example(impl):
    counter = impl.TokenCounter()
    for chunk in [b"Hello, w\xc3", b"", b"\xb6rld 12", b"34!"]:
        counter.feed(chunk)
    got = counter.finish()
    assert got == 8, f"Fed b'Hello, w\\xc3', b'', b'\\xb6rld 12', b'34!' then called finish(). Returned {got!r}, expected 8."
    with pytest.raises(RuntimeError):
        counter.feed(b"x")


@pytest.mark.level(1)
def test_one_byte_chunks_match_whole_stream(impl):
    data = "naïve café: 1234567 ½ 😀\r\n".encode() + b"\xff!"
    whole = impl.TokenCounter()
    whole.feed(data)
    expected = whole.finish()
    counter = impl.TokenCounter()
    for chunk in one_byte_chunks(data):
        counter.feed(chunk)
    got = counter.finish()
    assert expected == 15, f"Fed {data!r} in one chunk. finish() returned {expected!r}, expected 15."
    assert got == expected, f"Fed {data!r} one byte at a time. finish() returned {got!r}, expected {expected!r}."


@pytest.mark.level(1)
def test_invalid_input(impl):
    with pytest.raises(TypeError, match="text"):
        impl.pre_tokenize(b"bytes")
    counter = impl.TokenCounter()
    with pytest.raises(TypeError, match="chunk"):
        counter.feed("a str")
    assert counter.finish() == 0


# --- level 2 -----------------------------------------------------------------


@pytest.mark.level(2)
def test_parser_prompt_example(impl):
    parser = impl.SSEParser()
    assert parser.feed(b": hello\r\nevent: delta\r\ndata: a\r") == []
    got = parser.feed(b"\ndata:  b\r\n\r")
    expected = [impl.SSEEvent(type="delta", data="a\n b", id="")]
    assert got == expected, f"Fed the prompt's second chunk. Returned {got!r}, expected {expected!r}."
    got = parser.feed(b"\nid: 7\ndata\n\ndata: c\n\ndata: d")
    expected = [impl.SSEEvent("message", "", "7"), impl.SSEEvent("message", "c", "7")]
    assert got == expected, f"Fed the prompt's third chunk. Returned {got!r}, expected {expected!r}."
    assert parser.finish() is None


@pytest.mark.level(2)
def test_parser_cr_and_lf_in_different_chunks(impl):
    parser = impl.SSEParser()
    events = parser.feed(b"data: a\r") + parser.feed(b"\ndata: b\r\n") + parser.feed(b"\r") + parser.feed(b"\n")
    expected = [impl.SSEEvent("message", "a\nb", "")]
    assert events == expected, f"Fed b'data: a\\r', b'\\ndata: b\\r\\n', b'\\r', b'\\n'. Events {events!r}, expected {expected!r}."


PROMPT_STREAM = b"""\
: one stream, two requests, one replayed event, one bad event
event: start
id: 1
data: {"request_id": "r1", "tenant": "acme", "prompt_tokens": 12, "ts": 0}

event: delta
id: 2
data: {"request_id": "r1", "text": "Hel", "ts": 1}

event: delta
id: 2
data: {"request_id": "r1", "text": "Hel", "ts": 1}

event: start
id: 3
data: {"request_id": "r2", "tenant": "beta",
data:  "prompt_tokens": 3, "ts": 1}

event: delta
id: 4
data: {"request_id": "r1", "text": "lo, wor", "ts": 2}

event: delta
id: 5
data: {"request_id": "r1", "text": "ld 12345", "ts": 2

event: delta
id: 6
data: {"request_id": "r1", "text": "ld!", "ts": 3}

event: end
id: 7
data: {"request_id": "r1", "usage": {"completion_tokens": 7}, "ts": 4}

id: 8
data: [DONE]

event: end
id: 9
data: {"request_id": "r2", "usage": {"completion_tokens": 0}, "ts": 5}

"""


@pytest.mark.level(2)
@pytest.mark.parametrize("size", [len(PROMPT_STREAM), 1, 7])
def test_monitor_prompt_example(impl, size):
    monitor = impl.UsageMonitor()
    chunks = [PROMPT_STREAM[i:i + size] for i in range(0, len(PROMPT_STREAM), size)]
    results = feed_all(monitor, chunks)
    expected = [impl.RequestResult("r1", "acme", 12, 5, 7)]
    assert results == expected, f"Fed the prompt's stream in {size}-byte chunks. feed returned {results!r} in all, expected {expected!r}."
    assert results[0].mismatch
    unfinished = monitor.finish()
    assert unfinished == ["r2"], f"Called finish() after the prompt's stream. Returned {unfinished!r}, expected ['r2']."
    counters = (monitor.bad_events, monitor.duplicate_events, monitor.late_events)
    assert counters == (1, 1, 0), f"After the prompt's stream, (bad_events, duplicate_events, late_events) is {counters!r}, expected (1, 1, 0)."


# --- level 3 -----------------------------------------------------------------


@pytest.mark.level(3)
def test_level3_prompt_example(impl):
    m = impl.UsageMonitor(window_s=10, max_lateness_s=5)
    results = m.feed(event("start", request_id="r1", tenant="acme", prompt_tokens=5, ts=0)
                     + event("delta", request_id="r1", text="one two", ts=1)
                     + event("end", request_id="r1", usage={"completion_tokens": 3}, ts=2)
                     + event("start", request_id="r2", tenant="beta", prompt_tokens=2, ts=3)
                     + event("delta", request_id="r2", text="a b c d 5", ts=4)
                     + event("end", request_id="r2", usage={"completion_tokens": 9}, ts=12))
    assert results == [impl.RequestResult("r1", "acme", 5, 3, 3), impl.RequestResult("r2", "beta", 2, 9, 9)]
    stats = m.window_stats()
    expected = impl.WindowStats(now=12, requests=1, tokens=9, tokens_per_second=0.9,
                                top_tenants=[("beta", 9)], p50=9, p99=9)
    assert stats == expected, f"Called window_stats() at now=12, window_s=10. Returned {stats!r}, expected {expected!r}."
    m.feed(event("start", request_id="r3", tenant="acme", prompt_tokens=1, ts=7))
    m.feed(event("start", request_id="r4", tenant="acme", prompt_tokens=1, ts=6.5))
    assert m.late_events == 1, f"Fed a start with ts 6.5 at now=12, max_lateness_s=5. late_events is {m.late_events!r}, expected 1."
    totals = m.tenant_totals()
    expected_totals = {"acme": impl.TenantTotals(1, 5, 3), "beta": impl.TenantTotals(1, 2, 9)}
    assert totals == expected_totals, f"Called tenant_totals(). Returned {totals!r}, expected {expected_totals!r}."
    assert m.finish() == ["r3"]


@pytest.mark.level(3)
def test_window_edge_and_lateness_edge(impl):
    m = impl.UsageMonitor(window_s=10, max_lateness_s=3)
    m.feed(event("start", request_id="a", tenant="t", prompt_tokens=1, ts=0)
           + event("end", request_id="a", usage={"completion_tokens": 0}, ts=5)
           + event("start", request_id="b", tenant="t", prompt_tokens=1, ts=15))
    stats = m.window_stats()
    assert stats.requests == 0, f"An end at ts 5 with now=15, window_s=10 is exactly 10 s old. window_stats().requests is {stats.requests}, expected 0 (out)."
    m.feed(event("start", request_id="c", tenant="t", prompt_tokens=1, ts=12))
    assert m.late_events == 0, f"A start with ts 12 == now - max_lateness_s (15 - 3) was counted late (late_events={m.late_events}), expected not late."


@pytest.mark.level(3)
def test_top_tenants_tie_break_and_percentiles(impl):
    m = impl.UsageMonitor(window_s=100)
    stream = b""
    for i, (tenant, text) in enumerate([("zeta", "a b"), ("beta", "a b c d e"), ("acme", "a b")]):
        rid = f"r{i}"
        stream += (event("start", request_id=rid, tenant=tenant, prompt_tokens=1, ts=i)
                   + event("delta", request_id=rid, text=text, ts=i)
                   + event("end", request_id=rid, usage={"completion_tokens": 0}, ts=i))
    m.feed(stream)
    stats = m.window_stats(k=3)
    top = [tuple(x) for x in stats.top_tenants]
    assert top == [("beta", 9), ("acme", 3), ("zeta", 3)], f"Called window_stats(k=3). top_tenants is {top!r}, expected [('beta', 9), ('acme', 3), ('zeta', 3)]."
    assert (stats.p50, stats.p99) == (3, 9), f"Called window_stats() with counted tokens [3, 9, 3]. (p50, p99) is {(stats.p50, stats.p99)!r}, expected (3, 9)."
    assert [tuple(x) for x in m.window_stats(k=1).top_tenants] == [("beta", 9)]
