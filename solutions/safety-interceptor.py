"""Reference solution for the kata `safety-interceptor`.

Level 1 races an input classifier against prefill: TTFT is a max, not a sum, no token leaves before
the verdict, and a flagged request's prefill is skipped or cancelled. Level 2 holds streamed output
back until an output check covers it, so nothing flagged ever reaches the client. Level 3 keeps a
prefix cache whose keys include the tenant, so no KV block is ever shared across tenants, with a
block quota per tenant. Level 4 scores a whole conversation with decay, to catch a gradual
jailbreak whose every turn is under the per-turn threshold.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

# --- level 1: the classifier races prefill -----------------------------------------------


@dataclass(frozen=True)
class Request:
    id: str
    arrival: int  # >= 0
    prompt_tokens: int  # >= 1
    classify_time: int  # >= 0: the input classifier's latency
    flagged: bool  # its verdict


@dataclass(frozen=True)
class Outcome:
    status: str  # "served" | "refused"
    first_token_time: int | None  # served: when the first token may leave
    refused_time: int | None  # refused: the verdict time
    prefill_tokens: int  # prompt tokens computed for it (wasted when refused)


def _check_int(name: str, value, minimum: int) -> None:
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def run_gateway(requests: list[Request], prefill_cost: int) -> dict[str, Outcome]:
    seen = set()
    for r in requests:
        _check_int("arrival", r.arrival, 0)
        _check_int("prompt_tokens", r.prompt_tokens, 1)
        _check_int("classify_time", r.classify_time, 0)
        if not isinstance(r.flagged, bool):
            raise ValueError(f"flagged must be a bool, got {r.flagged!r}")
        if r.id in seen:
            raise ValueError(f"id {r.id!r} is used twice")
        seen.add(r.id)
    _check_int("prefill_cost", prefill_cost, 1)

    out = {}
    free_at = 0  # when the one prefill engine is next free
    for r in sorted(requests, key=lambda r: r.arrival):  # stable: ties keep input order
        verdict = r.arrival + r.classify_time  # the classifier starts at arrival, in parallel
        start = max(r.arrival, free_at)
        end = start + r.prompt_tokens * prefill_cost
        if not r.flagged:
            out[r.id] = Outcome("served", max(end, verdict), None, r.prompt_tokens)
            free_at = end
        elif verdict <= start:  # known bad before its turn: never prefilled
            out[r.id] = Outcome("refused", None, verdict, 0)
        elif verdict < end:  # cancelled mid-prefill: the engine (and its KV blocks) free at once
            out[r.id] = Outcome("refused", None, verdict, (verdict - start) // prefill_cost)
            free_at = verdict
        else:  # the prefill finished first; its result is discarded, nothing is emitted
            out[r.id] = Outcome("refused", None, verdict, r.prompt_tokens)
            free_at = end
    return out


# --- level 2: streaming hold-back -----------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    release_times: list[int]  # when each released token reaches the client, in order
    refusal_time: int | None  # when the refusal is sent, if a check flagged
    max_added_latency: int  # max over released tokens of release - generation time (0 if none)


def hold_back(num_tokens: int, first_token_time: int, tpot: int, k: int, check_time: int,
              flag_at: int | None) -> Stream:
    _check_int("num_tokens", num_tokens, 0)
    _check_int("first_token_time", first_token_time, 0)
    _check_int("tpot", tpot, 0)
    _check_int("k", k, 1)
    _check_int("check_time", check_time, 0)
    if flag_at is not None:
        _check_int("flag_at", flag_at, 0)
        if flag_at >= num_tokens:
            raise ValueError(f"flag_at must be < num_tokens = {num_tokens}, got {flag_at}")

    released: list[int] = []
    added = 0
    last_release = 0
    for chunk_start in range(0, num_tokens, k):
        chunk_end = min(chunk_start + k, num_tokens)  # the last chunk may be short
        made = [first_token_time + i * tpot for i in range(chunk_start, chunk_end)]
        done = made[-1] + check_time  # the check starts when the chunk's last token exists
        at = max(done, last_release)  # chunks reach the client in order
        if flag_at is not None and chunk_start <= flag_at < chunk_end:
            return Stream(released, at, added)
        released += [at] * len(made)
        added = max([added] + [at - m for m in made])
        last_release = at
    return Stream(released, None, added)


# --- level 3: a prefix cache that tenants never share ------------------------------------------


class TenantPrefixCache:
    """Full blocks of prompts, keyed by (tenant, every token up to the block's end)."""

    def __init__(self, block_size: int, quotas: dict[str, int]) -> None:
        _check_int("block_size", block_size, 1)
        if not isinstance(quotas, dict) or any(not isinstance(t, str) or not t for t in quotas):
            raise ValueError(f"quotas must be a dict of tenant name -> block quota, got {quotas!r}")
        for quota in quotas.values():
            _check_int("quotas", quota, 0)
        self.block_size = block_size
        self._quotas = dict(quotas)
        # tenant -> keys in LRU order (first = least recently used)
        self._lru: dict[str, OrderedDict] = {t: OrderedDict() for t in quotas}

    def admit(self, tenant: str, tokens: list[int]) -> tuple[int, int]:
        """(full blocks found cached for this tenant, full blocks newly cached)."""
        if tenant not in self._quotas:
            raise ValueError(f"tenant {tenant!r} has no quota")
        if not isinstance(tokens, list) or any(type(t) is not int for t in tokens):
            raise ValueError("tokens must be a list of ints")
        lru = self._lru[tenant]
        bs = self.block_size
        keys = [tuple(tokens[:(i + 1) * bs]) for i in range(len(tokens) // bs)]
        hits = 0
        while hits < len(keys) and keys[hits] in lru:
            lru.move_to_end(keys[hits])  # used now, in block order
            hits += 1
        for key in keys[hits:]:
            lru[key] = None
            lru.move_to_end(key)
        while len(lru) > self._quotas[tenant]:
            lru.popitem(last=False)
        return hits, len(keys) - hits

    def cached_blocks(self, tenant: str) -> int:
        if tenant not in self._quotas:
            raise ValueError(f"tenant {tenant!r} has no quota")
        return len(self._lru[tenant])


# --- level 4: a conversation's risk -----------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    turn_threshold: Fraction  # a single turn at or above it is flagged
    conversation_threshold: Fraction  # the running risk at or above it is flagged
    decay: Fraction  # in [0, 1): how much of the previous risk carries into the next turn


def _rational(name: str, value, low, high=None, high_open: bool = False) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, Rational):
        raise ValueError(f"{name} must be a Fraction or an int, got {value!r}")
    if value < low or (high is not None and (value > high or (high_open and value == high))):
        raise ValueError(f"{name} must be in range, got {value}")
    return Fraction(value)


def first_flagged_turn(scores: list, policy: Policy) -> int | None:
    """The index of the first flagged turn, or None. risk = decay * risk + score, from 0."""
    _rational("turn_threshold", policy.turn_threshold, 0, 1)
    _rational("conversation_threshold", policy.conversation_threshold, 0)
    decay = _rational("decay", policy.decay, 0, 1, high_open=True)
    if not isinstance(scores, list):
        raise ValueError("scores must be a list of rationals in [0, 1]")
    checked = [_rational("scores", s, 0, 1) for s in scores]
    risk = Fraction(0)
    for i, s in enumerate(checked):
        risk = decay * risk + s
        if s >= policy.turn_threshold or risk >= policy.conversation_threshold:
            return i
    return None
