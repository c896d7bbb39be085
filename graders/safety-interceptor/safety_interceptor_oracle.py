"""Shared helpers of the safety-interceptor hidden suite: calls and messages, a literal oracle of
the prompt (slow, obviously right, independent of the reference), and strategies."""

from __future__ import annotations

from fractions import Fraction as F


def outcome_tuple(o):
    return (o.status, o.first_token_time, o.refused_time, o.prefill_tokens)


def stream_tuple(s):
    return (s.release_times, s.refusal_time, s.max_added_latency)


# --- the oracle ---------------------------------------------------------------------


def o_gateway(rows, cost):
    """rows: (id, arrival, prompt_tokens, classify_time, flagged). Steps time one unit at a time."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][1], i))
    out, t = {}, 0
    for i in order:
        rid, arrival, tokens, classify, flagged = rows[i]
        verdict = arrival + classify
        t = max(t, arrival)
        if flagged and verdict <= t:
            out[rid] = ("refused", None, verdict, 0)
            continue
        done = 0
        start = t
        while done < tokens * cost:  # one time unit of prefill work at a time
            if flagged and t >= verdict:
                break
            t += 1
            done += 1
        if flagged:
            out[rid] = ("refused", None, verdict, done // cost)
        else:
            out[rid] = ("served", max(t, verdict), None, tokens)
        assert t >= start
    return out


def o_hold_back(n, t0, tpot, k, check_time, flag_at):
    gen = [t0 + i * tpot for i in range(n)]
    release, refusal, prev = [], None, 0
    chunks = [list(range(s, min(s + k, n))) for s in range(0, n, k)]
    for chunk in chunks:
        at = max(gen[chunk[-1]] + check_time, prev)
        if flag_at is not None and flag_at in chunk:
            refusal = at
            break
        release += [at for _ in chunk]
        prev = at
    added = max([r - gen[i] for i, r in enumerate(release)], default=0)
    return (release, refusal, added)


class OCache:
    """A list per tenant in LRU order (index 0 = least recent); keys compared as tuples."""

    def __init__(self, bs, quotas):
        self.bs, self.quotas = bs, dict(quotas)
        self.lru = {t: [] for t in quotas}

    def admit(self, tenant, tokens):
        lst = self.lru[tenant]
        keys = [tuple(tokens[:(i + 1) * self.bs]) for i in range(len(tokens) // self.bs)]
        hits = 0
        for key in keys:
            if key not in lst:
                break
            hits += 1
        for key in keys[:hits]:
            lst.remove(key)
            lst.append(key)
        for key in keys[hits:]:
            if key in lst:
                lst.remove(key)
            lst.append(key)
        while len(lst) > self.quotas[tenant]:
            lst.pop(0)
        return (hits, len(keys) - hits)


def o_flagged(scores, turn, conv, decay):
    risk = F(0)
    for i, s in enumerate(scores):
        risk = F(decay) * risk + F(s)
        if F(s) >= F(turn) or risk >= F(conv):
            return i
    return None
