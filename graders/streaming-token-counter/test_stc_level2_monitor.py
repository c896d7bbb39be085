"""Hidden suite, level 2: the usage monitor (reconciliation, duplicates, bad events, [DONE])."""

from __future__ import annotations

import json
import sys
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import stc_oracle as oracle
from stc_oracle import delta, end, event_bytes, start
from stc_oracle import reference

from kata.checks import check_speed, graded
from kata.strict import same


def run(impl, chunks, **kwargs):
    """Feed every chunk to a fresh monitor; return (results as tuples, finish(), monitor)."""
    monitor = impl.UsageMonitor(**kwargs)
    results = []
    for chunk in chunks:
        got = monitor.feed(chunk)
        assert isinstance(got, list), f"Called UsageMonitor.feed(...). Returned {got!r}, expected a list of RequestResult."
        results.extend(oracle.result_tuple(r) for r in got)
    return results, monitor.finish(), monitor


def check_run(impl, stream: bytes, results=None, unfinished=None, bad=None, duplicates=None, what="the stream",
              **kwargs):
    for chunks in ([stream], [stream[i:i + 1] for i in range(len(stream))]):
        how = "in one chunk" if len(chunks) == 1 else "one byte at a time"
        got, left, monitor = run(impl, chunks, **kwargs)
        if results is not None:
            assert same(got, results), f"Fed {what} {how}. feed returned results {got!r} in all, expected {results!r}."
        if unfinished is not None:
            assert same(left, unfinished), f"Fed {what} {how}, then called finish(). Returned {left!r}, expected {unfinished!r}."
        if bad is not None:
            assert same(monitor.bad_events, bad), f"Fed {what} {how}. bad_events is {monitor.bad_events!r}, expected {bad}."
        if duplicates is not None:
            assert same(monitor.duplicate_events, duplicates), (
                f"Fed {what} {how}. duplicate_events is {monitor.duplicate_events!r}, expected {duplicates}.")


# --- counting and reconciling -----------------------------------------------------


@graded(2, 2, "a delta may end inside a token: 'Hel' + 'lo' is one token")
def test_token_split_across_deltas(impl):
    stream = (start("r1", "acme", 4) + delta("r1", "Hel") + delta("r1", "lo") + delta("r1", " wor")
              + delta("r1", "ld") + end("r1", 3))
    check_run(impl, stream, results=[("r1", "acme", 4, 3, 3)], unfinished=[], bad=0,
              what="deltas 'Hel', 'lo', ' wor', 'ld'")


@graded(2, 2, "digit groups of three run across deltas: '12' + '34' is '123', '4'")
def test_digit_groups_across_deltas(impl):
    stream = start("r1") + delta("r1", "12") + delta("r1", "34") + end("r1", 2)
    check_run(impl, stream, results=[("r1", "acme", 1, 2, 2)], what="deltas '12', '34'")
    stream = start("r1") + b"".join(delta("r1", d) for d in "1234567") + end("r1", 3)
    check_run(impl, stream, results=[("r1", "acme", 1, 3, 3)], what="seven one-digit deltas")


@graded(2, 1, "a multi-byte character and an emoji in deltas, raw UTF-8 in the stream, cut by every chunking")
def test_non_ascii_deltas(impl):
    stream = (start("r1") + delta("r1", "naï", ensure_ascii=False) + delta("r1", "ve 😀", ensure_ascii=False)
              + delta("r1", "\u0301x", ensure_ascii=True) + end("r1", 4))
    check_run(impl, stream, results=[("r1", "acme", 1, 4, 4)], what="deltas 'naï', 've 😀', '\\u0301x'")


@graded(2, 2, "interleaved requests each get their own count; results come in end order")
def test_interleaved_requests(impl):
    stream = (start("a", "t1", 1) + start("b", "t2", 2) + delta("a", "one ") + delta("b", "x")
              + delta("a", "two") + delta("b", "y z") + end("b", 3) + delta("a", "!") + end("a", 4))
    check_run(impl, stream, results=[("b", "t2", 2, 3, 3), ("a", "t1", 1, 4, 4)], unfinished=[], bad=0,
              what="two interleaved requests")


