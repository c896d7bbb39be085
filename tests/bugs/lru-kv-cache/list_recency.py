"""Bug: recency is a Python list, so every get and eviction does an O(n) list.remove / pop(0).

A correct solution in every other way, for the hidden suite's complexity test to catch.
"""

from __future__ import annotations

import threading
from typing import Callable


class CacheFullError(Exception):
    """Raised by put when pinned entries hold too many blocks for the new entry to fit."""


def _check_key(key: object) -> None:
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")


def _checked_blocks(blocks: object) -> list[int]:
    if not isinstance(blocks, list) or not blocks:
        raise ValueError(f"blocks must be a non-empty list of block ids, got {blocks!r}")
    for block in blocks:
        if not isinstance(block, int) or isinstance(block, bool) or block < 0:
            raise ValueError(f"blocks must hold ints >= 0, got {block!r}")
    return list(blocks)


class KVBlockCache:
    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self._capacity = capacity
        self._blocks: dict[str, list[int]] = {}
        self._pins: dict[str, int] = {}
        self._order: list[str] = []  # LRU first, MRU last
        self._used = 0
        self._pinned_blocks = 0
        self._hits = self._misses = self._evictions = 0
        self._lock = threading.RLock()

    def put(self, key: str, blocks: list[int]) -> list[str]:
        _check_key(key)
        blocks = _checked_blocks(blocks)
        with self._lock:
            size = len(blocks)
            if size > self._capacity:
                raise ValueError(f"blocks: {size} blocks exceed the capacity {self._capacity}")
            old = self._blocks.get(key)
            pinned_elsewhere = self._pinned_blocks
            if old is not None and self._pins[key]:
                pinned_elsewhere -= len(old)
            if pinned_elsewhere + size > self._capacity:
                raise CacheFullError(f"{size} blocks do not fit")
            if old is not None:
                self._used -= len(old)
                if self._pins[key]:
                    self._pinned_blocks += size - len(old)
                self._order.remove(key)
            else:
                self._pins[key] = 0
            self._blocks[key] = blocks
            self._order.append(key)
            self._used += size
            evicted = []
            i = 0
            while self._used > self._capacity:
                victim = self._order[i]
                if self._pins[victim]:
                    i += 1
                    continue
                self._order.pop(i)
                self._used -= len(self._blocks.pop(victim))
                del self._pins[victim]
                self._evictions += 1
                evicted.append(victim)
            return evicted

    def get(self, key: str) -> list[int] | None:
        with self._lock:
            blocks = self._blocks.get(key) if isinstance(key, str) else None
            if blocks is None:
                self._misses += 1
                return None
            self._hits += 1
            self._order.remove(key)
            self._order.append(key)
            return list(blocks)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return isinstance(key, str) and key in self._blocks

    def __len__(self) -> int:
        with self._lock:
            return len(self._blocks)

    def keys(self) -> list[str]:
        with self._lock:
            return self._order[::-1]

    @property
    def used_blocks(self) -> int:
        with self._lock:
            return self._used

    @property
    def capacity(self) -> int:
        return self._capacity

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}

    def _present(self, key: str) -> None:
        if not isinstance(key, str) or key not in self._blocks:
            raise KeyError(key)

    def pin(self, key: str) -> None:
        with self._lock:
            self._present(key)
            if self._pins[key] == 0:
                self._pinned_blocks += len(self._blocks[key])
            self._pins[key] += 1

    def unpin(self, key: str) -> None:
        with self._lock:
            self._present(key)
            if self._pins[key] == 0:
                raise ValueError(f"{key!r} is not pinned")
            self._pins[key] -= 1
            if self._pins[key] == 0:
                self._pinned_blocks -= len(self._blocks[key])

    def pin_count(self, key: str) -> int:
        with self._lock:
            self._present(key)
            return self._pins[key]

    def get_block(self, key: str, index: int) -> int:
        with self._lock:
            self._present(key)
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"index must be an int, got {type(index).__name__}")
            blocks = self._blocks[key]
            if not 0 <= index < len(blocks):
                raise IndexError(f"index {index} out of range")
            return blocks[index]

    def remove(self, key: str) -> list[int]:
        with self._lock:
            self._present(key)
            if self._pins[key]:
                raise ValueError(f"{key!r} is pinned")
            self._order.remove(key)
            del self._pins[key]
            blocks = self._blocks.pop(key)
            self._used -= len(blocks)
            return blocks

    def get_or_put(self, key: str, factory: Callable[[], list[int]]) -> list[int]:
        # Simple and correct: the factory runs under the (re-entrant) lock.
        _check_key(key)
        with self._lock:
            blocks = self._blocks.get(key)
            if blocks is not None:
                self._hits += 1
                self._order.remove(key)
                self._order.append(key)
                return list(blocks)
            self._misses += 1
            blocks = _checked_blocks(factory())
            self.put(key, blocks)
            return list(blocks)
