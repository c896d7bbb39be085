"""Shared helpers of the kv-block-store hidden suite: a slow oracle written from PROMPT.md and
random query streams (kata.checks.run_queries makes the calls and compares the answers).

`oracle(queries)` shares no code or structure with the reference: it keeps one flat dict
(tenant, key) -> (size, expiry) for the current store, and a full copy of that dict after every
query, so the state at a past timestamp is the last copy taken at or before it. Orderings use two
stable sorts instead of one key. Slow and obviously right.
"""

from __future__ import annotations

import random




# --- the oracle --------------------------------------------------------------------------------


def _held(state: dict, t: int | None) -> dict:
    """The entries of `state` held at timestamp t (None: a call without timestamps)."""
    return {tk: v for tk, v in state.items() if v[1] is None or (t is not None and t < v[1])}


def _ranked(pairs: dict) -> list[str]:
    """'name(n)' items, n descending, then name ascending (two stable sorts)."""
    by_name = sorted(pairs.items(), key=lambda p: p[0])
    by_value = sorted(by_name, key=lambda p: p[1], reverse=True)
    return [f"{name}({n})" for name, n in by_value]


def oracle(queries: list[list[str]]) -> list[str]:
    timed = bool(queries) and queries[0][0].isdigit()
    store: dict[tuple[str, str], tuple[int, int | None]] = {}
    past: list[tuple[int, dict]] = []  # (timestamp, copy of the store after that query)
    out = []
    for query in queries:
        now, op, args = (int(query[0]), query[1], query[2:]) if timed else (None, query[0], query[1:])
        cur = _held(store, now)

        def state_at(at: int) -> dict:
            chosen: dict = {}
            for ts, snap in past:
                if ts <= at:
                    chosen = snap
            return _held(chosen, at)

        if op in ("PUT", "PUT_WITH_TTL"):
            tenant, key, size = args[0], args[1], int(args[2])
            expiry = now + int(args[3]) if op == "PUT_WITH_TTL" else None
            out.append("false" if (tenant, key) in cur else "true")
            store[(tenant, key)] = (size, expiry)
        elif op == "GET":
            v = cur.get((args[0], args[1]))
            out.append("" if v is None else str(v[0]))
        elif op == "DELETE":
            if (args[0], args[1]) in cur:
                del store[(args[0], args[1])]
                out.append("true")
            else:
                out.append("false")
        elif op == "USAGE":
            mine = [v[0] for (t, _), v in cur.items() if t == args[0]]
            out.append(f"{len(mine)},{sum(mine)}")
        elif op == "DROP":
            mine = [tk for tk in cur if tk[0] == args[0]]
            for tk in mine:
                del store[tk]
            out.append(str(len(mine)))
        elif op == "SCAN":
            tenant, prefix = args
            out.append(",".join(_ranked({k: v[0] for (t, k), v in cur.items()
                                         if t == tenant and k[:len(prefix)] == prefix})))
        elif op == "TOP":
            totals: dict[str, int] = {}
            for (t, _), v in cur.items():
                totals[t] = totals.get(t, 0) + v[0]
            out.append(",".join(_ranked(totals)[:int(args[0])]))
        elif op == "TTL":
            v = cur.get((args[0], args[1]))
            out.append("" if v is None else "-1" if v[1] is None else str(v[1] - now))
        elif op == "SNAPSHOT":
            then = state_at(int(args[1]))
            out.append(",".join(_ranked({k: v[0] for (t, k), v in then.items() if t == args[0]})))
        elif op == "RESTORE":
            at = int(args[1])
            then = state_at(at)
            for tk in [tk for tk in store if tk[0] == args[0]]:
                del store[tk]
            for (t, k), (size, expiry) in then.items():
                if t == args[0]:
                    store[(t, k)] = (size, None if expiry is None else now + (expiry - at))
            out.append(str(sum(1 for t, _ in then if t == args[0])))
        else:  # pragma: no cover - the suite sends only the prompt's operations
            raise AssertionError(f"unknown operation {op}")
        if timed:
            past.append((now, dict(store)))
    return out


# --- random query streams ----------------------------------------------------------------------

TENANTS = ["a", "b", "ab", "B"]
KEYS = ["k", "k1", "k10", "k9", "x:k", "K"]
SIZES = ["0", "1", "2", "9", "10", "64", str(2**53 + 1), str(10**18)]
PREFIXES = ["", "k", "k1", "x", "x:", "kk", "K"]
TOPS = ["0", "1", "2", "3", "10"]


def body(op: str, tenant: str, key: str, size: str, prefix: str = "", n: str = "1", ttl: int = 1,
         at: int = 0) -> list[str]:
    """A query (without timestamp) of operation `op` from drawn parts."""
    return {"PUT": ["PUT", tenant, key, size], "GET": ["GET", tenant, key], "DELETE": ["DELETE", tenant, key],
            "USAGE": ["USAGE", tenant], "DROP": ["DROP", tenant], "SCAN": ["SCAN", tenant, prefix],
            "TOP": ["TOP", n], "PUT_WITH_TTL": ["PUT_WITH_TTL", tenant, key, size, str(ttl)],
            "TTL": ["TTL", tenant, key], "SNAPSHOT": ["SNAPSHOT", tenant, str(at)],
            "RESTORE": ["RESTORE", tenant, str(at)]}[op]


PLAIN_OPS = {1: ["PUT", "PUT", "PUT", "GET", "DELETE", "USAGE", "DROP"]}
PLAIN_OPS[2] = PLAIN_OPS[1] + ["SCAN", "SCAN", "TOP"]
TIMED_OPS = {3: PLAIN_OPS[2] + ["PUT_WITH_TTL", "PUT_WITH_TTL", "PUT_WITH_TTL", "TTL"]}
TIMED_OPS[4] = TIMED_OPS[3] + ["SNAPSHOT", "SNAPSHOT", "RESTORE", "RESTORE"]


def plain_stream(steps, level: int) -> list[list[str]]:
    """Queries without timestamps from drawn steps (choice, tenant, key, size, prefix, n)."""
    ops = PLAIN_OPS[level]
    return [body(ops[choice % len(ops)], tenant, key, size, prefix, n)
            for choice, tenant, key, size, prefix, n in steps]


def timed_stream(steps, start: int, level: int) -> list[list[str]]:
    """Timestamped queries from drawn steps (gap, choice, tenant, key, size, prefix, n, ttl, back):
    each query comes `gap` after the one before; SNAPSHOT and RESTORE look `back` into the past."""
    ops = TIMED_OPS[level]
    queries, now = [], start
    for gap, choice, tenant, key, size, prefix, n, ttl, back in steps:
        now += gap
        queries.append([str(now)] + body(ops[choice % len(ops)], tenant, key, size, prefix, n, ttl,
                                          max(0, now - back)))
    return queries


def seeded_plain(seed: int, count: int, level: int) -> list[list[str]]:
    rng = random.Random(seed)
    return plain_stream([(rng.randrange(60), rng.choice(TENANTS), rng.choice(KEYS), rng.choice(SIZES),
                          rng.choice(PREFIXES), rng.choice(TOPS)) for _ in range(count)], level)


def seeded_timed(seed: int, count: int, level: int) -> list[list[str]]:
    rng = random.Random(seed)
    steps = [(rng.randint(1, 3), rng.randrange(60), rng.choice(TENANTS), rng.choice(KEYS), rng.choice(SIZES),
              rng.choice(PREFIXES), rng.choice(TOPS), rng.randint(1, 12), rng.randint(0, 15))
             for _ in range(count)]
    return timed_stream(steps, rng.randint(-1, 1), level)
