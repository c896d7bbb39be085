"""Token reorder buffer: the reference solution.

State:
    _buf       dict, seq -> token: the tokens waiting (every key > _next)
    _heap      min-heap of the keys of _buf: a release always takes its top, a skip jumps to it
    _arrivals  deque of (arrival time, seq) in arrival order (times never decrease), with entries
               of released seqs dropped lazily from the front: its first live entry is the oldest
    _lost      list of (start, end) half-open ranges of lost seqs, ascending: memory grows with the
               number of skips, never with the length of a lost stretch

Example:
    b = ReorderBuffer(3, 5);  b.push(0, "A", 0) -> ["A"];  b.push(2, "C", 1) -> [];  b.push(1, "B", 3) -> ["B", "C"]
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque


def _check_int(value, name: str, minimum: int) -> None:
    if type(value) is not int or value < minimum:  # type() is int: rejects bool and 3.0
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


class ReorderBuffer:
    def __init__(self, capacity: int, max_wait: int) -> None:
        _check_int(capacity, "capacity", 1)
        _check_int(max_wait, "max_wait", 0)
        self._capacity, self._max_wait = capacity, max_wait
        self._next = 0
        self._buf: dict[int, str] = {}
        self._heap: list[int] = []
        self._arrivals: deque[tuple[int, int]] = deque()
        self._lost: list[tuple[int, int]] = []
        self._lost_starts: list[int] = []  # the starts of _lost, for bisect
        self._last_now = 0
        self._closed = False
        self._counts = {"released": 0, "duplicates": 0, "late": 0, "lost": 0}

    # --- checks ------------------------------------------------------------------

    def _open(self) -> None:
        if self._closed:
            raise RuntimeError("the buffer is closed")

    def _check_now(self, now) -> None:
        _check_int(now, "now", 0)
        if now < self._last_now:
            raise ValueError(f"now must not go back in time: {now} < {self._last_now}")

    def _is_lost(self, seq: int) -> bool:
        i = bisect.bisect_right(self._lost_starts, seq) - 1
        return i >= 0 and seq < self._lost[i][1]

    # --- release and skip --------------------------------------------------------

    def _release(self, out: list[str]) -> None:
        while self._heap and self._heap[0] == self._next:
            out.append(self._buf.pop(heapq.heappop(self._heap)))
            self._next += 1
            self._counts["released"] += 1

    def _skip(self, out: list[str]) -> None:
        low = self._heap[0]
        self._counts["lost"] += low - self._next
        self._lost.append((self._next, low))
        self._lost_starts.append(self._next)
        self._next = low
        self._release(out)

    def _timeout(self, now: int, out: list[str]) -> None:
        while self._buf:
            while self._arrivals[0][1] not in self._buf:  # released since it arrived
                self._arrivals.popleft()
            if self._arrivals[0][0] > now - self._max_wait:
                return
            self._skip(out)

    # --- the calls ---------------------------------------------------------------

    def push(self, seq: int, token: str, now: int) -> list[str]:
        self._open()
        _check_int(seq, "seq", 0)
        if type(token) is not str:
            raise ValueError(f"token must be a str, got {token!r}")
        self._check_now(now)
        self._last_now = now
        out: list[str] = []
        if seq < self._next:
            self._counts["late" if self._is_lost(seq) else "duplicates"] += 1
        elif seq in self._buf:
            self._counts["duplicates"] += 1
        elif seq == self._next:
            out.append(token)
            self._next += 1
            self._counts["released"] += 1
            self._release(out)
        else:
            self._buf[seq] = token
            heapq.heappush(self._heap, seq)
            self._arrivals.append((now, seq))
        while len(self._buf) > self._capacity:
            self._skip(out)
        self._timeout(now, out)
        return out

    def tick(self, now: int) -> list[str]:
        self._open()
        self._check_now(now)
        self._last_now = now
        out: list[str] = []
        self._timeout(now, out)
        return out

    def close(self) -> list[str]:
        self._open()
        self._closed = True
        out: list[str] = []
        while self._buf:
            self._skip(out)
        return out

    def stats(self) -> dict[str, int]:
        return {"next": self._next, "buffered": len(self._buf), **self._counts}