@graded(2, 1, "a request with no deltas counts 0; the reported figure is kept as reported (mismatch)")
def test_mismatch_and_empty_request(impl):
    stream = start("r1") + end("r1", 5) + start("r2") + delta("r2", "") + end("r2", 0)
    results, _, _ = run(impl, [stream])
    assert same(results, [("r1", "acme", 1, 0, 5), ("r2", "acme", 1, 0, 0)]), (
        f"Fed a request with no deltas (reported 5) and one with an empty delta (reported 0). Results {results!r}, "
        "expected [('r1', 'acme', 1, 0, 5), ('r2', 'acme', 1, 0, 0)].")
    monitor = impl.UsageMonitor()
    first = monitor.feed(stream)[0]
    assert first.mismatch is True, f"Result {first!r}: mismatch is {first.mismatch!r}, expected True."


@graded(2, 2, "feed returns a result only from the chunk that completes the end event's blank line")
def test_result_returned_by_completing_chunk(impl):
    body = start("r1") + delta("r1", "hi") + end("r1", 1)
    monitor = impl.UsageMonitor()
    got = monitor.feed(body[:-1])
    assert same(got, []), f"Fed a stream whose end event lacks its final blank line. Returned {got!r}, expected []."
    got = [oracle.result_tuple(r) for r in monitor.feed(body[-1:])]
    assert same(got, [("r1", "acme", 1, 1, 1)]), f"Fed the final b'\\n'. Returned {got!r}, expected [('r1', 'acme', 1, 1, 1)]."


@graded(2, 2, "an end event with no trailing blank line at the end of the stream is never processed")
def test_end_without_blank_line_is_not_processed(impl):
    stream = start("r1") + delta("r1", "hi") + end("r1", 1)[:-1]
    check_run(impl, stream, results=[], unfinished=["r1"], bad=0, what="a stream cut before the end event's blank line")


# --- ids and duplicates -------------------------------------------------------------


@graded(2, 2, "an event whose id was seen before is a duplicate: ignored and counted")
def test_duplicate_ids_ignored(impl):
    stream = (start("r1", event_id="1") + delta("r1", "a", event_id="2") + delta("r1", "a", event_id="2")
              + delta("r1", " b", event_id="3") + start("r1", event_id="1") + end("r1", 3, event_id="4"))
    check_run(impl, stream, results=[("r1", "acme", 1, 3, 3)], bad=0, duplicates=2, what="a stream replaying ids 2 and 1")


@graded(2, 2, "an event without an id line inherits the last id, so it is a duplicate")
def test_inherited_id_is_duplicate(impl):
    stream = start("r1", event_id="5") + delta("r1", "lost") + end("r1", 0, event_id="6") + delta("r2", "x")
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], bad=0, duplicates=2,
              what="a delta and a later event with no id line after ids 5 and 6")


@graded(2, 1, "events with an empty id (never set, or reset by an empty id line) are never duplicates")
def test_empty_id_never_duplicate(impl):
    reset = b"id\n\n"  # an id line with no data: resets the last event ID, dispatches nothing
    stream = (start("r1") + delta("r1", "a") + delta("r1", "a") + start("r2", event_id="7") + reset
              + delta("r2", "x") + delta("r2", "x") + end("r2", 1) + end("r1", 1))
    check_run(impl, stream, results=[("r2", "acme", 1, 1, 1), ("r1", "acme", 1, 1, 1)], bad=0, duplicates=0,
              what="repeated events with empty ids")


@graded(2, 1, "an id is remembered whatever happens to its event: a bad or ignored event's id still makes a replay a duplicate")
def test_id_remembered_for_bad_and_ignored_events(impl):
    stream = (event_bytes("ping", "{}", event_id="p") + event_bytes("start", "{not json", event_id="b")
              + start("r1", event_id="p") + start("r1", event_id="b") + start("r1", event_id="ok") + end("r1", 0, event_id="e"))
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], bad=1, duplicates=2,
              what="replays of a ping's id and of a bad event's id")


@graded(2, 2, "an event that is both a replay and malformed counts as a duplicate, not as bad (step 2 before step 5)")
def test_replayed_malformed_event_is_duplicate(impl):
    stream = (start("r1", event_id="1") + delta("r1", "a", event_id="2")
              + event_bytes("delta", '{"request_id": "r1", "text": 5, "ts": 0}', event_id="2")
              + event_bytes("end", "{not json", event_id="1") + end("r1", 1, event_id="3"))
    check_run(impl, stream, results=[("r1", "acme", 1, 1, 1)], bad=0, duplicates=2,
              what="a stream replaying ids 2 and 1 with malformed payloads")


# --- bad events -----------------------------------------------------------------------


