"""Slow, obviously correct versions of what the kata asks for, written for the grader only.

Nothing here is shared with the reference solution: every rule of PROMPT.md is re-implemented
the plainest way (whole-stream decoding, one character at a time, lists kept forever), so the
hidden suite can compare any implementation with it on generated inputs.

    tokens_of(text)            -> list of tokens
    count_stream(data)         -> token count of a byte stream
    sse_events(data)           -> [(type, data, id)] dispatched from a complete byte stream
    run_monitor(data, ...)     -> everything a UsageMonitor reports after that stream
    StreamingOracleCounter     -> a linear, per-character streaming counter (a timing baseline)

Plus the small builders the tests share: `event_bytes`, `chunked`, `SSE_EVENT`; and `reference()`,
the reference solution for the timing tests (called only inside a kata.checks baseline measure).
"""

from __future__ import annotations

import codecs
import json
import math
import sys
import re
import unicodedata
from fractions import Fraction

from kata.checks import reference_at

# --- level 1 ------------------------------------------------------------------


def char_class(ch: str) -> str:
    if ch.isspace():
        return "space"
    category = unicodedata.category(ch)
    if category[0] in "LM":
        return "letter"
    if category == "Nd":
        return "digit"
    return "other"


def tokens_of(text: str) -> list[str]:
    tokens = []
    i = 0
    while i < len(text):
        kind = char_class(text[i])
        j = i + 1
        if kind in ("letter", "space"):
            while j < len(text) and char_class(text[j]) == kind:
                j += 1
        elif kind == "digit":
            # a group ends after 3 digits; the next digit starts a new group of the same run
            while j < len(text) and j - i < 3 and char_class(text[j]) == "digit":
                j += 1
        tokens.append(text[i:j])
        i = j
    return tokens


def count_stream(data: bytes) -> int:
    return len(tokens_of(data.decode("utf-8", errors="replace")))


class StreamingOracleCounter:
    """A plain per-character streaming counter: linear, bounded, and as slow as a careful
    candidate's. The complexity tests use it as a second baseline, so an implementation is
    never compared only with the (faster, str.translate-based) reference."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._last = None
        self._group = 0
        self.count = 0

    def feed(self, chunk: bytes) -> None:
        self._consume(self._decoder.decode(chunk))

    def finish(self) -> int:
        self._consume(self._decoder.decode(b"", final=True))  # at most one U+FFFD
        return self.count

    def _consume(self, text: str) -> None:
        for ch in text:
            kind = char_class(ch)
            if kind == "digit":
                if self._last == "digit" and self._group < 3:
                    self._group += 1
                else:
                    self.count += 1
                    self._group = 1
            elif kind == "other" or kind != self._last:
                self.count += 1
            self._last = kind


# --- level 2: SSE ---------------------------------------------------------------


def sse_events(data: bytes) -> list[tuple[str, str, str]]:
    """Events dispatched by a stream that ends after `data` (an unterminated tail is dropped)."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)[:-1]  # the last piece never saw its line ending
    events = []
    data_lines: list[str] = []
    event_type = ""
    last_id = ""
    for line in lines:
        if line == "":
            if data_lines:
                events.append((event_type or "message", "\n".join(data_lines), last_id))
            data_lines = []
            event_type = ""
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name = line[: line.index(":")]
            value = line[line.index(":") + 1:]
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "data":
            data_lines.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\x00" not in value:
            last_id = value
    return events


# --- levels 2 and 3: the monitor ------------------------------------------------


def _int(v) -> bool:
    return type(v) is int


def _number(v) -> bool:
    if type(v) is int:
        return abs(v) <= sys.float_info.max  # float(v) would overflow beyond it
    return type(v) is float and math.isfinite(v)


def _well_formed(kind: str, data: str):
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if type(obj) is not dict:
        return None
    rid = obj.get("request_id")
    if not (type(rid) is str and rid) or not _number(obj.get("ts")):
        return None
    if kind == "start":
        tenant = obj.get("tenant")
        if not (type(tenant) is str and tenant):
            return None
        if not (_int(obj.get("prompt_tokens")) and obj["prompt_tokens"] >= 0):
            return None
    elif kind == "delta":
        if type(obj.get("text")) is not str:
            return None
    else:
        usage = obj.get("usage")
        if type(usage) is not dict:
            return None
        if not (_int(usage.get("completion_tokens")) and usage["completion_tokens"] >= 0):
            return None
    return obj


def nearest_rank(values: list[int], p: int):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(Fraction(p * len(ordered), 100)) - 1]


