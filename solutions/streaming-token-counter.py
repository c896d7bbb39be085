"""Streaming token counter: reference solution.

Token statistics over a byte stream of server-sent events, exact at every chunk boundary and
bounded in memory. Three layers, one per level:

    TokenCounter   bytes -> UTF-8 (replace) -> pre-tokenizer -> a running token count
    SSEParser      bytes -> lines -> fields -> dispatched events (WHATWG rules)
    UsageMonitor   events -> per-request reconciliation -> tenant totals and window statistics

What it leaves out: SSE `retry:` and reconnection, and any real (BPE) tokenizer.

Example:
    counter = TokenCounter()
    counter.feed(b"Hello, w\xc3")      # the chunk ends inside "ö" (C3 B6)
    counter.feed(b"\xb6rld!")
    counter.finish()                   -> 5  (Hello , " " wörld !)
"""

from __future__ import annotations

import codecs
import heapq
import json
import math
import re
import unicodedata
from dataclasses import dataclass

# --- data types (given) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched server-sent event."""

    type: str  # the event: field; "message" when it was never set or set to ""
    data: str  # the data: values joined with "\n"
    id: str  # the stream's last event ID when the event was dispatched ("" if none)


@dataclass(frozen=True, slots=True)
class RequestResult:
    """One ended request: the tokens counted from its deltas and the usage it reported."""

    request_id: str
    tenant: str
    prompt_tokens: int
    completion_tokens: int  # level-1 count of the request's delta texts, concatenated
    reported_completion_tokens: int  # usage.completion_tokens of its end event

    @property
    def mismatch(self) -> bool:
        return self.completion_tokens != self.reported_completion_tokens


@dataclass(frozen=True, slots=True)
class TenantTotals:
    """Sums over all ended requests of one tenant."""

    requests: int
    prompt_tokens: int
    completion_tokens: int  # counted, not reported


@dataclass(frozen=True, slots=True)
class WindowStats:
    """Statistics of the requests whose end ts is in (now - window_s, now]."""

    now: float | None  # the largest ts of an accepted event; None before the first
    requests: int
    tokens: int  # sum of the counted completion_tokens in the window
    tokens_per_second: float  # tokens / window_s
    top_tenants: list[tuple[str, int]]  # (tenant, tokens): tokens desc, then tenant asc; at most k
    p50: int | None  # nearest rank: value at rank (p * n + 99) // 100 of the sorted values
    p99: int | None


# --- level 1: the pre-tokenizer ------------------------------------------------
#
# Each character gets a one-letter class: L (letter or mark), D (decimal digit, Nd),
# S (whitespace, str.isspace) or O (anything else). A token is then a maximal run of L,
# a maximal run of S, up to three D from the left of a run, or a single O. Mapping a text
# to its class string with str.translate keeps positions aligned (one class letter per
# character), so the work per character happens in C: a regex over the class string finds
# the tokens (pre_tokenize), and a few str.count passes count them (the streaming counter).
# A plain loop over characters is just as correct; this is about 10x faster at 50 MB.