@graded(2, 2, "malformed JSON is a bad event and processing goes on")
def test_malformed_json_is_bad(impl):
    stream = (start("r1") + event_bytes("delta", '{"request_id": "r1", "text": "x"') + event_bytes("delta", "")
              + event_bytes("end", "nul") + delta("r1", "ok") + end("r1", 1))
    check_run(impl, stream, results=[("r1", "acme", 1, 1, 1)], bad=3, what="three malformed payloads")


BAD_PAYLOADS = [
    ("start", []),
    ("start", "r1"),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": True, "ts": 0}),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": 1.0, "ts": 0}),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": -1, "ts": 0}),
    ("start", {"request_id": "r9", "tenant": "", "prompt_tokens": 1, "ts": 0}),
    ("start", {"request_id": "r9", "tenant": 5, "prompt_tokens": 1, "ts": 0}),
    ("start", {"request_id": "r9", "prompt_tokens": 1, "ts": 0}),
    ("start", {"request_id": "", "tenant": "acme", "prompt_tokens": 1, "ts": 0}),
    ("start", {"request_id": 9, "tenant": "acme", "prompt_tokens": 1, "ts": 0}),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": 1}),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": "0"}),
    ("start", {"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": True}),
    ("delta", {"request_id": "r1", "text": 5, "ts": 0}),
    ("delta", {"request_id": "r1", "text": None, "ts": 0}),
    ("delta", {"request_id": "r1", "ts": 0}),
    ("end", {"request_id": "r1", "usage": 3, "ts": 0}),
    ("end", {"request_id": "r1", "usage": {"completion_tokens": -2}, "ts": 0}),
    ("end", {"request_id": "r1", "usage": {"completion_tokens": False}, "ts": 0}),
    ("end", {"request_id": "r1", "usage": {"completion_tokens": 2.0}, "ts": 0}),
    ("end", {"request_id": "r1", "usage": {}, "ts": 0}),
    ("end", {"request_id": "r1", "ts": 0}),
]


@graded(2, 2, "payloads with a missing field or a wrong type (bool as int, 1.0 as int, negatives, empty ids) are bad")
def test_wrong_payload_types_are_bad(impl):
    for kind, payload in BAD_PAYLOADS:
        stream = start("r1") + event_bytes(kind, payload) + delta("r1", "ok") + end("r1", 1)
        results, left, monitor = run(impl, [stream])
        assert same((monitor.bad_events, results, left), (1, [("r1", "acme", 1, 1, 1)], [])), (
            f"Fed a {kind} event with payload {json.dumps(payload)} inside request r1. (bad_events, results, finish()) "
            f"is {(monitor.bad_events, results, left)!r}, expected (1, [('r1', 'acme', 1, 1, 1)], []).")


@graded(2, 1, "non-finite ts (NaN, Infinity) is bad")
def test_non_finite_ts_is_bad(impl):
    for ts in ("NaN", "Infinity", "-Infinity"):
        payload = '{"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": %s}' % ts
        stream = event_bytes("start", payload) + delta("r9", "x")
        _, left, monitor = run(impl, [stream])
        assert same((monitor.bad_events, left), (2, [])), (
            f"Fed a start with ts {ts} then a delta for it. (bad_events, finish()) is {(monitor.bad_events, left)!r}, expected (2, []).")


@graded(2, 2, "payloads Python cannot hold are bad, not a crash: JSON nested too deep for json.loads, "
              "an int ts too large for a float")
def test_unparseable_depth_and_overflowing_ts_are_bad(impl):
    deep = '{"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": 0, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    huge = '{"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": 1' + "0" * 400 + "}"
    edge = '{"request_id": "r9", "tenant": "acme", "prompt_tokens": 1, "ts": %d}' % int(sys.float_info.max)
    for what, payload, bad in (("JSON nested 100,000 deep", deep, 2), ("ts = 10**400", huge, 2),
                               ("ts = int(sys.float_info.max), which a float holds", edge, 0)):
        stream = event_bytes("start", payload) + delta("r9", "x")
        try:
            _, left, monitor = run(impl, [stream])
        except Exception as exc:  # noqa: BLE001 - the point: no exception at all
            pytest.fail(f"Fed a start whose payload has {what}, then a delta. Raised {type(exc).__name__}, "
                        "expected a bad event (or, for the last, an accepted one)")
        got = (monitor.bad_events, len(left))
        want = (bad, 0 if bad else 1)
        assert same(got, want), (
            f"Fed a start whose payload has {what}, then a delta for it. (bad_events, unfinished requests) "
            f"is {got!r}, expected {want!r}.")


@graded(2, 1, "extra keys in a payload are ignored; an int ts and a float ts are both fine")
def test_extra_keys_ignored(impl):
    stream = (event_bytes("start", {"request_id": "r1", "tenant": "t", "prompt_tokens": 0, "ts": 1.5, "model": "x"})
              + event_bytes("delta", {"request_id": "r1", "text": "hi", "ts": 2, "index": 0, "usage": None})
              + event_bytes("end", {"request_id": "r1", "usage": {"completion_tokens": 1, "total": 9}, "ts": 3}))
    check_run(impl, stream, results=[("r1", "t", 0, 1, 1)], bad=0, what="payloads with extra keys")


@graded(2, 1, "a delta or end for a request that was never started is bad")
def test_unknown_request_is_bad(impl):
    stream = delta("ghost", "x") + end("ghost", 1) + start("r1") + end("r1", 0)
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], bad=2, what="a delta and an end for an unknown request")


