"""Per-request TTFT and TPOT percentiles from an interleaved token-timestamp log: reference.

One pass keeps, per request, the earliest timestamp of its start, its end and each token index it
needs (token 0 and the highest index); a second pass over the requests classifies and measures.

Example:
    latency_report(["0 a start", "40 a token 0", "100 a token 3", "120 a end"])
    -> LatencyReport(1, 0, 0, 0, 0, 40, 40, Fraction(20), Fraction(20))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class LatencyReport:
    measured: int
    incomplete: int
    missing_first_token: int
    skewed: int
    malformed: int
    ttft_p50: int | None
    ttft_p99: int | None
    tpot_p50: Fraction | None
    tpot_p99: Fraction | None


class _Request:
    __slots__ = ("start", "end", "first", "last_index", "last")

    def __init__(self) -> None:
        self.start = self.end = self.first = self.last = None  # earliest timestamps
        self.last_index = -1  # highest token index seen


def _digits(s: str) -> bool:
    return s.isascii() and s.isdigit()  # "٣" and "²" are digits to str.isdigit, not to the log


def _parse(line: str):
    """(ts, request_id, event, index) or None when the line is malformed."""
    parts = line.split(" ")
    if parts != line.split() or len(parts) not in (3, 4):  # empty fields or other whitespace
        return None
    ts, rid, event, *rest = parts
    if not _digits(ts):
        return None
    if event == "token" and len(rest) == 1 and _digits(rest[0]):
        return int(ts), rid, event, int(rest[0])
    if event in ("start", "end") and not rest:
        return int(ts), rid, event, None
    return None


def _earliest(old, new):
    return new if old is None or new < old else old


def _percentile(ordered: list, p: int):
    """Nearest rank of an ascending list: the value at 1-based rank ceil(p * n / 100)."""
    return ordered[(p * len(ordered) + 99) // 100 - 1] if ordered else None


def latency_report(lines: list[str]) -> LatencyReport:
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise ValueError("lines must be a list of str")
    requests: dict[str, _Request] = {}
    malformed = 0
    for line in lines:
        parsed = _parse(line)
        if parsed is None:
            malformed += 1
            continue
        ts, rid, event, index = parsed
        req = requests.setdefault(rid, _Request())
        if event == "start":
            req.start = _earliest(req.start, ts)
        elif event == "end":
            req.end = _earliest(req.end, ts)
        else:
            if index == 0:
                req.first = _earliest(req.first, ts)
            if index > req.last_index:  # a new highest index: its first timestamp so far
                req.last_index, req.last = index, ts
            elif index == req.last_index:
                req.last = _earliest(req.last, ts)
    incomplete = missing = skewed = 0
    ttfts: list[int] = []
    tpots: list[Fraction] = []
    for req in requests.values():
        if req.start is None or req.end is None:
            incomplete += 1
        elif req.first is None:
            missing += 1
        elif req.first < req.start or req.last < req.first:
            skewed += 1
        else:
            ttfts.append(req.first - req.start)
            if req.last_index >= 1:
                tpots.append(Fraction(req.last - req.first, req.last_index))
    ttfts.sort()
    tpots.sort()
    return LatencyReport(len(ttfts), incomplete, missing, skewed, malformed,
                         _percentile(ttfts, 50), _percentile(ttfts, 99),
                         _percentile(tpots, 50), _percentile(tpots, 99))
