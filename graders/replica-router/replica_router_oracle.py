"""Shared helpers of the replica-router hidden suite: a slow, obviously correct oracle of every
level and the query generators of the property tests (scenarios are written as
kata.checks.query_lines text and run by kata.checks.run_queries).

The oracle keeps only plain facts (each request's replica, priority, arrival and placement
number; each replica's capacity and whether it drains) and recounts everything it needs on every
step, sorting the whole candidate list each time.
"""

from __future__ import annotations

import random
from fractions import Fraction

from hypothesis import strategies as st



# --- the oracle ---------------------------------------------------------------------------------


def oracle(queries: list[list[str]]) -> list[str]:
    capacity: dict[str, int] = {}  # replica -> capacity, replicas in existence only
    draining: set[str] = set()
    active: dict[str, dict] = {}  # request -> {tenant, priority, arrival, replica, placed}
    weight: dict[str, int] = {}
    limit: dict[str, int] = {}
    counter = 0
    out: list[str] = []

    def running_on(rep):
        return sum(1 for q in active.values() if q["replica"] == rep)

    def running_of(tenant):
        return sum(1 for q in active.values() if q["replica"] is not None and q["tenant"] == tenant)

    def may_run(tenant):
        return tenant not in limit or running_of(tenant) < limit[tenant]

    def free_replicas():
        free = [r for r in capacity if r not in draining and running_on(r) < capacity[r]]
        return sorted(free, key=lambda r: (Fraction(running_on(r), capacity[r]), r))

    def place(rid, rep):
        nonlocal counter
        counter += 1
        active[rid]["replica"] = rep
        active[rid]["placed"] = counter

    def admit(now):
        while True:
            free = free_replicas()
            waiting = [(rid, q) for rid, q in active.items()
                       if q["replica"] is None and may_run(q["tenant"])]
            if not free or not waiting:
                return
            waiting.sort(key=lambda item: (-item[1]["priority"],
                                           -(now - item[1]["arrival"]) * weight.get(item[1]["tenant"], 1),
                                           item[1]["arrival"]))
            place(waiting[0][0], free[0])

    for now, query in enumerate(queries, start=1):
        op, args = query[0], query[1:]
        if op == "ADD_REPLICA":
            rep, cap = args[0], int(args[1])
            ok = rep not in capacity and cap >= 1
            if ok:
                capacity[rep] = cap
            out.append("true" if ok else "false")
        elif op == "ROUTE":
            rid, tenant = args[0], args[1]
            prio = int(args[2]) if len(args) > 2 else 0
            if rid in active or prio < 0 or prio > 9:
                out.append("")
            else:
                active[rid] = {"tenant": tenant, "priority": prio, "arrival": now,
                               "replica": None, "placed": 0}
                answer = "queued"
                if may_run(tenant):
                    free = free_replicas()
                    if free:
                        place(rid, free[0])
                        answer = free[0]
                    else:
                        victims = [v for v, q in active.items()
                                   if q["replica"] is not None and q["replica"] not in draining]
                        victims.sort(key=lambda v: (active[v]["priority"], -active[v]["placed"]))
                        if victims and active[victims[0]]["priority"] < prio:
                            rep = active[victims[0]]["replica"]
                            active[victims[0]]["replica"] = None
                            place(rid, rep)
                            answer = rep
                out.append(answer)
        elif op == "COMPLETE":
            rid = args[0]
            if rid in active and active[rid]["replica"] is not None:
                rep = active.pop(rid)["replica"]
                if rep in draining and running_on(rep) == 0:
                    del capacity[rep]
                    draining.discard(rep)
                out.append("true")
            else:
                out.append("false")
        elif op == "STATUS":
            q = active.get(args[0])
            out.append("" if q is None else (q["replica"] if q["replica"] is not None else "queued"))
        elif op == "LOAD":
            rep = args[0]
            out.append(f"{running_on(rep)}/{capacity[rep]}" if rep in capacity else "")
        elif op == "TOP_REPLICAS":
            reps = sorted(capacity, key=lambda r: (-Fraction(running_on(r), capacity[r]), r))
            out.append(",".join(f"{r}({running_on(r)}/{capacity[r]})" for r in reps[:int(args[0])]))
        elif op == "TENANT_REQUESTS":
            mine = sorted(rid for rid, q in active.items() if q["tenant"] == args[0])
            out.append(",".join(f"{rid}@{active[rid]['replica'] or 'queued'}" for rid in mine))
        elif op == "TOP_TENANTS":
            counts: dict[str, int] = {}
            for q in active.values():
                counts[q["tenant"]] = counts.get(q["tenant"], 0) + 1
            ranked = sorted(counts, key=lambda t: (-counts[t], t))[:int(args[0])]
            out.append(",".join(f"{t}({counts[t]})" for t in ranked))
        elif op == "DRAIN":
            rep = args[0]
            if rep in capacity and rep not in draining:
                draining.add(rep)
                if running_on(rep) == 0:
                    del capacity[rep]
                    draining.discard(rep)
                out.append("true")
            else:
                out.append("false")
        elif op == "SET_WEIGHT":
            w = int(args[1])
            if 1 <= w <= 100:
                weight[args[0]] = w
            out.append("true" if 1 <= w <= 100 else "false")
        elif op == "SET_LIMIT":
            k = int(args[1])
            if k >= 0:
                limit[args[0]] = k
            out.append("true" if k >= 0 else "false")
        else:  # pragma: no cover - the generators only make the operations above
            raise AssertionError(f"unknown operation {op!r}")
        admit(now)
    return out