@graded(2, 2, "a delta or a second end after a request's end is bad")
def test_delta_after_end_is_bad(impl):
    stream = start("r1") + delta("r1", "a") + end("r1", 1) + delta("r1", "b") + end("r1", 2)
    check_run(impl, stream, results=[("r1", "acme", 1, 1, 1)], unfinished=[], bad=2, what="a delta and an end after r1 ended")


@graded(2, 1, "a start for a request that is already open is bad and changes nothing")
def test_start_of_open_request_is_bad(impl):
    stream = start("r1", "acme", 5) + delta("r1", "a") + start("r1", "other", 9) + delta("r1", "b") + end("r1", 1)
    check_run(impl, stream, results=[("r1", "acme", 5, 1, 1)], bad=1, what="a second start of open request r1")


@graded(2, 2, "a request id may be reused after its end: the new start opens a fresh request")
def test_request_id_reused_after_end(impl):
    stream = (start("r1", "acme", 5) + delta("r1", "one two") + end("r1", 3)
              + start("r1", "beta", 7) + delta("r1", "x") + end("r1", 1))
    check_run(impl, stream, results=[("r1", "acme", 5, 3, 3), ("r1", "beta", 7, 1, 1)], bad=0,
              what="request id r1 used twice, one after the other")


# --- [DONE] and other types -------------------------------------------------------------


@graded(2, 2, "after [DONE] every event is ignored: not processed, not bad, not duplicate")
def test_done_stops_processing(impl):
    stream = (start("r1", event_id="1") + event_bytes(None, "[DONE]", event_id="2") + end("r1", 1, event_id="3")
              + event_bytes("delta", "{bad") + start("r1", event_id="1") + start("r2"))
    check_run(impl, stream, results=[], unfinished=["r1"], bad=0, duplicates=0, what="events after [DONE]")


@graded(2, 1, "a [DONE] whose id (own or inherited) was seen before is a duplicate and does not end the stream")
def test_duplicate_done_does_not_end_stream(impl):
    stream = start("r1", event_id="7") + event_bytes(None, "[DONE]") + end("r1", 0, event_id="8")
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], unfinished=[], duplicates=1,
              what="a [DONE] with no id line after id 7 (it inherits 7)")
    stream = start("r1", event_id="1") + event_bytes(None, "[DONE]", event_id="1") + end("r1", 0, event_id="2")
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], unfinished=[], duplicates=1,
              what="a [DONE] replaying id 1")


@graded(2, 1, "[DONE] ends the stream whatever its event type; ' [DONE]' or '[done]' does not")
def test_done_any_type_exact_data(impl):
    stream = start("r1") + event_bytes("end", "[DONE]") + end("r1", 0)
    check_run(impl, stream, results=[], unfinished=["r1"], bad=0, what="an end event whose data is [DONE]")
    stream = start("r1") + event_bytes(None, "[done]") + event_bytes(None, " [DONE]") + end("r1", 0)
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], bad=0, what="'[done]' and ' [DONE]' messages")


@graded(2, 1, "events of other types (message, ping, Start) are ignored, not bad")
def test_unknown_event_types_ignored(impl):
    stream = (start("r1") + event_bytes(None, "{bad json") + event_bytes("ping", "{}")
              + event_bytes("Start", {"request_id": "r2", "tenant": "t", "prompt_tokens": 1, "ts": 0})
              + event_bytes("message", {"request_id": "r1", "text": "zzz", "ts": 0}) + end("r1", 0))
    check_run(impl, stream, results=[("r1", "acme", 1, 0, 0)], unfinished=[], bad=0, what="message, ping and Start events")


