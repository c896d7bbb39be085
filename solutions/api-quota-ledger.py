"""API quota ledger: the reference solution, all four levels.

Every account keeps its history rather than running totals: its accepted usages (each with the
instant it was recorded and, once refunded, the instant of the refund) and its plan changes. Any
answer, about now or about a past instant, is then a scan over one window's usages.
"""

from bisect import bisect_right

WINDOW = 60  # quota windows: window k holds the instants 60k .. 60k + 59
SPAN = 10    # the rate limit counts the accepted RECORDs at instants t' with t - 10 < t' <= t

# plan -> (tokens per window, requests per span)
PLANS = {
    "free": (1_000, 2),
    "pro": (20_000, 5),
    "scale": (500_000, 20),
}


class _Usage:
    def __init__(self, uid: str, account: str, model: str, tokens: int, at: int) -> None:
        self.uid, self.account, self.model, self.tokens, self.at = uid, account, model, tokens, at
        self.refunded_at: int | None = None

    def counts_at(self, t: int) -> bool:
        """Whether it counts at the end of instant t: recorded by then and not refunded by then."""
        return self.at <= t and (self.refunded_at is None or self.refunded_at > t)


class _Account:
    def __init__(self, plan: str, t: int) -> None:
        self.opened = t
        self.plans = [(t, plan)]             # (first instant, plan), in time order
        self.times: list[int] = []           # instants of its accepted RECORDs, refunded or not
        self.windows: dict[int, list[_Usage]] = {}   # window index -> its usages, in order

    def plan_at(self, t: int) -> str:
        """The plan in effect at instant t (the opening plan before any change)."""
        plan = self.plans[0][1]
        for start, name in self.plans[1:]:
            if start <= t:
                plan = name
        return plan

    def quota(self, t: int) -> int:
        """The quota of t's window as known at t: each instant of the window weighs the quota of
        the plan in effect then (the plan at t for the instants after t), one floor at the end."""
        start = t // WINDOW * WINDOW
        plan, since, total = self.plan_at(start), start, 0
        for change, name in self.plans[1:]:
            if start < change <= t:
                total += PLANS[plan][0] * (change - since)
                plan, since = name, change
        total += PLANS[plan][0] * (start + WINDOW - since)
        return total // WINDOW

    def counted(self, t: int, as_of: int) -> list[_Usage]:
        """The usages of t's window that count at the end of instant as_of."""
        return [u for u in self.windows.get(t // WINDOW, []) if u.counts_at(as_of)]

    def used(self, t: int) -> int:
        return sum(u.tokens for u in self.counted(t, t))

    def recent(self, t: int) -> int:
        """Accepted RECORDs at instants in (t - SPAN, t]; every one so far is at or before t."""
        return len(self.times) - bisect_right(self.times, t - SPAN)


class _Ledger:
    def __init__(self, timed: bool) -> None:
        self.timed = timed   # without timestamps every query is at instant 0 and nothing is rate limited
        self.accounts: dict[str, _Account] = {}
        self.usages: dict[str, _Usage] = {}   # id -> usage, refunded or not
        self.next_id = 1

    def open(self, t: int, name: str, plan: str) -> str:
        if name in self.accounts or plan not in PLANS:
            return "false"
        self.accounts[name] = _Account(plan, t)
        return "true"

    def record(self, t: int, name: str, model: str, tokens: str) -> str:
        acct, amount = self.accounts.get(name), int(tokens)
        if acct is None or amount < 1:
            return ""
        if self.timed and acct.recent(t) >= PLANS[acct.plan_at(t)][1]:
            return ""
        if acct.used(t) + amount > acct.quota(t):
            return ""
        usage = _Usage(f"u{self.next_id}", name, model, amount, t)
        self.next_id += 1
        self.usages[usage.uid] = usage
        acct.times.append(t)
        acct.windows.setdefault(t // WINDOW, []).append(usage)
        return usage.uid

    def usage(self, t: int, name: str) -> str:
        acct = self.accounts.get(name)
        return "" if acct is None else str(acct.used(t))

    def balance(self, t: int, name: str) -> str:
        acct = self.accounts.get(name)
        return "" if acct is None else str(acct.quota(t) - acct.used(t))

    def refund(self, t: int, name: str, uid: str) -> str:
        usage = self.usages.get(uid)   # ids compare as strings: "u01" is not "u1"
        if usage is None or usage.account != name or usage.refunded_at is not None:
            return "false"
        usage.refunded_at = t
        return "true"

    def top(self, t: int, n: str) -> str:
        ranked = sorted((-acct.used(t), name) for name, acct in self.accounts.items())
        return ",".join(f"{name}({-neg})" for neg, name in ranked[:int(n)])

    def models(self, t: int, name: str) -> str:
        acct = self.accounts.get(name)
        if acct is None:
            return ""
        totals: dict[str, int] = {}
        for u in acct.counted(t, t):
            totals[u.model] = totals.get(u.model, 0) + u.tokens
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
        return ",".join(f"{model}({tokens})" for model, tokens in ranked)

    def change_plan(self, t: int, name: str, plan: str) -> str:
        acct = self.accounts.get(name)
        if acct is None or plan not in PLANS or plan == acct.plan_at(t):
            return "false"
        acct.plans.append((t, plan))
        return "true"

    def usage_at(self, t: int, name: str, past: str) -> str:
        acct, t0 = self.accounts.get(name), int(past)
        if acct is None or t0 > t or t0 < acct.opened:
            return ""
        return str(sum(u.tokens for u in acct.counted(t0, t0)))


_OPERATIONS = {
    "OPEN": _Ledger.open, "RECORD": _Ledger.record, "USAGE": _Ledger.usage,
    "BALANCE": _Ledger.balance, "REFUND": _Ledger.refund, "TOP": _Ledger.top,
    "MODELS": _Ledger.models, "CHANGE_PLAN": _Ledger.change_plan, "USAGE_AT": _Ledger.usage_at,
}


def solution(queries: list[list[str]]) -> list[str]:
    """One answer per query, from an empty ledger. Either every query starts with a timestamp
    (level 3 on) or none does (levels 1 and 2)."""
    timed = bool(queries) and queries[0][0].isdigit()
    ledger = _Ledger(timed)
    answers = []
    for query in queries:
        t, op, args = (int(query[0]), query[1], query[2:]) if timed else (0, query[0], query[1:])
        answers.append(_OPERATIONS[op](ledger, t, *args))
    return answers