_CATEGORY_CLASS = {cat: "L" for cat in ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me")}
_CATEGORY_CLASS["Nd"] = "D"


class _ClassTable(dict):
    """ord(ch) -> class letter, computed on first sight (at most one entry per distinct char)."""

    def __missing__(self, code_point: int) -> str:
        ch = chr(code_point)
        kind = "S" if ch.isspace() else _CATEGORY_CLASS.get(unicodedata.category(ch), "O")
        self[code_point] = kind
        return kind


_CLASS_TABLE = _ClassTable()
_TOKEN_RE = re.compile(r"L+|S+|D{1,3}|O")  # over a class string: one match per token


def _classes(text: str) -> str:
    """The class string of text: same length, one of L/D/S/O per character."""
    return text.translate(_CLASS_TABLE)


_RUN_STARTS = {kind: tuple(other + kind for other in "LDSO" if other != kind) for kind in "LDS"}


def _runs(classes: str, kind: str) -> int:
    """The number of maximal runs of `kind` in a class string.

    A run starts at the first character or right after a different class; two-letter
    patterns such as "SL" cannot overlap, so str.count counts every start exactly.
    """
    a, b, c = _RUN_STARTS[kind]
    return classes.count(a) + classes.count(b) + classes.count(c) + (classes[:1] == kind)


def _count_tokens(classes: str) -> int:
    """The number of tokens in a class string (what len(_TOKEN_RE.findall(classes)) gives).

    Counted with str.count passes instead of one regex match per token: the same answer,
    but no per-token work in Python or in the allocator, which matters at 50 MB.
    A digit run of length n holds ceil(n / 3) tokens: n // 3 full groups (counted by the
    non-overlapping "DDD" count) plus one more if a remainder is left after removing them.
    """
    return (classes.count("O") + _runs(classes, "L") + _runs(classes, "S")
            + classes.count("DDD") + _runs(classes.replace("DDD", ""), "D"))


def pre_tokenize(text: str) -> list[str]:
    """Split text into tokens.

    Example: pre_tokenize("Hi, 12345!") -> ['Hi', ',', ' ', '123', '45', '!']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return [text[m.start():m.end()] for m in _TOKEN_RE.finditer(_classes(text))]


class _TextTally:
    """Counts the tokens of a text that arrives in pieces, in O(1) memory between pieces.

    The only state carried over a boundary is the class string of the last token if it can
    still grow (`_tail`): "L" or "S" for a run, "D" * (run length % 3) for a digit group that
    is not yet full, "" otherwise. Prefixing the next piece's classes with it makes the count
    merge across the boundary; the tail's token was already counted, so subtract 1.
    Example: "12" then "345": tail "DD"; "DD" + "DDD" holds 2 tokens, minus 1 -> 1 more.
    """

    __slots__ = ("count", "_tail")

    def __init__(self) -> None:
        self.count = 0
        self._tail = ""

    def feed(self, text: str) -> None:
        if not text:
            return
        classes = self._tail + _classes(text)
        self.count += _count_tokens(classes) - (1 if self._tail else 0)
        last = classes[-1]
        if last == "D":
            run = len(classes) - len(classes.rstrip("D"))
            self._tail = "D" * (run % 3)  # a full group of three cannot grow
        elif last == "O":
            self._tail = ""  # an "other" token is always one character
        else:
            self._tail = last


def _check_chunk(chunk: object) -> None:
    if not isinstance(chunk, (bytes, bytearray)):
        raise TypeError(f"chunk must be bytes or bytearray, got {type(chunk).__name__}")


class TokenCounter:
    """Counts the tokens of a UTF-8 byte stream fed in chunks of any size."""

    def __init__(self) -> None:
        # The incremental decoder holds back at most 3 bytes of an unfinished character and
        # replaces invalid bytes exactly as bytes.decode(errors="replace") does on the whole.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tally = _TextTally()
        self._finished = False

    def feed(self, chunk: bytes) -> None:
        if self._finished:
            raise RuntimeError("feed() called after finish()")
        _check_chunk(chunk)
        self._tally.feed(self._decoder.decode(chunk))

    def finish(self) -> int:
        if not self._finished:
            self._finished = True
            # an unfinished character at the very end becomes U+FFFD here
            self._tally.feed(self._decoder.decode(b"", final=True))
        return self._tally.count


# --- level 2: server-sent events ----------------------------------------------


_EOL_RE = re.compile(r"\r\n|\r|\n")


class SSEParser:
    """Parses a server-sent-events byte stream, chunk by chunk, into SSEEvent objects."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True  # no character decoded yet: a BOM here is dropped
        self._after_cr = False  # the last line ended with "\r": a "\n" next is part of it
        self._line: list[str] = []  # pieces of the current, unterminated line
        self._data: list[str] = []  # data: values of the event being built
        self._type = ""  # event: value of the event being built
        self._last_id = ""  # persists across events, as the standard says
        self._finished = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._finished:
            raise RuntimeError("feed() called after finish()")
        _check_chunk(chunk)
        text = self._decoder.decode(chunk)
        if not text:
            return []  # keep _after_cr: the "\n" of a "\r\n" may still come
        if self._at_start:
            self._at_start = False
            if text[0] == "\ufeff":
                text = text[1:]
        pos = 0
        if self._after_cr and text.startswith("\n"):
            pos = 1
        self._after_cr = False
        events: list[SSEEvent] = []
        for m in _EOL_RE.finditer(text, pos):
            self._line.append(text[pos:m.start()])
            line = "".join(self._line)
            self._line.clear()
            event = self._process_line(line)
            if event is not None:
                events.append(event)
            pos = m.end()
            self._after_cr = m.group() == "\r"  # only matters if it was the last character
        if pos < len(text):
            self._line.append(text[pos:])
            self._after_cr = False
        return events

    def finish(self) -> None:
        """End of stream: an unterminated line and an undispatched event are discarded."""
        self._finished = True
        self._line.clear()
        self._data.clear()

    def _process_line(self, line: str) -> SSEEvent | None:
        if line == "":
            return self._dispatch()
        if line[0] == ":":
            return None  # comment
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]  # exactly one leading space
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        # "retry" and any other field name: ignored
        return None

    def _dispatch(self) -> SSEEvent | None:
        event = None
        if self._data:  # no data: lines at all -> nothing is dispatched
            event = SSEEvent(self._type or "message", "\n".join(self._data), self._last_id)
        self._data = []
        self._type = ""
        return event


