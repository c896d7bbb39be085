"""Helpers for the priority-scheduler hidden suite: a slow oracle, a rule checker, traces, the reference.

`simulate` is written from PROMPT.md alone and shares no code with the reference: it steps the
clock one time unit at a time and, at every instant, literally does what the prompt says
(completions, arrivals, dispatch), scanning plain lists with min() and max(). It is slow (it costs
O(total time x n)) and meant for the small inputs hypothesis generates.

`rule_violation` checks the four rules of level 4 (and the shape of a TailReport) on any schedule,
whatever policy made it, by sweeping over the instants at which anything changes.

Left out: the level-4 baseline policy itself (level 4 is graded by its rules and by tail latency
against the reference, not by equality).
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict

from kata import checks

# --- the oracle (levels 1 to 3) ------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def simulate(requests, num_slots=1, preemptive=False, kv=0, bandwidth=1, incremental=False):
    """Returns ({id: (start, finish, preemptions)}, overhead), stepping one time unit at a time.

    Level 1: simulate(reqs).  Level 2: simulate(reqs, K, True).
    Level 3: simulate(reqs, K, True, kv, bandwidth, incremental).
    """
    urgency = lambda r: (r.priority, r.arrival, r.id)  # noqa: E731
    state = {
        r.id: {"req": r, "done": 0, "saved": 0, "start": None, "finish": None, "pre": 0}
        for r in requests
    }
    not_arrived = list(requests)
    waiting = []  # request records
    slots = []  # {"rec": record, "setup": time units of setup left}
    overhead = 0
    t = 0

    def place(rec, extra_setup):
        nonlocal overhead
        restore = _ceil_div(kv * rec["done"], bandwidth)
        overhead += restore
        if rec["start"] is None:
            rec["start"] = t
        slots.append({"rec": rec, "setup": extra_setup + restore})

    def finish_zero_work():
        # a request with no setup and no work left completes on the spot (zero duration)
        for slot in list(slots):
            rec = slot["rec"]
            if slot["setup"] == 0 and rec["done"] == rec["req"].duration:
                rec["finish"] = t
                slots.remove(slot)

    while any(rec["finish"] is None for rec in state.values()):
        # 1. completions
        for slot in list(slots):
            rec = slot["rec"]
            if slot["setup"] == 0 and rec["done"] == rec["req"].duration:
                rec["finish"] = t
                slots.remove(slot)
        # 2. arrivals
        for r in list(not_arrived):
            if r.arrival == t:
                waiting.append(state[r.id])
                not_arrived.remove(r)
        # 3. dispatch
        while True:
            while len(slots) < num_slots and waiting:
                rec = min(waiting, key=lambda x: urgency(x["req"]))
                waiting.remove(rec)
                place(rec, 0)
                finish_zero_work()
            if not preemptive or not waiting or len(slots) < num_slots:
                break
            w = min(waiting, key=lambda x: urgency(x["req"]))
            candidates = [s for s in slots if s["setup"] == 0]
            if not candidates:
                break
            worst = max(s["rec"]["req"].priority for s in candidates)
            least = [s for s in candidates if s["rec"]["req"].priority == worst]

            def save_bytes(s):
                rec = s["rec"]
                return kv * (rec["done"] - rec["saved"] if incremental else rec["done"])

            cheapest = min(save_bytes(s) for s in least)
            tied = [s for s in least if save_bytes(s) == cheapest]
            v = max(tied, key=lambda s: (s["rec"]["req"].arrival, s["rec"]["req"].id))
            if not w["req"].priority < v["rec"]["req"].priority:
                break
            save = _ceil_div(save_bytes(v), bandwidth)
            overhead += save
            vrec = v["rec"]
            vrec["saved"] = vrec["done"]
            vrec["pre"] += 1
            slots.remove(v)
            waiting.append(vrec)
            waiting.remove(w)
            place(w, save)
            finish_zero_work()
        # advance one time unit; skip idle stretches
        if not slots and not waiting:
            if not not_arrived:
                break
            t = min(r.arrival for r in not_arrived)
            continue
        for slot in slots:
            if slot["setup"] > 0:
                slot["setup"] -= 1
            else:
                slot["rec"]["done"] += 1
        t += 1
    result = {rid: (rec["start"], rec["finish"], rec["pre"]) for rid, rec in state.items()}
    return result, overhead


def nearest_rank(values, p):
    """Nearest-rank percentile, by counting: the smallest v with at least p% of values <= v."""
    for v in sorted(set(values)):
        if 100 * sum(1 for x in values if x <= v) >= p * len(values):
            return v
    raise AssertionError("unreachable")


def latencies_by_class(requests, finish_of):
    by_class = defaultdict(list)
    for r in requests:
        by_class[r.priority].append(finish_of[r.id] - r.arrival)
    return by_class


# --- level 4: the rules -----------------------------------------------------------


def rule_violation(requests, report, num_slots, aging_interval, slo=None, rules=(2, 3, 4)):
    """None if the TailReport keeps the rules of level 4, else a one-line description of the first
    violation. The report's shape and rule 1 are always checked (the others make no sense without
    them); `rules` picks which of rules 2, 3 and 4 are checked too; with `slo`, slo_met is checked
    against the P99 of the report's own outcomes."""
    by_id = {r.id: r for r in requests}
    outcomes = report.outcomes
    if set(outcomes) != set(by_id):
        return f"outcomes has ids {sorted(outcomes)}, expected {sorted(by_id)}"
    runs = defaultdict(list)  # id -> [(start, end)]
    for run in report.runs:
        if run.id not in by_id:
            return f"a run has id {run.id}, which is no request's id"
        if run.end < run.start:
            return f"Run({run.id}, {run.start}, {run.end}) ends before it starts"
        if run.end > run.start:
            runs[run.id].append((run.start, run.end))
    # rule 1 and the outcomes' consistency with the runs
    for r in requests:
        mine = sorted(runs[r.id])
        o = outcomes[r.id]
        work = sum(e - s for s, e in mine)
        if work != r.duration:
            return f"request {r.id} got {work} units of work in its runs, expected its duration {r.duration}"
        if mine and mine[0][0] < r.arrival:
            return f"request {r.id} runs from {mine[0][0]}, before its arrival at {r.arrival}"
        for (s1, e1), (s2, e2) in zip(mine, mine[1:]):
            if s2 < e1:
                return f"request {r.id} has overlapping runs [{s1}, {e1}) and [{s2}, {e2})"
        if mine:
            if (o.start, o.finish) != (mine[0][0], mine[-1][1]):
                return (f"request {r.id} has outcome start={o.start}, finish={o.finish}, but its runs "
                        f"span [{mine[0][0]}, {mine[-1][1]})")
        elif not (r.arrival <= o.start == o.finish):
            return (f"zero-duration request {r.id} (arrival {r.arrival}) has start={o.start}, "
                    f"finish={o.finish}; expected start == finish >= arrival")
    # rules 2 to 4: sweep over the instants where something changes
    changes = defaultdict(list)  # instant -> [(id, what, +1/-1)]
    for r in requests:
        changes[r.arrival].append((r.id, "present", +1))
        changes[outcomes[r.id].finish].append((r.id, "present", -1))
        for s, e in runs[r.id]:
            changes[s].append((r.id, "running", +1))
            changes[e].append((r.id, "running", -1))
    present = defaultdict(int)
    running = defaultdict(int)
    status = {}  # id -> "running" | "waiting" | None
    version = defaultdict(int)
    n_running = n_waiting = 0
    latest_running = []  # heap of (-arrival, id, version): who runs that arrived last
    earliest_due = []  # heap of (arrival + priority * A, id, version): the most overdue waiter
    instants = sorted(changes)
    for k, t in enumerate(instants):
        touched = set()
        for rid, what, delta in changes[t]:
            (present if what == "present" else running)[rid] += delta
            touched.add(rid)
        for rid in touched:
            old = status.get(rid)
            new = "running" if running[rid] > 0 else ("waiting" if present[rid] > 0 else None)
            if old == new:
                continue
            n_running += (new == "running") - (old == "running")
            n_waiting += (new == "waiting") - (old == "waiting")
            status[rid] = new
            version[rid] += 1
            r = by_id[rid]
            if new == "running":
                heapq.heappush(latest_running, (-r.arrival, rid, version[rid]))
            elif new == "waiting":
                heapq.heappush(earliest_due, (r.arrival + r.priority * aging_interval, rid, version[rid]))
        if k + 1 == len(instants) or instants[k + 1] == t:
            continue
        # the state now holds during [t, next instant)
        if 2 in rules and n_running > num_slots:
            return f"{n_running} requests run during [{t}, {t + 1}), more than num_slots={num_slots}"
        if 3 in rules and n_waiting and n_running < num_slots:
            waiter = next(rid for rid, st in status.items() if st == "waiting")
            return (f"a slot is idle during [{t}, {t + 1}) (only {n_running} of {num_slots} busy) "
                    f"while request {waiter} waits")
        for heap in (latest_running, earliest_due):
            while heap and heap[0][2] != version[heap[0][1]]:
                heapq.heappop(heap)
        if 4 in rules and latest_running and earliest_due:
            neg_arrival, sid, _ = latest_running[0]
            due, rid, _ = earliest_due[0]
            if -neg_arrival > due:
                r = by_id[rid]
                return (f"request {rid} (arrival {r.arrival}, priority {r.priority}) waits during "
                        f"[{t}, {t + 1}) while request {sid}, which arrived at {-neg_arrival} > "
                        f"{r.arrival} + {r.priority} * {aging_interval}, runs")
    if slo is not None:
        if set(report.slo_met) != set(slo):
            return f"slo_met has keys {sorted(report.slo_met)}, expected the keys of slo {sorted(slo)}"
        lat = latencies_by_class(requests, {i: o.finish for i, o in outcomes.items()})
        for prio, bound in slo.items():
            met = prio not in lat or nearest_rank(lat[prio], 99) <= bound
            if report.slo_met[prio] != met:
                p99 = nearest_rank(lat[prio], 99) if prio in lat else None
                return (f"slo_met[{prio}] is {report.slo_met[prio]!r}, expected {met} "
                        f"(P99 of your priority-{prio} latencies is {p99}, bound {bound})")
    return None


