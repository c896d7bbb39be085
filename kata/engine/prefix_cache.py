"""The prefix cache's index: which physical block holds which prompt prefix, checked on every hit.

A full block's key is a SHA-256 digest of its parent's key, the tenant's salt and its own token
ids, so the key names the whole prefix up to the block's end and a different tenant never gets
the same key. A key is only a fast way to find a candidate: every hit is verified before it is
used. The index keeps, for each cached block, its token ids and the registration it extends (its
parent's serial number, or the salt for a prompt's first block), so a hit counts only if the
block holds exactly these tokens *after exactly this verified prefix*. A hash collision, even a
forced one (tests inject a constant hash function), can cost a hit but never share a block.

    index = PrefixIndex()
    keys = index.keys(block_size=2, num_tokens=5, token_ids=[1, 2, 3, 4, 9])   # 2 full blocks
    index.register(block=7, key=keys[0], tokens=(1, 2), parent=root(None))   -> serial 1
    index.lookup(keys, [1, 2, 3, 4, 9], 2, None, max_blocks=2)  -> [7]   (block [3, 4] not cached)

The block pool (block_pool.py) asks it whether a block is cached and tells it when one is evicted.
`PrefixCache` adds what the block manager needs per sequence: its keys, the verified hits for a
new prompt, and how far its computed blocks have been indexed.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

HashFn = Callable[[bytes], bytes]
ROOT_KEY = b""  # the parent key of a prompt's first block


def root(cache_salt: str | None) -> tuple[str | None]:
    """What a prompt's first block extends: its tenant (other blocks extend a serial, an int)."""
    return (cache_salt,)


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def hash_block(parent_key: bytes, token_ids: Sequence[int], cache_salt: str | None = None,
               hash_fn: HashFn = sha256) -> bytes:
    """Key of one full block: a digest of the parent's key, the salt and the block's token ids.

    Example: hash_block(hash_block(ROOT_KEY, [1, 2]), [3, 4]) names the prefix [1, 2, 3, 4];
    hash_block(ROOT_KEY, [1, 2], "tenant-a") != hash_block(ROOT_KEY, [1, 2], "tenant-b").
    """
    salt = b"" if cache_salt is None else cache_salt.encode()
    return hash_fn(b"".join((parent_key, len(salt).to_bytes(4, "little"), salt,
                             array("q", token_ids).tobytes())))


