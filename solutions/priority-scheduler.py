"""Priority scheduler: reference solution.

An event-driven simulation of an inference server with K slots. One function per level:

    schedule(requests)                                  level 1: one worker, no preemption
    latency_percentiles(requests, outcomes)             level 1: per-priority P50/P99 (nearest rank)
    schedule_preemptive(requests, num_slots)            level 2: K slots, preemption
    schedule_with_checkpoints(requests, num_slots, kv_bytes_per_token, bandwidth, incremental)
                                                        level 3: saving/restoring KV state costs time
    schedule_with_aging(requests, num_slots, aging_interval, slo)
                                                        level 4: aging, SLO report

All four run the same loop (`_Simulation`); each level only changes three things: whether
preemption is allowed, what "more urgent" means (the class key), and what a checkpoint costs.
Time is integer; the loop jumps from event instant to event instant (arrivals, completions and,
at level 3, the ends of setups), so it costs O((n + p) log n + (n + p) * K) for n requests and p
preemptions, not O(total time).

Left out: anything the prompt does not ask for (no slot ids, no cancellation).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

# --- the data types ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    id: int
    arrival: int
    priority: int  # lower = more urgent
    duration: int  # units of work; one unit of work processes one token


@dataclass(frozen=True, slots=True)
class Outcome:
    id: int
    start: int  # the first instant it held a slot
    finish: int  # the instant its last unit of work completed
    preemptions: int = 0


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    start: int  # the request did work during [start, end)
    end: int


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    outcomes: dict[int, Outcome]
    checkpoint_overhead: int  # total save + restore time


@dataclass(frozen=True, slots=True)
class TailReport:
    outcomes: dict[int, Outcome]
    runs: list[Run]
    slo_met: dict[int, bool]


# --- validation --------------------------------------------------------------


def _check_int(name: str, value, minimum: int) -> None:
    # bool is an int subclass; a True where a count is asked for is a mistake, not a 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _validate(requests: list[Request]) -> None:
    seen = set()
    for r in requests:
        for name in ("id", "arrival", "priority", "duration"):
            value = getattr(r, name)
            if type(value) is not int or value < 0:  # type() is int: rejects bool too
                _check_int(name, value, 0)  # raises the precise message
        if r.id in seen:
            raise ValueError(f"id {r.id} appears twice: ids must be unique")
        seen.add(r.id)


# --- level 1 and 2 policy pieces ----------------------------------------------


def _urgency(r: Request) -> tuple[int, int, int]:
    return (r.priority, r.arrival, r.id)


def pick_next(waiting: list[Request]) -> Request:
    """The request a free slot takes: lowest (priority, arrival, id)."""
    if not isinstance(waiting, list) or not waiting:
        raise ValueError(f"waiting must be a non-empty list of requests, got {waiting!r}")
    _validate(waiting)
    return min(waiting, key=_urgency)


def pick_victim(running: list[Request], incoming: Request) -> Request | None:
    """The running request `incoming` preempts when every slot is busy, or None.

    The victim is the least urgent running request: highest (priority, arrival, id). It is
    preempted only when `incoming` is strictly more urgent by priority alone.
    """
    if not isinstance(running, list):
        raise ValueError(f"running must be a list of requests, got {running!r}")
    if not isinstance(incoming, Request):
        raise ValueError(f"incoming must be a Request, got {incoming!r}")
    _validate(running + [incoming])  # ids unique across both
    if not running:
        return None
    victim = max(running, key=_urgency)
    return victim if incoming.priority < victim.priority else None


# --- percentiles ---------------------------------------------------------------


def percentile(values: list[int], p: int) -> int:
    """Nearest-rank percentile: the value at 1-based rank ceil(p * n / 100) of the sorted values."""
    if not isinstance(values, list) or not values or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise ValueError(f"values must be a non-empty list of ints, got {values!r}")
    _check_int("p", p, 1)
    if p > 100:
        raise ValueError(f"p must be <= 100, got {p}")
    ordered = sorted(values)
    rank = (p * len(ordered) + 99) // 100  # ceil without floats
    return ordered[rank - 1]


def latency_percentiles(
    requests: list[Request], outcomes: dict[int, Outcome]
) -> dict[int, tuple[int, int]]:
    """priority -> (P50, P99) of finish - arrival, for every priority that has requests."""
    _validate(requests)
    if not isinstance(outcomes, dict):
        raise ValueError(f"outcomes must be a dict of request id -> Outcome, got {outcomes!r}")
    by_class: dict[int, list[int]] = {}  # priority -> latencies
    for r in requests:
        if r.id not in outcomes:
            raise ValueError(f"outcomes has no entry for request id {r.id}")
        by_class.setdefault(r.priority, []).append(outcomes[r.id].finish - r.arrival)
    return {prio: (percentile(lat, 50), percentile(lat, 99)) for prio, lat in sorted(by_class.items())}


# --- the simulation -------------------------------------------------------------


class _Simulation:
    """One run of the event loop. Requests are addressed by their index in `reqs`.

    cls[i] is request i's class (smaller = more urgent): its priority, or at level 4 its
    aged deadline priority * A + arrival. Waiting order is (cls, arrival, id); a waiting request
    preempts only when its class is strictly smaller than the victim's.
    """

    def __init__(self, requests, num_slots, *, preemptive, cls, kv_bytes_per_token=0,
                 bandwidth=1, incremental=False, record_runs=False):
        self.reqs = requests
        self.num_slots = num_slots
        self.preemptive = preemptive
        self.cls = cls
        self.kv = kv_bytes_per_token
        self.bandwidth = bandwidth
        self.incremental = incremental
        n = len(requests)
        self.done = [0] * n  # units of work received so far (= tokens processed)
        self.saved = [0] * n  # tokens covered by the last checkpoint
        self.start = [None] * n
        self.finish = [None] * n
        self.preemptions = [0] * n
        self.work_start = [0] * n  # while running: when its setup ends and work begins
        self.running: set[int] = set()
        self.end_at = [None] * n  # while running: when it will complete
        self.completions: list[tuple[int, int]] = []  # heap of (end_at, index); stale entries skipped
        self.waiting: list[tuple] = []  # heap of (cls, arrival, id, index)
        # heap of instants at which a setup ends: the request becomes preemptible then, so a
        # waiting request may preempt it at that instant even if nothing arrives or completes
        self.setup_ends: list[int] = []
        self.overhead = 0
        self.record_runs = record_runs
        self.runs: list[Run] = []  # filled only when record_runs

    # --- cost model (level 3) ---

    def _transfer_time(self, tokens: int) -> int:
        return -(-self.kv * tokens // self.bandwidth)  # ceil(bytes / bandwidth)

    def _save_tokens(self, i: int) -> int:
        return self.done[i] - self.saved[i] if self.incremental else self.done[i]

    # --- moving requests between waiting and slots ---

    def _enqueue(self, i: int) -> None:
        r = self.reqs[i]
        heapq.heappush(self.waiting, (self.cls[i], r.arrival, r.id, i))

    def _place(self, i: int, now: int, extra_setup: int) -> None:
        """Give request i a slot at `now`; its setup is extra_setup (a victim's save) + its restore."""
        restore = self._transfer_time(self.done[i])
        self.overhead += restore
        if self.start[i] is None:
            self.start[i] = now
        self.work_start[i] = now + extra_setup + restore
        if self.preemptive and self.work_start[i] > now:
            heapq.heappush(self.setup_ends, self.work_start[i])
        end = self.work_start[i] + self.reqs[i].duration - self.done[i]
        self.end_at[i] = end
        self.running.add(i)
        heapq.heappush(self.completions, (end, i))

    def _complete(self, i: int, now: int) -> None:
        self._record_run(i, now)
        self.running.discard(i)
        self.done[i] = self.reqs[i].duration
        self.finish[i] = now

    def _record_run(self, i: int, now: int) -> None:
        if self.record_runs and now > self.work_start[i]:
            self.runs.append(Run(self.reqs[i].id, self.work_start[i], now))

    def _preempt(self, v: int, now: int) -> int:
        """Take request v off its slot at `now`; returns the time its save takes."""
        self._record_run(v, now)
        self.running.discard(v)
        self.done[v] += now - self.work_start[v]  # v is past its setup, so this is >= 0
        save = self._transfer_time(self._save_tokens(v))
        self.saved[v] = self.done[v]
        self.overhead += save
        self.preemptions[v] += 1
        self._enqueue(v)
        return save

    def _victim(self, now: int) -> int | None:
        """Among running requests past their setup: the least urgent class, then the cheapest
        save, then the latest arrival, then the largest id. O(K): the save cost changes while a
        request runs, so no heap order stays valid."""
        best, best_key = None, None
        for i in self.running:
            if self.work_start[i] > now:  # still saving a predecessor or restoring: not preemptible
                continue
            r = self.reqs[i]
            done = self.done[i] + now - self.work_start[i]
            cost = done - self.saved[i] if self.incremental else done
            key = (self.cls[i], -self.kv * cost, r.arrival, r.id)
            if best_key is None or key > best_key:
                best, best_key = i, key
        return best

    # --- the loop ---

    def _dispatch(self, now: int) -> None:
        while True:
            # fill free slots, most urgent first; a request with no work left and no setup
            # completes on the spot and frees its slot again
            while len(self.running) < self.num_slots and self.waiting:
                i = heapq.heappop(self.waiting)[3]
                self._place(i, now, 0)
                if self.end_at[i] == now:
                    self._complete(i, now)
            if not self.preemptive or not self.waiting or len(self.running) < self.num_slots:
                return
            w = self.waiting[0][3]
            v = self._victim(now)
            if v is None or not self.cls[w] < self.cls[v]:
                return
            heapq.heappop(self.waiting)
            save = self._preempt(v, now)
            self._place(w, now, save)
            if self.end_at[w] == now:
                self._complete(w, now)

    def run(self) -> None:
        reqs = self.reqs
        arrivals = sorted(range(len(reqs)), key=lambda i: reqs[i].arrival)
        k = 0  # arrivals[k] is the next request to arrive
        completions = self.completions
        while True:
            while completions and not self._live(*completions[0]):
                heapq.heappop(completions)  # stale: that request was preempted
            # the next instant at which anything can change
            candidates = []
            if k < len(arrivals):
                candidates.append(reqs[arrivals[k]].arrival)
            if completions:
                candidates.append(completions[0][0])
            if self.setup_ends:
                candidates.append(self.setup_ends[0])
            if not candidates:
                return
            now = min(candidates)
            while self.setup_ends and self.setup_ends[0] <= now:
                heapq.heappop(self.setup_ends)
            # 1. completions at `now`
            while completions and completions[0][0] == now:
                end, i = heapq.heappop(completions)
                if self._live(end, i):
                    self._complete(i, now)
            # 2. arrivals at `now`
            while k < len(arrivals) and reqs[arrivals[k]].arrival == now:
                self._enqueue(arrivals[k])
                k += 1
            # 3. dispatch (and, where allowed, preemption)
            self._dispatch(now)

    def _live(self, end: int, i: int) -> bool:
        return i in self.running and self.end_at[i] == end

    def outcomes(self) -> dict[int, Outcome]:
        return {
            r.id: Outcome(r.id, self.start[i], self.finish[i], self.preemptions[i])
            for i, r in enumerate(self.reqs)
        }


def _simulate(requests, num_slots, *, preemptive, cls=None, **costs) -> _Simulation:
    reqs = list(requests)
    if cls is None:
        cls = [r.priority for r in reqs]
    sim = _Simulation(reqs, num_slots, preemptive=preemptive, cls=cls, **costs)
    sim.run()
    return sim


# --- the four levels --------------------------------------------------------------


def schedule(requests: list[Request]) -> dict[int, Outcome]:
    """Level 1: one worker, no preemption."""
    _validate(requests)
    return _simulate(requests, 1, preemptive=False).outcomes()


def schedule_preemptive(requests: list[Request], num_slots: int) -> dict[int, Outcome]:
    """Level 2: K slots; a strictly more urgent arrival preempts the least urgent running request."""
    _validate(requests)
    _check_int("num_slots", num_slots, 1)
    return _simulate(requests, num_slots, preemptive=True).outcomes()


def schedule_with_checkpoints(
    requests: list[Request],
    num_slots: int,
    kv_bytes_per_token: int,
    bandwidth: int,
    incremental: bool,
) -> CheckpointReport:
    """Level 3: level 2, plus the time to save a victim's KV state and restore it on resume."""
    _validate(requests)
    _check_int("num_slots", num_slots, 1)
    _check_int("kv_bytes_per_token", kv_bytes_per_token, 0)
    _check_int("bandwidth", bandwidth, 1)
    if not isinstance(incremental, bool):
        raise ValueError(f"incremental must be a bool, got {incremental!r}")
    sim = _simulate(requests, num_slots, preemptive=True, kv_bytes_per_token=kv_bytes_per_token,
                    bandwidth=bandwidth, incremental=incremental)
    return CheckpointReport(sim.outcomes(), sim.overhead)


def schedule_with_aging(
    requests: list[Request],
    num_slots: int,
    aging_interval: int,
    slo: dict[int, int],
) -> TailReport:
    """Level 4, the baseline policy: level 2 with each request's class replaced by its aged
    deadline priority * aging_interval + arrival.

    That is aging: a request's effective priority, priority - (now - arrival) / aging_interval,
    falls by one every aging_interval time units, and comparing two effective priorities at the
    same instant is comparing these deadlines. A static key keeps the heap valid, and it gives the
    guarantee the prompt asks for: a request that arrives more than priority * aging_interval
    after r has a larger deadline than r, so it never holds a slot while r waits.
    """
    _validate(requests)
    _check_int("num_slots", num_slots, 1)
    _check_int("aging_interval", aging_interval, 1)
    if not isinstance(slo, dict):
        raise ValueError(f"slo must be a dict of priority -> bound, got {slo!r}")
    for prio, bound in slo.items():
        _check_int("slo priority", prio, 0)
        _check_int("slo", bound, 0)
    reqs = list(requests)
    deadlines = [r.priority * aging_interval + r.arrival for r in reqs]
    sim = _simulate(reqs, num_slots, preemptive=True, cls=deadlines, record_runs=True)
    outcomes = sim.outcomes()
    latencies: dict[int, list[int]] = {}  # priority -> latencies
    for r in reqs:
        latencies.setdefault(r.priority, []).append(outcomes[r.id].finish - r.arrival)
    slo_met = {
        prio: (prio not in latencies or percentile(latencies[prio], 99) <= bound)
        for prio, bound in slo.items()
    }
    return TailReport(outcomes, sim.runs, slo_met)
