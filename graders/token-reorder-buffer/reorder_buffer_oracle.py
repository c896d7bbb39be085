"""Shared helpers of the token-reorder-buffer hidden suite: a slow model written from PROMPT.md,
the reference loaded for side-by-side timing, and assertion helpers.

`Model` shares no code with the reference: its buffer is a plain list of (seq, token, arrival),
searched with min() every time, and it remembers every lost seq in a set. Slow and obviously right,
for small inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kata import checks
from kata.checks import check, load_reference  # noqa: F401 - check: the suite imports it from here
from kata.strict import same


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



def expect_raise(fn, kind, word, call: str) -> None:
    """fn() raises `kind`; for a ValueError its message contains `word`."""
    __tracebackhide__ = True
    try:
        got = fn()
    except kind as exc:
        if word is not None:
            assert word in str(exc), f"Called {call}. Raised {kind.__name__}({str(exc)!r}), expected it to name {word!r}."
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"Called {call}. Raised {type(exc).__name__}({exc}), expected {kind.__name__}"
                    + (f" naming {word!r}." if word else "."), pytrace=False)
    pytest.fail(f"Called {call}. Returned {got!r}, expected {kind.__name__}" + (f" naming {word!r}." if word else "."),
                pytrace=False)


# --- the reference, for side-by-side timing -------------------------------------

SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "token-reorder-buffer.py"
# what a solution too slow for the timing test most likely does
SLOW_HINT = "is the buffer scanned for its smallest seq or its oldest token on every call?"


def reference():
    """The reference solution, imported under its own module name (not the learner's)."""
    return load_reference(SOLUTION, "reorder_buffer_reference")


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, **how):
    """kata.checks.compare_speed with this kata's hint: (the implementation's result, the
    reference's answer); `how`: its answer= and ref_setup=."""
    __tracebackhide__ = True
    return checks.compare_speed(call, impl_fn, ref_fn, factor, floor, hint=SLOW_HINT, **how)