# --- traces ------------------------------------------------------------------------


def bursty_trace(Request, seed, n, num_slots, load=1.0):
    """A seeded trace of n requests: four classes, short urgent ones and long lax ones, arriving
    in alternating busy (1.5 x load) and quiet (0.5 x load) stretches of about 200 time units."""
    rng = random.Random(seed)
    classes = [  # (priority, share, shortest, longest)
        (0, 0.45, 1, 6),
        (1, 0.25, 2, 12),
        (2, 0.20, 4, 30),
        (3, 0.10, 20, 80),
    ]
    mean_work = sum(share * (lo + hi) / 2 for _, share, lo, hi in classes)
    reqs, t = [], 0
    for i in range(n):
        busy = (t // 200) % 2 == 0
        rate = num_slots * load * (1.5 if busy else 0.5) / mean_work  # arrivals per time unit
        t += int(rng.expovariate(rate))
        x, acc = rng.random(), 0.0
        for prio, share, lo, hi in classes:
            acc += share
            if x < acc or prio == 3:
                break
        reqs.append(Request(i, t, prio, rng.randint(lo, hi)))
    rng.shuffle(reqs)  # the functions must not rely on input order
    return reqs


def overloaded_trace(Request, n, num_slots, seed=7):
    """Arrivals faster than the slots can serve them: the waiting queue grows to ~n/3, so a linear
    scan of it per dispatch is quadratic."""
    rng = random.Random(seed)
    reqs, t = [], 0
    for i in range(n):
        t += rng.randint(0, 2)
        reqs.append(Request(i, t, rng.randint(0, 3), rng.randint(1, 4 * num_slots)))
    return reqs


# --- generated traces for the property tests -------------------------------------------


def request_rows(max_n: int):
    """Hypothesis strategy: up to max_n request rows (id, arrival, priority, duration) with distinct
    ids in 0..40, arrivals up to 12, priorities 0..3 and durations up to 6."""
    from hypothesis import strategies as st

    return st.integers(0, max_n).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 40), min_size=n, max_size=n, unique=True),
            st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(0, 6)), min_size=n, max_size=n),
        ).map(lambda t: [(i, *rest) for i, rest in zip(*t)])
    )


# --- the reference, for side-by-side timing and tail comparison -----------------


reference = checks.reference_at(__file__, "solutions/priority-scheduler.py")  # call only inside a baseline measure


# what a solution too slow for the timing tests most likely does
SLOW_HINT = "is something linear per request (a list scan, a sort per event, a rescan of all requests)?"
