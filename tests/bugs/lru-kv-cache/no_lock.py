"""Bug: no lock at all; get_or_put looks up, calls the factory and puts, with nothing to stop two threads interleaving.

A copy of a correct solution with this one mistake, for the hidden suite to catch.
"""

from __future__ import annotations

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

    # --- the linked list -------------------------------------------------------

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
        return self._put_entry(key, blocks)

    def _put_entry(self, key: str, blocks: list[int]) -> list[str]:
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
        victim = self._tail.prev
        while self._used > self._capacity:
            behind = victim.prev
            if not victim.pins:
                self._unlink(victim)
                del self._nodes[victim.key]
                self._used -= len(victim.blocks)
                self._evictions += 1
                evicted.append(victim.key)
            victim = behind
        return evicted

    def get(self, key: str) -> list[int] | None:
        node = self._nodes.get(key) if isinstance(key, str) else None
        if node is None:
            self._misses += 1
            return None
        self._hits += 1
        self._touch(node)
        return list(node.blocks)

    def __contains__(self, key: object) -> bool:
        return key in self._nodes if isinstance(key, str) else False

    def __len__(self) -> int:
        return len(self._nodes)

    def keys(self) -> list[str]:
        out = []
        node = self._head.next
        while node is not self._tail:
            out.append(node.key)
            node = node.next
        return out

    @property
    def used_blocks(self) -> int:
        return self._used

    @property
    def capacity(self) -> int:
        return self._capacity

    def stats(self) -> dict[str, int]:
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}

    # --- level 2 --------------------------------------------------------------

    def _node(self, key: str) -> _Node:
        node = self._nodes.get(key) if isinstance(key, str) else None
        if node is None:
            raise KeyError(key)
        return node

    def pin(self, key: str) -> None:
        node = self._node(key)
        if node.pins == 0:
            self._pinned_blocks += len(node.blocks)
        node.pins += 1

    def unpin(self, key: str) -> None:
        node = self._node(key)
        if node.pins == 0:
            raise ValueError(f"unpin of {key!r}, which is not pinned")
        node.pins -= 1
        if node.pins == 0:
            self._pinned_blocks -= len(node.blocks)

    def pin_count(self, key: str) -> int:
        return self._node(key).pins

    def get_block(self, key: str, index: int) -> int:
        node = self._node(key)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"index must be an int, got {type(index).__name__}")
        # no negative indexing: -1 is out of range, not the last block
        if not 0 <= index < len(node.blocks):
            raise IndexError(f"index {index} out of range for {len(node.blocks)} blocks")
        return node.blocks[index]

    def remove(self, key: str) -> list[int]:
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
        node = self._nodes.get(key)
        if node is not None:
            self._hits += 1
            self._touch(node)
            return list(node.blocks)
        self._misses += 1
        blocks = _checked_blocks(factory())
        self._put_entry(key, blocks)
        return list(blocks)
