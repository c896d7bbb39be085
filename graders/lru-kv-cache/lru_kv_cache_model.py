"""Helpers for the lru-kv-cache hidden suite: a slow, obviously-correct model, thread tools, and a
filled cache and its snapshot for the level files.

`ModelCache` keeps its entries in a plain Python list, MRU first, and recomputes everything by
scanning it: no linked list, no running totals. It is written from PROMPT.md alone, so that the
property tests compare an implementation against the text rather than against the reference.

Left out: thread safety (the model is only ever driven from one thread).
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager


class ModelCacheFull(Exception):
    """The model's CacheFullError (compared by name with the implementation's)."""


class ModelCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: list[list] = []  # [key, blocks, pins], MRU first
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    # --- views ----------------------------------------------------------------

    def _find(self, key) -> list | None:
        for entry in self.entries:
            if entry[0] == key and isinstance(key, str):
                return entry
        return None

    def keys(self) -> list[str]:
        return [entry[0] for entry in self.entries]

    def used_blocks(self) -> int:
        return sum(len(entry[1]) for entry in self.entries)

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "evictions": self.evictions}

    # --- operations (exceptions are returned as their class, never raised) -----

    def put(self, key: str, blocks: list[int]):
        if len(blocks) > self.capacity:
            return ValueError
        others = [entry for entry in self.entries if entry[0] != key]
        pinned = sum(len(entry[1]) for entry in others if entry[2] > 0)
        if pinned + len(blocks) > self.capacity:
            return ModelCacheFull
        old = self._find(key)
        entries = [[key, list(blocks), old[2] if old else 0]] + others
        evicted = []
        while sum(len(entry[1]) for entry in entries) > self.capacity:
            # the LRU unpinned entry; index 0 is the entry being put, never evicted
            victim = max(i for i in range(1, len(entries)) if entries[i][2] == 0)
            evicted.append(entries.pop(victim)[0])
        self.entries = entries
        self.evictions += len(evicted)
        return evicted

    def get(self, key: str):
        entry = self._find(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self.entries.remove(entry)
        self.entries.insert(0, entry)
        return list(entry[1])

    def pin(self, key: str):
        entry = self._find(key)
        if entry is None:
            return KeyError
        entry[2] += 1
        return None

    def unpin(self, key: str):
        entry = self._find(key)
        if entry is None:
            return KeyError
        if entry[2] == 0:
            return ValueError
        entry[2] -= 1
        return None

    def pin_count(self, key: str):
        entry = self._find(key)
        return KeyError if entry is None else entry[2]

    def get_block(self, key: str, index: int):
        entry = self._find(key)
        if entry is None:
            return KeyError
        if index < 0 or index >= len(entry[1]):
            return IndexError
        return entry[1][index]

    def remove(self, key: str):
        entry = self._find(key)
        if entry is None:
            return KeyError
        if entry[2] > 0:
            return ValueError
        self.entries.remove(entry)
        return list(entry[1])

    def get_or_put(self, key: str, blocks: list[int] | None):
        """blocks None stands for a factory that raises RuntimeError."""
        entry = self._find(key)
        if entry is not None:
            return self.get(key)
        self.misses += 1
        if blocks is None:
            return RuntimeError
        result = self.put(key, blocks)
        return result if isinstance(result, type) else list(blocks)


def outcome(call):
    """Run call(); return its value, or the class of the exception it raised (by name for the
    cache-full error, so that the implementation's class matches the model's)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the point is to compare what was raised
        if type(exc).__name__ == "CacheFullError":
            return ModelCacheFull
        return type(exc)


class Hung(Exception):
    """Marks a call that did not return within its time limit (see outcome_within)."""


def outcome_within(call, seconds: float = 2.0):
    """outcome(call), run in a daemon thread; Hung if it has not returned after `seconds`.

    For calls that may block forever on a bug (waiting for a factory that already failed), so that
    the test fails with a message instead of hanging; the stuck thread is left waiting, idle."""
    box = []
    thread = threading.Thread(target=lambda: box.append(outcome(call)), daemon=True)
    thread.start()
    thread.join(seconds)
    return box[0] if box else Hung


def show(value) -> str:
    if value is Hung:
        return "did not return within 2 s (blocked)"
    if isinstance(value, type):
        return f"raised {value.__name__}" if value is not ModelCacheFull else "raised CacheFullError"
    return f"returned {value!r}"


# --- threads ----------------------------------------------------------------


@contextmanager
def fast_switching(interval: float = 1e-6):
    """Make the interpreter switch threads as often as it can, and restore the interval after."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@contextmanager
def racing(module):
    """Make races in `module` as likely as possible while the block runs: threads switch as often
    as the interpreter allows, and every thread started inside the block gives up the GIL
    (time.sleep(0)) each time it enters a function defined in the module's file, so that another
    thread runs between, say, an unlink and a push-front. Code that holds a lock there is unharmed:
    the other threads wait on the lock."""
    filename = module.__file__

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == filename:
            time.sleep(0)
        return None

    threading.settrace(tracer)
    try:
        with fast_switching():
            yield
    finally:
        threading.settrace(None)


def run_threads(targets, timeout: float = 10.0) -> list[BaseException]:
    """Start one daemon thread per callable behind a barrier, join them, and return the
    exceptions they raised. A thread still running after `timeout` seconds fails the test."""
    barrier = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def wrap(fn):
        def body():
            try:
                barrier.wait()
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
        return body

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    alive = sum(t.is_alive() for t in threads)
    if alive:
        raise AssertionError(
            f"{alive} of {len(threads)} threads were still running after {timeout:.0f} s: "
            "a deadlock, a lost wake-up or a corrupted linked list"
        )
    return errors


def filled(impl, capacity, *entries):
    """A cache with `entries` ((key, blocks), ...) put in order, so the last one is MRU."""
    cache = impl.KVBlockCache(capacity)
    for key, blocks in entries:
        cache.put(key, blocks)
    return cache


def snapshot(cache):
    return {"keys": cache.keys(), "used": cache.used_blocks, "len": len(cache), "stats": cache.stats()}
