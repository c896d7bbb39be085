"""Bug: each eviction finds the LRU entry by walking the whole list from the MRU end (O(n)).

A copy of a correct solution with this one mistake, for the hidden suite to catch.
"""

from __future__ import annotations

import threading
from typing import Callable


class CacheFullError(Exception):
    """Raised by put when pinned entries hold too many blocks for the new entry to fit."""


class _Node:
    """One entry, and its place in the recency list."""

    __slots__ = ("key", "blocks", "pins", "prev", "next")

    def __init__(self, key: str | None, blocks: list[int] | None) -> None:
        self.key = key
        self.blocks = blocks  # list[int], owned by the cache
        self.pins = 0
        self.prev: _Node | None = None
        self.next: _Node | None = None


def _check_key(key: object) -> None:
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")


def _checked_blocks(blocks: object) -> list[int]:
    """A copy of `blocks` after checking it is a non-empty list of block ids (ints >= 0)."""
    if not isinstance(blocks, list) or not blocks:
        raise ValueError(f"blocks must be a non-empty list of block ids, got {blocks!r}")
    for block in blocks:
        if not isinstance(block, int) or isinstance(block, bool) or block < 0:
            raise ValueError(f"blocks must hold ints >= 0, got {block!r}")
    return list(blocks)


class KVBlockCache:
    """An LRU cache whose size is counted in KV blocks."""

    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self._capacity = capacity
        self._nodes: dict[str, _Node] = {}  # key -> node
        # Sentinels: head.next is the MRU entry, tail.prev the LRU entry. They save every
        # link and unlink from checking for None at the ends.
        self._head = _Node(None, None)
        self._tail = _Node(None, None)
        self._head.next = self._tail
        self._tail.prev = self._head
        self._used = 0
        self._pinned_blocks = 0  # blocks held by entries whose pin count is > 0
        self._hits = 0
        self._misses = 0
        self._evictions = 0
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Event] = {}  # key -> set when its factory is done

    # --- the linked list (callers hold the lock) -----------------------------

    def _unlink(self, node: _Node) -> None:
        node.prev.next = node.next
        node.next.prev = node.prev

    def _push_front(self, node: _Node) -> None:
        node.prev = self._head
        node.next = self._head.next
        self._head.next.prev = node
        self._head.next = node

    def _touch(self, node: _Node) -> None:
        self._unlink(node)
        self._push_front(node)

    # --- level 1 --------------------------------------------------------------

    def put(self, key: str, blocks: list[int]) -> list[str]:
        _check_key(key)
        blocks = _checked_blocks(blocks)
        with self._lock:
            return self._put_locked(key, blocks)

    def _put_locked(self, key: str, blocks: list[int]) -> list[str]:
        size = len(blocks)
        if size > self._capacity:
            raise ValueError(f"blocks: an entry of {size} blocks exceeds the capacity {self._capacity}")
        node = self._nodes.get(key)
        # Check that the entry fits before changing anything: only unpinned entries can be
        # evicted, and the key's own old blocks are being replaced, not kept.
        pinned_elsewhere = self._pinned_blocks
        if node is not None and node.pins:
            pinned_elsewhere -= len(node.blocks)
        if pinned_elsewhere + size > self._capacity:
            raise CacheFullError(
                f"{size} blocks do not fit: pinned entries hold {pinned_elsewhere} of {self._capacity}"
            )

        if node is None:
            node = _Node(key, blocks)
            self._nodes[key] = node
            self._push_front(node)
        else:
            self._used -= len(node.blocks)
            if node.pins:
                self._pinned_blocks += size - len(node.blocks)
            node.blocks = blocks
            self._touch(node)
        self._used += size

        # Evict from the LRU end, skipping pinned entries. The check above guarantees enough
        # unpinned blocks behind `node` (which is at the MRU end), so the walk stops before it.
        evicted = []
        while self._used > self._capacity:
            victim = None
            walker = self._head.next
            while walker is not self._tail:  # the last unpinned entry is the LRU one
                if not walker.pins:
                    victim = walker
                walker = walker.next
            self._unlink(victim)
            del self._nodes[victim.key]
            self._used -= len(victim.blocks)
            self._evictions += 1
            evicted.append(victim.key)
        return evicted

    def get(self, key: str) -> list[int] | None:
        with self._lock:
            node = self._nodes.get(key) if isinstance(key, str) else None
            if node is None:
                self._misses += 1
                return None
            self._hits += 1
            self._touch(node)
            return list(node.blocks)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._nodes if isinstance(key, str) else False

    def __len__(self) -> int:
        with self._lock:
            return len(self._nodes)

    def keys(self) -> list[str]:
        with self._lock:
            out = []
            node = self._head.next
            while node is not self._tail:
                out.append(node.key)
                node = node.next
            return out

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

    # --- level 2 --------------------------------------------------------------

    def _node(self, key: str) -> _Node:
        node = self._nodes.get(key) if isinstance(key, str) else None
        if node is None:
            raise KeyError(key)
        return node

    def pin(self, key: str) -> None:
        with self._lock:
            node = self._node(key)
            if node.pins == 0:
                self._pinned_blocks += len(node.blocks)
            node.pins += 1

    def unpin(self, key: str) -> None:
        with self._lock:
            node = self._node(key)
            if node.pins == 0:
                raise ValueError(f"unpin of {key!r}, which is not pinned")
            node.pins -= 1
            if node.pins == 0:
                self._pinned_blocks -= len(node.blocks)

    def pin_count(self, key: str) -> int:
        with self._lock:
            return self._node(key).pins

    def get_block(self, key: str, index: int) -> int:
        with self._lock:
            node = self._node(key)
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"index must be an int, got {type(index).__name__}")
            # no negative indexing: -1 is out of range, not the last block
            if not 0 <= index < len(node.blocks):
                raise IndexError(f"index {index} out of range for {len(node.blocks)} blocks")
            return node.blocks[index]

    def remove(self, key: str) -> list[int]:
        with self._lock:
            node = self._node(key)
            if node.pins:
                raise ValueError(f"remove of {key!r}, which is pinned")
            self._unlink(node)
            del self._nodes[key]
            self._used -= len(node.blocks)
            return node.blocks

    # --- level 3 --------------------------------------------------------------

    def get_or_put(self, key: str, factory: Callable[[], list[int]]) -> list[int]:
        _check_key(key)
        while True:
            with self._lock:
                node = self._nodes.get(key)
                if node is not None:
                    self._hits += 1
                    self._touch(node)
                    return list(node.blocks)
                loading = self._loading.get(key)
                if loading is None:
                    # This caller runs the factory; later callers for the key wait on `loading`.
                    self._misses += 1
                    loading = self._loading[key] = threading.Event()
                    break
            loading.wait()  # someone else's factory is running: wait, then look again

        try:
            blocks = _checked_blocks(factory())  # outside the lock: other keys keep moving
            with self._lock:
                self._put_locked(key, blocks)
                return list(blocks)
        finally:
            with self._lock:
                del self._loading[key]
            loading.set()