def run_monitor(data: bytes, window_s=60.0, max_lateness_s=math.inf, ks=(3,)) -> dict:
    """Everything a UsageMonitor fed `data` reports, as plain tuples and dicts."""
    results = []
    bad = dup = late = 0
    seen_ids = set()
    done = False
    now = None
    open_requests = {}  # request_id -> [tenant, prompt_tokens, text]
    ended = []  # (end ts, tenant, counted tokens), kept forever
    totals = {}  # tenant -> [requests, prompt, completion]
    for kind, payload, event_id in sse_events(data):
        if done:
            continue
        if event_id != "":
            if event_id in seen_ids:
                dup += 1
                continue
            seen_ids.add(event_id)
        if payload == "[DONE]":
            done = True
            continue
        if kind not in ("start", "delta", "end"):
            continue
        obj = _well_formed(kind, payload)
        if obj is None:
            bad += 1
            continue
        ts = obj["ts"]
        if now is not None and ts < now - max_lateness_s:
            late += 1
            continue
        rid = obj["request_id"]
        if kind == "start":
            if rid in open_requests:
                bad += 1
                continue
            open_requests[rid] = [obj["tenant"], obj["prompt_tokens"], ""]
        elif rid not in open_requests:
            bad += 1
            continue
        elif kind == "delta":
            open_requests[rid][2] += obj["text"]
        else:
            tenant, prompt, text = open_requests.pop(rid)
            counted = len(tokens_of(text))
            results.append((rid, tenant, prompt, counted, obj["usage"]["completion_tokens"]))
            ended.append((ts, tenant, counted))
            t = totals.setdefault(tenant, [0, 0, 0])
            t[0] += 1
            t[1] += prompt
            t[2] += counted
        now = ts if now is None else max(now, ts)
    in_window = [] if now is None else [e for e in ended if now - window_s < e[0] <= now]
    stats = {}
    for k in ks:
        per_tenant = {}
        for _, tenant, tokens in in_window:
            per_tenant[tenant] = per_tenant.get(tenant, 0) + tokens
        top = sorted(per_tenant.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        values = [tokens for _, _, tokens in in_window]
        stats[k] = (now, len(values), sum(values), sum(values) / window_s, top,
                    nearest_rank(values, 50), nearest_rank(values, 99))
    return {
        "results": results,
        "unfinished": sorted(open_requests),
        "bad": bad,
        "duplicates": dup,
        "late": late,
        "totals": {t: tuple(v) for t, v in totals.items()},
        "stats": stats,
    }


# --- builders shared by the tests ------------------------------------------------


def event_bytes(kind: str | None, payload, *, event_id: str | None = None, eol: str = "\n",
                ensure_ascii: bool = True) -> bytes:
    """One SSE event: optional `event:` and `id:` lines, one data line, a blank line."""
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=ensure_ascii)
    lines = []
    if kind is not None:
        lines.append(f"event: {kind}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"data: {data}")
    return (eol.join(lines) + eol + eol).encode("utf-8")


def start(rid, tenant="acme", prompt_tokens=1, ts=0, **kw) -> bytes:
    return event_bytes("start", {"request_id": rid, "tenant": tenant,
                                 "prompt_tokens": prompt_tokens, "ts": ts}, **kw)


def delta(rid, text, ts=0, **kw) -> bytes:
    return event_bytes("delta", {"request_id": rid, "text": text, "ts": ts}, **kw)


def end(rid, completion_tokens=0, ts=0, **kw) -> bytes:
    return event_bytes("end", {"request_id": rid, "usage": {"completion_tokens": completion_tokens},
                               "ts": ts}, **kw)


def chunked(data: bytes, cuts) -> list[bytes]:
    """Cut data at the given positions (any order, repeats make empty chunks)."""
    points = sorted(min(max(c, 0), len(data)) for c in cuts)
    pieces = []
    prev = 0
    for p in points:
        pieces.append(data[prev:p])
        prev = p
    pieces.append(data[prev:])
    return pieces


def result_tuple(r) -> tuple:
    return (r.request_id, r.tenant, r.prompt_tokens, r.completion_tokens,
            r.reported_completion_tokens)


def stats_tuple(s) -> tuple:
    return (s.now, s.requests, s.tokens, s.tokens_per_second,
            [tuple(x) for x in s.top_tenants], s.p50, s.p99)


# the reference solution, imported under its own module name (not the learner's)
reference = reference_at(__file__, "solutions/streaming-token-counter.py")