@graded(2, 1, "a JSON payload spread over several data lines is joined with '\\n' and parsed")
def test_json_over_several_data_lines(impl):
    stream = (b'event: start\ndata: {"request_id": "r1",\ndata:  "tenant": "acme",\r\ndata: "prompt_tokens": 2,\r'
              b'data: "ts": 0}\n\n' + end("r1", 0))
    check_run(impl, stream, results=[("r1", "acme", 2, 0, 0)], bad=0, what="a start whose JSON spans four data lines")


@graded(2, 1, "UsageMonitor: finish sorts the unfinished ids and may be called twice; feed after finish and non-bytes raise")
def test_monitor_finish_and_invalid_input(impl):
    monitor = impl.UsageMonitor()
    for bad in ("event: start\n\n", None):
        with pytest.raises(TypeError, match="chunk"):
            monitor.feed(bad)
    monitor.feed(start("zed") + start("Alpha") + start("beta") + start("alpha"))
    first = monitor.finish()
    assert same(first, ["Alpha", "alpha", "beta", "zed"]), f"Called finish() with four open requests. Returned {first!r}, expected ['Alpha', 'alpha', 'beta', 'zed']."
    first.append("mine")
    again = monitor.finish()
    assert same(again, ["Alpha", "alpha", "beta", "zed"]), f"Appended to the list finish() returned, then called finish() again. Returned {again!r}, expected the same four ids: return a new list each time."
    with pytest.raises(RuntimeError):
        monitor.feed(b"")
    fresh = impl.UsageMonitor()
    assert same((fresh.bad_events, fresh.duplicate_events, fresh.late_events), (0, 0, 0))
    assert same(fresh.finish(), [])


# --- property against the oracle ------------------------------------------------------

TEXTS = ["Hel", "lo", " ", "12", "345", "é", "😀", "e\u0301", "\u0301", ", ", "wor", "ld!", "٣", "\n", ""]
TENANTS = ["acme", "beta", "Acme", "zeta"]


def build_monitor_stream(seed: int, n_events: int, out_of_order: bool = False) -> tuple[bytes, list[int]]:
    """A seeded stream of interleaved request lifecycles, mostly valid, with some bad events,
    replays and pings, maybe a [DONE], maybe cut short; and the cut points of a chunking.
    (Built with random.Random from a seed that hypothesis draws: fast to generate, and the same
    seed always gives the same stream.)"""
    rng = random.Random(seed)
    id_mode = rng.choice(["none", "every", "mostly"])  # no id lines / one per event / some missing
    parts = []
    sent_ids = []
    open_rids = []
    ts = 0
    for _ in range(n_events):
        ts += rng.choice([0, 0, 0, 1, 1, 2])
        event_ts = ts - rng.choice([0, 0, 0, 0.5, 1, 2.5, 4]) if out_of_order else ts
        eol = rng.choice(["\n", "\r\n", "\r"])
        event_id = None
        if id_mode == "every" or (id_mode == "mostly" and rng.random() < 0.85):
            if sent_ids and rng.random() < 0.08:
                event_id = rng.choice(sent_ids)  # a replay
            else:
                event_id = str(len(sent_ids) + 1)
                sent_ids.append(event_id)
        roll = rng.random()
        if roll < 0.22 or not open_rids and roll < 0.6:
            rid = rng.choice(["r1", "r2", "r3", "r4", "r5"])  # may be open already: bad
            payload = {"request_id": rid, "tenant": rng.choice(TENANTS), "prompt_tokens": rng.randint(0, 50),
                       "ts": event_ts}
            parts.append(event_bytes("start", payload, event_id=event_id, eol=eol))
            open_rids.append(rid)
        elif roll < 0.65:
            rid = rng.choice(open_rids) if open_rids and rng.random() < 0.93 else "r9"
            text = "".join(rng.choices(TEXTS, k=rng.randint(0, 3)))
            parts.append(event_bytes("delta", {"request_id": rid, "text": text, "ts": event_ts},
                                     event_id=event_id, eol=eol, ensure_ascii=rng.random() < 0.5))
        elif roll < 0.85:
            rid = rng.choice(open_rids) if open_rids and rng.random() < 0.93 else "r9"
            if rid in open_rids:
                open_rids.remove(rid)
            payload = {"request_id": rid, "usage": {"completion_tokens": rng.randint(0, 6)}, "ts": event_ts}
            parts.append(event_bytes("end", payload, event_id=event_id, eol=eol))
        elif roll < 0.90:
            parts.append(event_bytes(rng.choice(["ping", None]), "{}", event_id=event_id, eol=eol))
        elif roll < 0.95:
            parts.append(event_bytes(rng.choice(["start", "delta", "end"]),
                                     rng.choice(['{"request_id": "r1"', "[]", '{"request_id": "r1", "ts": 0}']),
                                     event_id=event_id, eol=eol))
        elif roll < 0.97:
            parts.append(b"id\n\n")  # resets the last event ID, dispatches nothing
        elif roll < 0.98:
            parts.append(event_bytes(None, "[DONE]", event_id=event_id, eol=eol))
        else:
            parts.append(b": comment\r\n")
    data = b"".join(parts)
    if data and rng.random() < 0.3:
        data = data[: rng.randint(0, len(data))]  # the stream may stop anywhere
    cuts = [rng.randint(0, len(data)) for _ in range(rng.randint(0, 8))]
    return data, cuts


