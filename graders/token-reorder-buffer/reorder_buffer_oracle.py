"""Shared helpers of the token-reorder-buffer hidden suite: a slow model written from PROMPT.md,
the reference loaded for side-by-side timing, and assertion helpers.

`Model` shares no code with the reference: its buffer is a plain list of (seq, token, arrival),
searched with min() every time, and it remembers every lost seq in a set. Slow and obviously right,
for small inputs.
"""

from __future__ import annotations


from kata.checks import check, reference_at  # noqa: F401 - check: the suite imports it from here


class Model:
    def __init__(self, capacity, max_wait):
        self.capacity, self.max_wait = capacity, max_wait
        self.next, self.buffer, self.lost_seqs, self.closed, self.last = 0, [], set(), False, 0
        self.counts = {"released": 0, "duplicates": 0, "late": 0, "lost": 0}

    def _release(self, out):
        while any(s == self.next for s, _, _ in self.buffer):
            entry = next(e for e in self.buffer if e[0] == self.next)
            self.buffer.remove(entry)
            out.append(entry[1])
            self.next += 1
            self.counts["released"] += 1

    def _skip(self, out):
        low = min(s for s, _, _ in self.buffer)
        self.lost_seqs.update(range(self.next, low))
        self.counts["lost"] += low - self.next
        self.next = low
        self._release(out)

    def _timeout(self, now, out):
        while self.buffer and min(a for _, _, a in self.buffer) + self.max_wait <= now:
            self._skip(out)

    def push(self, seq, token, now):
        assert not self.closed and now >= self.last
        self.last = now
        out = []
        if seq in self.lost_seqs:
            self.counts["late"] += 1
        elif seq < self.next or any(s == seq for s, _, _ in self.buffer):
            self.counts["duplicates"] += 1
        else:
            self.buffer.append((seq, token, now))
            self._release(out)
        while len(self.buffer) > self.capacity:
            self._skip(out)
        self._timeout(now, out)
        return out

    def tick(self, now):
        assert not self.closed and now >= self.last
        self.last = now
        out = []
        self._timeout(now, out)
        return out

    def close(self):
        self.closed = True
        out = []
        while self.buffer:
            self._skip(out)
        return out

    def stats(self):
        return {"next": self.next, "buffered": len(self.buffer), **self.counts}


# --- the reference, for side-by-side timing -------------------------------------

# what a solution too slow for the timing test most likely does
SLOW_HINT = "is the buffer scanned for its smallest seq or its oldest token on every call?"


reference = reference_at(__file__, "solutions/token-reorder-buffer.py")  # call only inside a baseline measure
