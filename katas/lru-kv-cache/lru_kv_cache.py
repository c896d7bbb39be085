"""LRU KV-block cache: your solution goes here. Read PROMPT.md first.

Standard library only. Use a dict and a doubly linked list that you write yourself (not
collections.OrderedDict, not functools.lru_cache), so that get and put run in O(1).

Example:
    cache = KVBlockCache(4)
    cache.put("a", [0, 1])   -> []
    cache.put("b", [2, 3])   -> []
    cache.put("c", [4])      -> ['a']
    cache.keys()             -> ['c', 'b']
"""

from __future__ import annotations

from typing import Callable


class CacheFullError(Exception):
    """Raised by put when pinned entries hold too many blocks for the new entry to fit."""


class KVBlockCache:
    """An LRU cache whose size is counted in KV blocks."""

    def __init__(self, capacity: int) -> None:
        """capacity: the number of blocks the cache may hold, an int >= 1 (not a bool).

        Raises ValueError (message contains 'capacity') otherwise.
        """
        # TODO
        raise NotImplementedError

    # --- level 1: the LRU core -------------------------------------------------

    def put(self, key: str, blocks: list[int]) -> list[str]:
        """Insert or replace the entry, make it MRU, evict LRU entries until used_blocks <= capacity.

        Returns the evicted keys in eviction order (LRU first), [] if none.
        Raises TypeError (key not a str), ValueError (blocks invalid, or larger than capacity).
        Level 2: never evicts pinned entries; raises CacheFullError and evicts nothing when
        pinned entries (other than key) leave too little room.

        Example: capacity 4, holding 'a' -> [0, 1] and 'b' -> [2] with 'b' least recently used:
            put("c", [3, 4]) -> ['b']
        """
        # TODO
        raise NotImplementedError

    def get(self, key: str) -> list[int] | None:
        """A hit makes the entry MRU and returns a new list of its block ids; a miss returns None."""
        # TODO
        raise NotImplementedError

    def __contains__(self, key: object) -> bool:
        """Whether the key is present. Does not change recency or statistics."""
        # TODO
        raise NotImplementedError

    def __len__(self) -> int:
        """The number of entries."""
        # TODO
        raise NotImplementedError

    def keys(self) -> list[str]:
        """Every key, most recently used first. Does not change recency."""
        # TODO
        raise NotImplementedError

    @property
    def used_blocks(self) -> int:
        """The sum of the entry sizes."""
        # TODO
        raise NotImplementedError

    @property
    def capacity(self) -> int:
        """The capacity given to the constructor."""
        # TODO
        raise NotImplementedError

    def stats(self) -> dict[str, int]:
        """A new dict {'hits': int, 'misses': int, 'evictions': int}."""
        # TODO
        raise NotImplementedError

    # --- level 2: pinning and a bounds-checked block lookup --------------------

    def pin(self, key: str) -> None:
        """Add 1 to the entry's pin count. KeyError if absent. No recency change."""
        # TODO
        raise NotImplementedError

    def unpin(self, key: str) -> None:
        """Subtract 1 from the pin count. KeyError if absent, ValueError if the count is 0."""
        # TODO
        raise NotImplementedError

    def pin_count(self, key: str) -> int:
        """The entry's pin count. KeyError if absent."""
        # TODO
        raise NotImplementedError

    def get_block(self, key: str, index: int) -> int:
        """The block id at `index`, 0 <= index < size (no negative indexing).

        KeyError if the key is absent (checked first), TypeError if index is not an int (or is a
        bool), IndexError if it is out of range. No recency or statistics change.
        """
        # TODO
        raise NotImplementedError

    def remove(self, key: str) -> list[int]:
        """Remove the entry and return its block ids. KeyError if absent, ValueError if pinned."""
        # TODO
        raise NotImplementedError

    # --- level 3: safe under concurrent use ------------------------------------

    def get_or_put(self, key: str, factory: Callable[[], list[int]]) -> list[int]:
        """The entry's block ids; if absent, insert factory() as put would and return it.

        Under contention factory runs exactly once per absent key: other callers for the same
        key wait for it, then count a hit. Every method must be safe under concurrent use.
        """
        # TODO
        raise NotImplementedError
