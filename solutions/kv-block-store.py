"""Reference solution for kv-block-store: KV-cache blocks per tenant, with TTLs and history.

One structure serves every level. Each block (tenant, key) keeps its whole history: a list of
versions (timestamp, size, expiry), oldest first, where a size of None means "removed at that
timestamp" and an expiry of None means "never expires". The store at any timestamp `at` is, for
every key, the last version written at or before `at`, kept if it is held at `at`. The current
store is the same read at the current timestamp, so levels 1-3 need nothing else, and level 4
(snapshots of the past, restore) reads the same lists at an earlier timestamp.

Calls without timestamps (levels 1 and 2) use each query's index as its timestamp: it increases
from query to query, and without a TTL nothing expires.
"""

from __future__ import annotations

from bisect import bisect_right

_Version = tuple[int, int | None, int | None]  # (timestamp, size or None, expiry or None)


def _listing(sizes: dict[str, int], limit: int | None = None) -> str:
    """'name(size)' items ordered by size descending, then name ascending; the first `limit`."""
    ranked = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))
    return ",".join(f"{name}({size})" for name, size in ranked[:limit])


class _Store:
    def __init__(self) -> None:
        self.history: dict[str, dict[str, list[_Version]]] = {}  # tenant -> key -> versions
        self.now = 0

    # --- reading the store at a timestamp ---------------------------------------------------

    def _block_at(self, tenant: str, key: str, at: int) -> tuple[int, int | None] | None:
        """(size, expiry) of the block as held at `at`, or None when it is not held then."""
        versions = self.history.get(tenant, {}).get(key, [])
        # the last version written at or before `at`: a write at `at` itself is included
        i = bisect_right(versions, at, key=lambda version: version[0])
        if i == 0:
            return None
        _, size, expiry = versions[i - 1]
        if size is None or (expiry is not None and expiry <= at):
            return None  # removed, or expired: a block is held while at < expiry
        return size, expiry

    def _blocks_at(self, tenant: str, at: int) -> dict[str, tuple[int, int | None]]:
        """key -> (size, expiry) of every block the tenant holds at `at`."""
        held = {}
        for key in self.history.get(tenant, {}):
            block = self._block_at(tenant, key, at)
            if block is not None:
                held[key] = block
        return held

    def _write(self, tenant: str, key: str, size: int | None, expiry: int | None) -> None:
        # one write per key per query, so each key's versions stay sorted by timestamp
        self.history.setdefault(tenant, {}).setdefault(key, []).append((self.now, size, expiry))

    # --- level 1 ----------------------------------------------------------------------------

    def put(self, tenant: str, key: str, size: str, ttl: str | None = None) -> str:
        new = self._block_at(tenant, key, self.now) is None
        self._write(tenant, key, int(size), None if ttl is None else self.now + int(ttl))
        return "true" if new else "false"

    def get(self, tenant: str, key: str) -> str:
        block = self._block_at(tenant, key, self.now)
        return "" if block is None else str(block[0])

    def delete(self, tenant: str, key: str) -> str:
        if self._block_at(tenant, key, self.now) is None:
            return "false"
        self._write(tenant, key, None, None)
        return "true"

    def usage(self, tenant: str) -> str:
        held = self._blocks_at(tenant, self.now)
        return f"{len(held)},{sum(size for size, _ in held.values())}"

    def drop(self, tenant: str) -> str:
        held = self._blocks_at(tenant, self.now)
        for key in held:
            self._write(tenant, key, None, None)
        return str(len(held))

    # --- level 2 ----------------------------------------------------------------------------

    def scan(self, tenant: str, prefix: str) -> str:
        held = self._blocks_at(tenant, self.now)
        return _listing({key: size for key, (size, _) in held.items() if key.startswith(prefix)})

    def top(self, n: str) -> str:
        totals = {}
        for tenant in self.history:
            held = self._blocks_at(tenant, self.now)
            if held:  # a tenant holding only 0-byte blocks is listed, one holding none is not
                totals[tenant] = sum(size for size, _ in held.values())
        return _listing(totals, int(n))

    # --- level 3 ----------------------------------------------------------------------------

    def ttl(self, tenant: str, key: str) -> str:
        block = self._block_at(tenant, key, self.now)
        if block is None:
            return ""
        expiry = block[1]
        return "-1" if expiry is None else str(expiry - self.now)

    # --- level 4 ----------------------------------------------------------------------------

    def snapshot(self, tenant: str, at: str) -> str:
        held = self._blocks_at(tenant, int(at))
        return _listing({key: size for key, (size, _) in held.items()})

    def restore(self, tenant: str, at: str) -> str:
        then = int(at)
        past = self._blocks_at(tenant, then)  # read before writing: `at` may equal now
        for key in self._blocks_at(tenant, self.now):
            if key not in past:
                self._write(tenant, key, None, None)
        for key, (size, expiry) in past.items():
            # the lifetime left at `at` (expiry - at) starts again now
            self._write(tenant, key, size, None if expiry is None else self.now + expiry - then)
        return str(len(past))


_OPERATIONS = {
    "PUT": _Store.put, "GET": _Store.get, "DELETE": _Store.delete, "USAGE": _Store.usage,
    "DROP": _Store.drop, "SCAN": _Store.scan, "TOP": _Store.top,
    "PUT_WITH_TTL": _Store.put, "TTL": _Store.ttl,  # PUT_WITH_TTL is PUT with a fourth argument
    "SNAPSHOT": _Store.snapshot, "RESTORE": _Store.restore,
}


def solution(queries: list[list[str]]) -> list[str]:
    """One answer per query, processed in order from an empty store."""
    store = _Store()
    answers = []
    for index, query in enumerate(queries):
        if query[0].isdigit():  # a timestamped query: [timestamp, operation, arguments...]
            store.now, operation, args = int(query[0]), query[1], query[2:]
        else:  # [operation, arguments...]: the index serves as the timestamp
            store.now, operation, args = index, query[0], query[1:]
        answers.append(_OPERATIONS[operation](store, *args))
    return answers