monitor_streams = st.builds(build_monitor_stream, st.integers(0, 2**32 - 1), st.integers(0, 40))


def compare_with_oracle(impl, data, cuts, window_s=60.0, max_lateness_s=float("inf"), ks=(3,)):
    chunks = oracle.chunked(data, cuts)
    monitor = impl.UsageMonitor(window_s=window_s, max_lateness_s=max_lateness_s)
    results = []
    fed = b""
    for i, chunk in enumerate(chunks):
        results.extend(oracle.result_tuple(r) for r in monitor.feed(chunk))
        fed += chunk
        if i == len(chunks) // 2:  # midway, the results so far must match a stream cut here
            partial = oracle.run_monitor(fed, window_s, max_lateness_s)["results"]
            assert same(results, partial), (
                f"Fed the first {len(fed)} bytes of a generated stream in chunks {chunks[: i + 1]!r}. Results so far "
                f"{results!r}, expected {partial!r}.")
    unfinished = monitor.finish()
    expected = oracle.run_monitor(data, window_s, max_lateness_s, ks)
    got = {"results": results, "unfinished": unfinished, "bad": monitor.bad_events,
           "duplicates": monitor.duplicate_events, "late": monitor.late_events}
    for key, value in got.items():
        assert same(value, expected[key]), (
            f"Fed a generated stream of {len(data)} bytes in chunks {chunks!r} (window_s={window_s}, "
            f"max_lateness_s={max_lateness_s}). {key}: {value!r}, expected {expected[key]!r}.")
    return monitor, expected


@graded(2, 4, "property: random multiplexed streams (replays, bad events, [DONE], pings, raw UTF-8) in random chunkings match an independent monitor")
@settings(max_examples=120)
@given(case=monitor_streams)
@example(case=(start("r1") + delta("r1", "Hel") + delta("r1", "lo 12") + delta("r1", "34") + end("r1", 4), [30, 31]))
@example(case=(start("r1", event_id="1") + delta("r1", "x") + end("r1", 1, event_id="2"), [5]))
def test_property_monitor_matches_oracle(impl, case):
    data, cuts = case
    compare_with_oracle(impl, data, cuts)


# --- time -------------------------------------------------------------------------------


def _results(make, chunks):
    """A monitor from make() fed every chunk, then finished: the results it returned."""
    monitor = make()
    results = []
    for chunk in chunks:
        results.extend(monitor.feed(chunk))
    monitor.finish()
    return [oracle.result_tuple(r) for r in results]


@pytest.mark.complexity
@graded(2, 2, "linear time: a request with 1 500 deltas and 20 interleaved ones, within 10x of the reference")
def test_many_deltas_linear(impl):
    rng = random.Random(5)
    words = ["token", " ", "1234", "é", "stream", "😀", ", "]
    parts = [start("long", "acme", 1)] + [start(f"s{i}", "beta", 1) for i in range(20)]
    for i in range(1500):
        parts.append(delta("long", "".join(rng.choices(words, k=12)), ensure_ascii=bool(i % 2)))
        if i % 75 == 0:
            parts.append(end(f"s{i // 75}", 0))
    parts.append(end("long", 0))
    data = b"".join(parts)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]

    check_speed(f"UsageMonitor().feed on {len(data):,} bytes ({len(parts):,} events) in 4 KiB chunks",
                lambda: _results(impl.UsageMonitor, chunks), lambda: _results(reference().UsageMonitor, chunks),
                "the results", floor=0.0, slack=0.05, runs=2,
                hint="count each delta once; never recount a request's whole text")
