"""Replica router: the reference solution, every level.

One _Router per call of solution(). Requests that wait sit in one heap per tenant, keyed by
(-priority, arrival, id): inside a tenant the weight is the same for every request, so the
tenant's best waiting request is always its heap's head; across tenants the order depends on
the clock (the weighted wait), so admission compares the heads at the moment it admits.
"""

from __future__ import annotations

import heapq
from collections import Counter
from fractions import Fraction


class _Replica:
    def __init__(self, rid: str, capacity: int) -> None:
        self.rid = rid
        self.capacity = capacity
        self.running: set[str] = set()  # ids of the requests holding its slots
        self.draining = False

    def load(self) -> Fraction:
        return Fraction(len(self.running), self.capacity)  # exact, whatever the capacity

    def has_free_slot(self) -> bool:
        return not self.draining and len(self.running) < self.capacity


class _Request:
    def __init__(self, rid: str, tenant: str, priority: int, arrival: int) -> None:
        self.rid = rid
        self.tenant = tenant
        self.priority = priority
        self.arrival = arrival  # the number of its ROUTE query; kept when it is preempted
        self.replica: str | None = None  # None while it waits
        self.placed = 0  # placement counter value of its latest placement


class _Router:
    def __init__(self) -> None:
        self.now = 0  # number of the query being run
        self.placements = 0
        self.replicas: dict[str, _Replica] = {}
        self.requests: dict[str, _Request] = {}  # active: running or waiting
        self.waiting: dict[str, list] = {}  # tenant -> heap of (-priority, arrival, id)
        self.running_of: Counter[str] = Counter()  # tenant -> running requests
        self.weights: dict[str, int] = {}
        self.limits: dict[str, int] = {}

    # --- placement, preemption, admission ------------------------------------------------

    def best_replica(self) -> _Replica | None:
        """The accepting replica with a free slot and the lowest load; ties: smallest id."""
        free = [r for r in self.replicas.values() if r.has_free_slot()]
        return min(free, key=lambda r: (r.load(), r.rid), default=None)

    def below_limit(self, tenant: str) -> bool:
        limit = self.limits.get(tenant)
        return limit is None or self.running_of[tenant] < limit

    def place(self, req: _Request, rep: _Replica) -> None:
        self.placements += 1
        req.placed = self.placements
        req.replica = rep.rid
        rep.running.add(req.rid)
        self.running_of[req.tenant] += 1

    def unplace(self, req: _Request) -> _Replica:
        rep = self.replicas[req.replica]
        rep.running.remove(req.rid)
        self.running_of[req.tenant] -= 1
        req.replica = None
        return rep

    def wait(self, req: _Request) -> None:
        heapq.heappush(self.waiting.setdefault(req.tenant, []), (-req.priority, req.arrival, req.rid))

    def victim(self) -> _Request | None:
        """Lowest priority among the requests running on accepting replicas; ties: placed last."""
        running = [self.requests[q] for r in self.replicas.values() if not r.draining
                   for q in r.running]
        return min(running, key=lambda q: (q.priority, -q.placed), default=None)

    def next_waiting(self) -> _Request | None:
        """Highest priority, then largest weighted wait, then earliest arrival, over the heads of
        the tenants below their limit."""
        best, best_key = None, None
        for tenant, heap in self.waiting.items():
            if not heap or not self.below_limit(tenant):
                continue
            neg_priority, arrival, rid = heap[0]
            key = (neg_priority, -(self.now - arrival) * self.weights.get(tenant, 1), arrival)
            if best_key is None or key < best_key:
                best, best_key = rid, key
        return None if best is None else self.requests[best]

    def admit(self) -> None:
        while (rep := self.best_replica()) is not None and (req := self.next_waiting()) is not None:
            heapq.heappop(self.waiting[req.tenant])
            self.place(req, rep)

    # --- level 1 ---------------------------------------------------------------------------

    def add_replica(self, rid: str, capacity: str) -> str:
        if rid in self.replicas or int(capacity) < 1:
            return "false"
        self.replicas[rid] = _Replica(rid, int(capacity))
        return "true"

    def route(self, rid: str, tenant: str, priority: str = "0") -> str:
        p = int(priority)
        if rid in self.requests or not 0 <= p <= 9:
            return ""
        req = self.requests[rid] = _Request(rid, tenant, p, self.now)
        if self.below_limit(tenant):
            rep = self.best_replica()
            if rep is None:
                v = self.victim()
                if v is not None and v.priority < p:
                    rep = self.unplace(v)
                    self.wait(v)
            if rep is not None:
                self.place(req, rep)
                return rep.rid
        self.wait(req)
        return "queued"

    def complete(self, rid: str) -> str:
        req = self.requests.get(rid)
        if req is None or req.replica is None:
            return "false"
        rep = self.unplace(req)
        del self.requests[rid]
        if rep.draining and not rep.running:
            del self.replicas[rep.rid]
        return "true"

    def status(self, rid: str) -> str:
        req = self.requests.get(rid)
        return "" if req is None else req.replica or "queued"

    # --- level 2 ---------------------------------------------------------------------------

    def load(self, rid: str) -> str:
        rep = self.replicas.get(rid)
        return "" if rep is None else f"{len(rep.running)}/{rep.capacity}"

    def top_replicas(self, n: str) -> str:
        busiest = sorted(self.replicas.values(), key=lambda r: (-r.load(), r.rid))
        return ",".join(f"{r.rid}({len(r.running)}/{r.capacity})" for r in busiest[:int(n)])

    def tenant_requests(self, tenant: str) -> str:
        mine = sorted(rid for rid, q in self.requests.items() if q.tenant == tenant)
        return ",".join(f"{rid}@{self.requests[rid].replica or 'queued'}" for rid in mine)

    def top_tenants(self, n: str) -> str:
        active = Counter(q.tenant for q in self.requests.values())
        ranked = sorted(active.items(), key=lambda kv: (-kv[1], kv[0]))
        return ",".join(f"{t}({c})" for t, c in ranked[:int(n)])

    # --- level 3 ---------------------------------------------------------------------------

    def drain(self, rid: str) -> str:
        rep = self.replicas.get(rid)
        if rep is None or rep.draining:
            return "false"
        rep.draining = True
        if not rep.running:
            del self.replicas[rid]
        return "true"

    # --- level 4 ---------------------------------------------------------------------------

    def set_weight(self, tenant: str, weight: str) -> str:
        if not 1 <= int(weight) <= 100:
            return "false"
        self.weights[tenant] = int(weight)
        return "true"

    def set_limit(self, tenant: str, limit: str) -> str:
        if int(limit) < 0:
            return "false"
        self.limits[tenant] = int(limit)
        return "true"


def solution(queries: list[list[str]]) -> list[str]:
    router = _Router()
    ops = {
        "ADD_REPLICA": router.add_replica, "ROUTE": router.route, "COMPLETE": router.complete,
        "STATUS": router.status, "LOAD": router.load, "TOP_REPLICAS": router.top_replicas,
        "TENANT_REQUESTS": router.tenant_requests, "TOP_TENANTS": router.top_tenants,
        "DRAIN": router.drain, "SET_WEIGHT": router.set_weight, "SET_LIMIT": router.set_limit,
    }
    out = []
    for op, *args in queries:
        router.now += 1
        out.append(ops[op](*args))
        router.admit()  # a slot or a limit freed by this query goes to a waiting request
    return out
