"""Helpers for the api-quota-ledger hidden suite: a slow oracle, timed calls, generators.

The oracle keeps nothing but the log of what happened (opens, plan changes, accepted records,
refunds) and recomputes every answer from it: a window's quota instant by instant, usage by
scanning every record. Slow and obviously right; it never imports the reference.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from kata.checks import query_rows, run_queries

QUOTA = {"free": 1_000, "pro": 20_000, "scale": 500_000}
RATE = {"free": 2, "pro": 5, "scale": 20}


# --- the oracle ---------------------------------------------------------------------------------


class Oracle:
    def __init__(self, timed: bool) -> None:
        self.timed = timed
        self.opened: dict[str, tuple[int, str]] = {}    # account -> (instant, plan)
        self.changes: list[tuple[int, str, str]] = []   # (instant, account, plan), in order
        self.records: list[dict] = []                   # accepted RECORDs, in order
        self.refunds: dict[str, int] = {}               # id -> instant of its refund

    def plan_at(self, name: str, x: int) -> str:
        plan = self.opened[name][1]
        for when, who, new in self.changes:
            if who == name and when <= x:
                plan = new
        return plan

    def quota(self, name: str, t: int) -> int:
        if not self.timed:
            return QUOTA[self.plan_at(name, t)]
        start = (t // 60) * 60
        return sum(QUOTA[self.plan_at(name, min(x, t))] for x in range(start, start + 60)) // 60

    def used(self, name: str, t: int, as_of: int, model: str | None = None) -> int:
        total = 0
        for r in self.records:
            if r["account"] != name or (model is not None and r["model"] != model):
                continue
            if self.timed and r["t"] // 60 != t // 60:
                continue
            if r["t"] > as_of:
                continue
            if r["id"] in self.refunds and self.refunds[r["id"]] <= as_of:
                continue
            total += r["tokens"]
        return total

    def answer(self, t: int, op: str, args: list[str]) -> str:
        if op == "OPEN":
            name, plan = args
            if name in self.opened or plan not in QUOTA:
                return "false"
            self.opened[name] = (t, plan)
            return "true"
        if op == "RECORD":
            name, model, tokens = args[0], args[1], int(args[2])
            if name not in self.opened or tokens < 1:
                return ""
            if self.timed:
                recent = [r for r in self.records if r["account"] == name and t - 10 < r["t"] <= t]
                if len(recent) >= RATE[self.plan_at(name, t)]:
                    return ""
            if self.used(name, t, t) + tokens > self.quota(name, t):
                return ""
            uid = "u" + str(len(self.records) + 1)
            self.records.append({"id": uid, "account": name, "model": model, "tokens": tokens, "t": t})
            return uid
        if op == "USAGE":
            return str(self.used(args[0], t, t)) if args[0] in self.opened else ""
        if op == "BALANCE":
            name = args[0]
            return str(self.quota(name, t) - self.used(name, t, t)) if name in self.opened else ""
        if op == "REFUND":
            name, uid = args
            owner = [r["account"] for r in self.records if r["id"] == uid]
            if not owner or owner[0] != name or uid in self.refunds:
                return "false"
            self.refunds[uid] = t
            return "true"
        if op == "TOP":
            n = int(args[0])
            ranked = sorted(self.opened, key=lambda a: (-self.used(a, t, t), a))
            return ",".join(f"{a}({self.used(a, t, t)})" for a in ranked[:n])
        if op == "MODELS":
            name = args[0]
            if name not in self.opened:
                return ""
            models = sorted({r["model"] for r in self.records if r["account"] == name})
            pairs = [(m, self.used(name, t, t, m)) for m in models]
            pairs = sorted([p for p in pairs if p[1] > 0], key=lambda p: (-p[1], p[0]))
            return ",".join(f"{m}({v})" for m, v in pairs)
        if op == "CHANGE_PLAN":
            name, plan = args
            if name not in self.opened or plan not in QUOTA or self.plan_at(name, t) == plan:
                return "false"
            self.changes.append((t, name, plan))
            return "true"
        if op == "USAGE_AT":
            name, t0 = args[0], int(args[1])
            if name not in self.opened or t0 > t or t0 < self.opened[name][0]:
                return ""
            return str(self.used(name, t0, t0))
        raise AssertionError(f"the oracle has no operation {op!r}")


def oracle(queries: list[list[str]]) -> list[str]:
    timed = bool(queries) and queries[0][0].isdigit()
    o = Oracle(timed)
    out = []
    for q in queries:
        if timed:
            out.append(o.answer(int(q[0]), q[1], list(q[2:])))
        else:
            out.append(o.answer(0, q[0], list(q[1:])))
    return out


# --- a call of timed queries ------------------------------------------------------------------


def timed(impl, rows) -> None:
    """rows: (t, query, answer), run as one call of kata.checks.run_queries."""
    __tracebackhide__ = True
    run_queries(impl, *query_rows([([str(t)] + q, a) for t, q, a in rows]))


# --- generated calls ------------------------------------------------------------------------------

ACCOUNTS = ["a", "b", "Zed", "pro"]
PLAN_NAMES = ["free", "free", "pro", "pro", "scale", "gold", "Free"]
MODELS = ["m", "n", "M"]
TOKENS = ["-3", "0", "1", "2", "100", "400", "499", "500", "600", "999", "1000", "1001",
          "5000", "19999", "20000", "20001", "499999", "500000"]
IDS = ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u01", "x"]
STEPS = [0, 0, 0, 1, 2, 5, 9, 10, 11, 30, 50, 59, 60, 61, 120, 3600]


def _op(rng, level: int) -> list[str]:
    kinds = ["OPEN", "RECORD", "RECORD", "RECORD", "USAGE", "BALANCE"]
    if level >= 2:
        kinds += ["REFUND", "REFUND", "TOP", "MODELS"]
    if level >= 4:
        kinds += ["CHANGE_PLAN", "CHANGE_PLAN", "USAGE_AT", "USAGE_AT"]
    kind = rng.choice(kinds)
    acct = rng.choice(ACCOUNTS)
    if kind in ("OPEN", "CHANGE_PLAN"):
        return [kind, acct, rng.choice(PLAN_NAMES)]
    if kind == "RECORD":
        return [kind, acct, rng.choice(MODELS), rng.choice(TOKENS)]
    if kind == "REFUND":
        return [kind, acct, rng.choice(IDS)]
    if kind == "TOP":
        return [kind, str(rng.randint(1, 5))]
    if kind == "USAGE_AT":
        return [kind, acct, "BACK"]   # filled in with a past (or the next) instant below
    return [kind, acct]


def random_call(seed: int, n: int, level: int) -> list[list[str]]:
    """A call of the given level, drawn from `seed`: untimed for levels 1 and 2, timed from level 3
    on. It opens an account or two first, so that most queries have something to act on."""
    rng = random.Random(seed)
    body = [["OPEN", rng.choice(ACCOUNTS), rng.choice(["free", "pro", "scale"])]
            for _ in range(rng.randint(1, 2))] if n else []
    body += [_op(rng, level) for _ in range(n)]
    if level <= 2:
        return body
    t = rng.choice([0, 0, 5, 59, 60, 10**12 - 160_000])   # 42 steps of at most 3,600 stay <= 10**12
    out = []
    for q in body:
        t += rng.choice(STEPS)
        if q[-1] == "BACK":
            q = q[:-1] + [str(max(0, t - rng.choice([0, 0, 1, 3, 10, 30, 59, 60, 61, -1])))]
        out.append([str(t)] + q)
    return out


def calls(level: int, min_size: int = 6, max_size: int = 40):
    """Hypothesis strategy: random calls of the level (one seed and a size per example, so that
    drawing an example costs next to nothing)."""
    return st.builds(random_call, st.integers(0, 2**32), st.integers(min_size, max_size), st.just(level))