# --- query generators for the property tests ----------------------------------------------------

REPLICAS = ["r1", "r2", "r10", "R"]
TENANTS = ["t1", "t2", "t10", "T"]
WEIGHTS = ["0", "1", "2", "3", "7", "100", "101"]

# (weight, operation, first level that has it)
KINDS = [(2, "ADD_REPLICA", 1), (8, "ROUTE", 1), (5, "COMPLETE", 1), (2, "STATUS", 1),
         (1, "LOAD", 2), (1, "TOP_REPLICAS", 2), (1, "TENANT_REQUESTS", 2), (1, "TOP_TENANTS", 2),
         (2, "DRAIN", 3), (2, "SET_WEIGHT", 4), (2, "SET_LIMIT", 4)]


def scenario(rng: random.Random, level: int, min_size: int = 10, max_size: int = 40) -> list[list[str]]:
    """A few replicas (or none), then operations of levels 1..level. COMPLETE and STATUS
    mostly name requests routed before; a ROUTE now and then reuses an id."""
    kinds = [k for w, k, lv in KINDS if lv <= level for _ in range(w)]
    queries = [["ADD_REPLICA", r, str(rng.randint(1, 3))]
               for r in rng.sample(REPLICAS, rng.randint(0, 3))]
    routed: list[str] = []

    def some_request():
        return rng.choice(routed) if routed and rng.random() < 0.8 else rng.choice(["q0", "q1", "x"])

    for _ in range(rng.randint(min_size, max_size)):
        kind = rng.choice(kinds)
        if kind == "ADD_REPLICA":
            queries.append([kind, rng.choice(REPLICAS), str(rng.randint(-1, 3))])
        elif kind == "ROUTE":
            rid = some_request() if routed and rng.random() < 0.15 else f"q{len(routed)}"
            routed.append(rid)
            query = [kind, rid, rng.choice(TENANTS)]
            if level >= 3 and rng.random() < 0.5:
                query.append(str(rng.randint(-1, 10)))
            queries.append(query)
        elif kind in ("COMPLETE", "STATUS"):
            queries.append([kind, some_request()])
        elif kind in ("LOAD", "DRAIN"):
            queries.append([kind, rng.choice(REPLICAS)])
        elif kind in ("TOP_REPLICAS", "TOP_TENANTS"):
            queries.append([kind, str(rng.randint(0, 5))])
        elif kind == "TENANT_REQUESTS":
            queries.append([kind, rng.choice(TENANTS)])
        elif kind == "SET_WEIGHT":
            queries.append([kind, rng.choice(TENANTS), rng.choice(WEIGHTS)])
        else:
            queries.append([kind, rng.choice(TENANTS), str(rng.randint(-1, 3))])
    return queries


def queries_up_to(level: int, min_size: int = 10, max_size: int = 40) -> st.SearchStrategy:
    """Query lists of levels 1..level (see scenario), one per seed hypothesis draws: the suite
    runs derandomized, so the same seeds, and the same lists, every run."""
    return st.integers(0, 2**64 - 1).map(
        lambda seed: scenario(random.Random(seed), level, min_size, max_size))
