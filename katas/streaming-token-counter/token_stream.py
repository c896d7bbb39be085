"""Streaming token counter: your solution goes here. Read PROMPT.md first.

Standard library only. Three layers, one per level:

    TokenCounter   bytes -> UTF-8 (errors="replace") -> pre-tokenizer -> a running token count
    SSEParser      bytes -> lines -> fields -> dispatched SSEEvent objects
    UsageMonitor   SSE events -> per-request RequestResult -> tenant totals and window statistics

The dataclasses below are written for you: keep them and return instances of them.

Example:
    pre_tokenize("Hi, 12345!")       -> ['Hi', ',', ' ', '123', '45', '!']
    counter = TokenCounter()
    counter.feed(b"Hello, w\\xc3")     # the chunk ends inside "ö"
    counter.feed(b"\\xb6rld!")
    counter.finish()                 -> 5
"""

from __future__ import annotations

import math
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


# --- level 1: the pre-tokenizer and the streaming counter ----------------------


def pre_tokenize(text: str) -> list[str]:
    """Split text into tokens: letter runs, whitespace runs, digit groups of <= 3, single others.

    Raises TypeError (message contains 'text') when text is not a str.

    Example:
        pre_tokenize("Hello, wörld!  12345 ❤️\\n")
        -> ['Hello', ',', ' ', 'wörld', '!', '  ', '123', '45', ' ', '❤', '\\ufe0f', '\\n']
    """
    # TODO
    raise NotImplementedError


class TokenCounter:
    """Counts the tokens of a UTF-8 byte stream fed in chunks of any size, in bounded memory.

    Example:
        counter = TokenCounter()
        counter.feed(b"12"); counter.feed(b"345")
        counter.finish()   -> 2   ('123', '45')
    """

    def __init__(self) -> None:
        # TODO
        raise NotImplementedError

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk (bytes or bytearray, possibly empty).

        Raises RuntimeError after finish() (checked first), TypeError (message contains
        'chunk') for anything that is not bytes or bytearray.
        """
        # TODO
        raise NotImplementedError

    def finish(self) -> int:
        """End of stream: return the token count of the whole stream. Again: the same count."""
        # TODO
        raise NotImplementedError


# --- level 2: server-sent events -----------------------------------------------


class SSEParser:
    """Parses a server-sent-events byte stream (WHATWG rules, see PROMPT.md) chunk by chunk.

    Example:
        parser = SSEParser()
        parser.feed(b"event: delta\\r\\ndata: a\\r")   -> []
        parser.feed(b"\\n\\r\\n")                     -> [SSEEvent(type='delta', data='a', id='')]
    """

    def __init__(self) -> None:
        # TODO
        raise NotImplementedError

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Take the next chunk; return the events it completed, in stream order.

        Raises RuntimeError after finish(), TypeError (message contains 'chunk') for non-bytes.
        """
        # TODO
        raise NotImplementedError

    def finish(self) -> None:
        """End of stream: an unterminated line and an undispatched event are discarded."""
        # TODO
        raise NotImplementedError


# --- levels 2 and 3: the usage monitor -------------------------------------------


class UsageMonitor:
    """Reconciles streamed completions with their reported usage; tenant and window statistics.

    Attributes (ints, 0 at the start, readable at any time):
        bad_events        malformed payloads, unknown or not-open requests, duplicate starts
        duplicate_events  events whose non-empty id was seen before
        late_events       (level 3) events older than now - max_lateness_s

    Example:
        monitor = UsageMonitor()
        monitor.feed(b'event: start\\ndata: {"request_id": "r1", "tenant": "acme", '
                     b'"prompt_tokens": 3, "ts": 0}\\n\\n')                        -> []
        monitor.feed(b'event: end\\ndata: {"request_id": "r1", '
                     b'"usage": {"completion_tokens": 0}, "ts": 1}\\n\\n')
        -> [RequestResult(request_id='r1', tenant='acme', prompt_tokens=3,
                          completion_tokens=0, reported_completion_tokens=0)]
    """

    def __init__(self, window_s: float = 60.0, max_lateness_s: float = math.inf) -> None:
        """window_s: a number > 0 (inf allowed); max_lateness_s: a number >= 0 (inf allowed).

        bool and NaN are rejected. Raises ValueError naming the parameter.
        """
        # TODO
        raise NotImplementedError

    def feed(self, chunk: bytes) -> list[RequestResult]:
        """Take the next chunk; return the requests that ended in it, in stream order.

        Raises RuntimeError after finish(), TypeError (message contains 'chunk') for non-bytes.
        """
        # TODO
        raise NotImplementedError

    def finish(self) -> list[str]:
        """End of stream: the ids of requests started but never ended, sorted. Again: the same."""
        # TODO
        raise NotImplementedError

    # --- level 3 ---------------------------------------------------------------

    def tenant_totals(self) -> dict[str, TenantTotals]:
        """tenant -> totals over all its ended requests (a new dict on every call)."""
        # TODO
        raise NotImplementedError

    def window_stats(self, k: int = 3) -> WindowStats:
        """Statistics of the requests in the window (now - window_s, now].

        Raises ValueError (message contains 'k') unless k is an int >= 1 (not a bool).

        Example: requests in the window ended with 9 (beta), 4 (acme) and 4 (zeta) tokens,
        window_s = 10:
            -> WindowStats(now=..., requests=3, tokens=17, tokens_per_second=1.7,
                           top_tenants=[('beta', 9), ('acme', 4), ('zeta', 4)], p50=4, p99=9)
        """
        # TODO
        raise NotImplementedError