class PrefixIndex:
    def __init__(self, hash_fn: HashFn = sha256) -> None:
        self.hash_fn = hash_fn
        self.block_of: dict[bytes, int] = {}  # key -> cached block
        self.key: dict[int, bytes] = {}  # cached block -> key
        self.tokens: dict[int, tuple[int, ...]] = {}  # cached block -> its token ids
        self.parent: dict[int, int | tuple[str | None]] = {}  # -> parent serial, or (salt,)
        self.serial: dict[int, int] = {}  # cached block -> its registration's serial number
        self._next_serial = 1

    def __len__(self) -> int:
        return len(self.block_of)

    def is_cached(self, block: int) -> bool:
        return block in self.key

    def keys(self, block_size: int, num_tokens: int, token_ids: Sequence[int],
             cache_salt: str | None = None) -> list[bytes]:
        """Chained keys of the full blocks of token_ids[:num_tokens]."""
        keys, key = [], ROOT_KEY
        for i in range(min(len(token_ids), num_tokens) // block_size):
            key = hash_block(key, token_ids[i * block_size:(i + 1) * block_size], cache_salt,
                             self.hash_fn)
            keys.append(key)
        return keys

    def lookup(self, keys: list[bytes], token_ids: Sequence[int], block_size: int,
               cache_salt: str | None, max_blocks: int) -> list[int]:
        """Cached blocks for the longest verified prefix of keys[:max_blocks]."""
        hits: list[int] = []
        parent: int | tuple[str | None] = root(cache_salt)
        for i, key in enumerate(keys[:max_blocks]):
            block = self.block_of.get(key)
            if (block is None or self.parent[block] != parent
                    or self.tokens[block] != tuple(token_ids[i * block_size:(i + 1) * block_size])):
                break  # a miss, or a collision caught: never share a block it cannot vouch for
            hits.append(block)
            parent = self.serial[block]
        return hits

    def register(self, block: int, key: bytes, tokens: tuple[int, ...],
                 parent: int | tuple[str | None]) -> int | None:
        """Index a computed full block; returns the serial its children name as their parent.

        If the key is taken by a block holding the same verified prefix (computed twice at once),
        this copy stays private and the other's serial is returned; if it is taken by a different
        prefix (a collision), None: the chain stops being cached here.
        """
        other = self.block_of.get(key)
        if other is not None:
            same = self.tokens[other] == tokens and self.parent[other] == parent
            return self.serial[other] if same else None
        serial, self._next_serial = self._next_serial, self._next_serial + 1
        self.block_of[key], self.key[block], self.tokens[block] = block, key, tokens
        self.parent[block], self.serial[block] = parent, serial
        return serial

    def evict(self, block: int) -> None:
        """The pool hands the block out anew: forget what it held."""
        del self.block_of[self.key.pop(block)]
        del self.tokens[block], self.parent[block], self.serial[block]

    def check(self) -> None:
        for key, block in self.block_of.items():
            assert self.key[block] == key, f"cache entry -> block {block} is stale"
        assert len(self.key) == len(self.tokens) == len(self.parent) == len(self.serial) == len(
            self.block_of), "the index's tables disagree"


@dataclass(slots=True)
class _Progress:
    """A sequence's cacheable full blocks: their keys and tokens, and how far they are indexed."""

    keys: list[bytes]
    token_ids: Sequence[int]
    salt: str | None
    num_registered: int  # leading blocks indexed (or found indexed)
    parent: int | tuple[str | None] | None  # what the next block extends; None: chain broken


class PrefixCache:
    """Per-sequence prefix-cache state over one PrefixIndex.

    cache.plan(block_size, num_tokens, token_ids, salt)  -> (keys, verified hit blocks)
    cache.start(seq_id, keys, token_ids, salt, hits)     a new sequence (hits already indexed)
    cache.register(seq_id, table, block_size, num_computed_tokens)   index newly computed blocks
    """

    def __init__(self, index: PrefixIndex) -> None:
        self.index = index
        self._seqs: dict[int, _Progress] = {}

    def plan(self, block_size: int, num_tokens: int, token_ids: Sequence[int],
             salt: str | None) -> tuple[list[bytes], list[int]]:
        """Keys of the prompt's full blocks and the cached blocks to reuse. The last known token
        is always recomputed (its logits are needed): hits stop short of it."""
        keys = self.index.keys(block_size, num_tokens, token_ids, salt)
        num_known = min(len(token_ids), num_tokens)
        max_hits = (num_known - 1) // block_size
        hits = self.index.lookup(keys, token_ids, block_size, salt, max_hits) if keys else []
        return keys, hits

    def start(self, seq_id: int, keys: list[bytes], token_ids: Sequence[int], salt: str | None,
              hits: list[int]) -> None:
        parent = self.index.serial[hits[-1]] if hits else root(salt)
        self._seqs[seq_id] = _Progress(keys, token_ids, salt, len(hits), parent)

    def fork(self, parent_seq_id: int, child_seq_id: int) -> None:
        p = self._seqs.get(parent_seq_id)
        if p is not None:
            self._seqs[child_seq_id] = _Progress(p.keys, p.token_ids, p.salt, p.num_registered,
                                                 p.parent)

    def forget(self, seq_id: int) -> None:
        self._seqs.pop(seq_id, None)

    def restart(self, seq_id: int) -> int:
        """The sequence's blocks were replaced (swapped back in): index them again from the
        start. Returns the number of blocks that were indexed before."""
        p = self._seqs.get(seq_id)
        if p is None:
            return 0
        done, p.num_registered, p.parent = p.num_registered, 0, root(p.salt)
        return done

    def register(self, seq_id: int, table: list[int], block_size: int,
                 num_computed_tokens: int) -> None:
        """Index the sequence's newly complete, cacheable blocks of its first
        num_computed_tokens tokens."""
        p = self._seqs.get(seq_id)
        if p is None:
            return
        upto = min(num_computed_tokens // block_size, len(p.keys))
        for i in range(p.num_registered, upto):
            if p.parent is None:  # a collision broke the chain: the rest stays private
                break
            tokens = tuple(p.token_ids[i * block_size:(i + 1) * block_size])
            p.parent = self.index.register(table[i], p.keys[i], tokens, p.parent)
        p.num_registered = max(p.num_registered, upto)