# --- level 2: reconciling usage -----------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    """A finite int or float (not bool) that a float can hold: math.isfinite(10**400) overflows."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _is_name(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _payload(event_type: str, data: str) -> dict | None:
    """The event's JSON object if it is well formed for its type, else None."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep to parse
        return None
    if not isinstance(obj, dict) or not _is_name(obj.get("request_id")) or not _is_number(obj.get("ts")):
        return None
    if event_type == "start":
        ok = (_is_name(obj.get("tenant")) and _is_int(obj.get("prompt_tokens"))
              and obj["prompt_tokens"] >= 0)
    elif event_type == "delta":
        ok = isinstance(obj.get("text"), str)
    else:  # end
        usage = obj.get("usage")
        ok = (isinstance(usage, dict) and _is_int(usage.get("completion_tokens"))
              and usage["completion_tokens"] >= 0)
    return obj if ok else None


@dataclass(slots=True)
class _OpenRequest:
    tenant: str
    prompt_tokens: int
    tally: _TextTally


_KINDS = ("start", "delta", "end")


def _check_param(name: str, value: object, low: float, strict: bool) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (
        value > low if strict else value >= low)  # NaN fails both comparisons
    if not ok:
        raise ValueError(f"{name} must be a number {'>' if strict else '>='} {low:g}, got {value!r}")


def _nearest_rank(sorted_values: list[int], p: int) -> int | None:
    """Nearest-rank percentile: the value at 1-based rank ceil(p * n / 100), in integers."""
    n = len(sorted_values)
    if n == 0:
        return None
    rank = -(-p * n // 100)
    return sorted_values[rank - 1]


class UsageMonitor:
    """Reconciles streamed completions with reported usage; keeps per-tenant and window stats.

    Memory: one small record per open request, per tenant, per distinct event id and per
    request ended inside the window; nothing per delta or per byte of text.
    """

    def __init__(self, window_s: float = 60.0, max_lateness_s: float = math.inf) -> None:
        _check_param("window_s", window_s, 0, strict=True)
        _check_param("max_lateness_s", max_lateness_s, 0, strict=False)
        self.window_s = window_s
        self.max_lateness_s = max_lateness_s
        self.bad_events = 0
        self.duplicate_events = 0
        self.late_events = 0
        self._parser = SSEParser()
        self._open: dict[str, _OpenRequest] = {}  # request_id -> its state
        self._seen_ids: set[str] = set()
        self._done = False  # [DONE] seen: every later event is ignored
        self._finished = False
        self._now: float | None = None  # the clock: max ts of accepted events
        self._window: list[tuple[float, int, str, int]] = []  # heap: (end ts, seq, tenant, tokens)
        self._seq = 0
        self._totals: dict[str, list[int]] = {}  # tenant -> [requests, prompt, completion]

    def feed(self, chunk: bytes) -> list[RequestResult]:
        if self._finished:
            raise RuntimeError("feed() called after finish()")
        _check_chunk(chunk)
        results = []
        for event in self._parser.feed(chunk):
            result = self._handle(event)
            if result is not None:
                results.append(result)
        return results

    def finish(self) -> list[str]:
        if not self._finished:
            self._finished = True
            self._parser.finish()
        return sorted(self._open)

    # --- one event, through the pipeline of the prompt ---------------------------

    def _handle(self, event: SSEEvent) -> RequestResult | None:
        if self._done:
            return None
        if event.id:
            if event.id in self._seen_ids:
                self.duplicate_events += 1
                return None
            self._seen_ids.add(event.id)
        if event.data == "[DONE]":
            self._done = True
            return None
        if event.type not in _KINDS:
            return None  # e.g. a keep-alive "ping": ignored, not bad
        obj = _payload(event.type, event.data)
        if obj is None:
            self.bad_events += 1
            return None
        ts = obj["ts"]
        if self._now is not None and ts < self._now - self.max_lateness_s:
            self.late_events += 1
            return None
        rid = obj["request_id"]
        result = None
        if event.type == "start":
            if rid in self._open:
                self.bad_events += 1
                return None
            self._open[rid] = _OpenRequest(obj["tenant"], obj["prompt_tokens"], _TextTally())
        elif event.type == "delta":
            request = self._open.get(rid)
            if request is None:  # never started, or already ended
                self.bad_events += 1
                return None
            request.tally.feed(obj["text"])
        else:
            request = self._open.pop(rid, None)
            if request is None:
                self.bad_events += 1
                return None
            result = RequestResult(rid, request.tenant, request.prompt_tokens,
                                   request.tally.count, obj["usage"]["completion_tokens"])
            self._record(result, ts)
        self._advance(ts)  # only accepted events move the clock
        return result

    # --- level 3: totals and the window ------------------------------------------

    def _record(self, result: RequestResult, end_ts: float) -> None:
        totals = self._totals.setdefault(result.tenant, [0, 0, 0])
        totals[0] += 1
        totals[1] += result.prompt_tokens
        totals[2] += result.completion_tokens
        heapq.heappush(self._window, (end_ts, self._seq, result.tenant, result.completion_tokens))
        self._seq += 1

    def _advance(self, ts: float) -> None:
        if self._now is None or ts > self._now:
            self._now = ts
        # in the window iff now - window_s < end ts; the heap's minimum leaves first.
        # A late-but-allowed end older than the window is pushed and popped right here.
        cutoff = self._now - self.window_s
        while self._window and self._window[0][0] <= cutoff:
            heapq.heappop(self._window)

    def tenant_totals(self) -> dict[str, TenantTotals]:
        return {tenant: TenantTotals(*values) for tenant, values in self._totals.items()}

    def window_stats(self, k: int = 3) -> WindowStats:
        if not _is_int(k) or k < 1:
            raise ValueError(f"k must be an int >= 1, got {k!r}")
        per_tenant: dict[str, int] = {}
        values = []
        for _, _, tenant, tokens in self._window:
            per_tenant[tenant] = per_tenant.get(tenant, 0) + tokens
            values.append(tokens)
        values.sort()
        total = sum(values)
        top = sorted(per_tenant.items(), key=lambda item: (-item[1], item[0]))[:k]
        return WindowStats(
            now=self._now,
            requests=len(values),
            tokens=total,
            tokens_per_second=total / self.window_s,
            top_tenants=top,
            p50=_nearest_rank(values, 50),
            p99=_nearest_rank(values, 99),
        )
