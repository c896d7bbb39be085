"""Replay a candidate's schedule under the rules of PROMPT.md and report every rule it breaks.

The candidate reports decisions (who is preempted, admitted, how many prompt tokens each computes)
and claims (times, blocks in use, who finished, outcomes, goodput). The replay applies the decisions
with its own physics, written from the prompt, and compares. Memory is mirrored in a `BlockLedger`
(see token_batcher_blocks.py), which drives the reference engine's block manager, so "the memory the
candidate claims" is checked against "the memory actually allocated".

Violations are grouped by category so that each invariant is graded by its own test:

    physics (make a schedule invalid):  rejected, transitions, arrival, max_running, prefill,
                                        budget, start (when a step may start), cost (its end
                                        follows the cost model), memory, coverage
    claims (bookkeeping that must match the replay):  blocks_claim, finished_claim, outcomes,
                                        goodput_claim
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from token_batcher_blocks import BlockLedger

PHYSICS = ("rejected", "transitions", "arrival", "max_running", "prefill", "budget", "start",
           "cost", "memory", "coverage")
CLAIMS = ("blocks_claim", "finished_claim", "outcomes", "goodput_claim")


@dataclass
class Report:
    violations: dict = field(default_factory=lambda: defaultdict(list))  # category -> [message]
    goodput: int = 0
    outcomes: dict = field(default_factory=dict)  # id -> (first_token, finish, preemptions, met)
    peak_blocks: int = 0
    tpot: list = field(default_factory=list)  # per finished request with >= 2 output tokens

    def add(self, category: str, message: str) -> None:
        if len(self.violations[category]) < 5:  # keep the first few, enough to explain
            self.violations[category].append(message)

    def first(self, *categories: str) -> str | None:
        for c in categories:
            if self.violations.get(c):
                return f"[{c}] " + self.violations[c][0]
        return None

    @property
    def valid(self) -> bool:
        return not any(self.violations.get(c) for c in PHYSICS)


def too_big(r, num_blocks, block_size) -> bool:
    return math.ceil((r.prompt_tokens + r.output_tokens) / block_size) > num_blocks


# --- level 2 --------------------------------------------------------------------


def replay_continuous(requests, num_blocks, block_size, max_running, result) -> Report:
    """Replay a level-2 ContinuousResult's step records; check memory and the claimed blocks."""
    rep = Report()
    by_id = {r.id: r for r in requests}
    ledger = BlockLedger(num_blocks, block_size)
    tokens: dict[str, int] = {}  # running id -> tokens in cache
    out = defaultdict(int)  # id -> generated so far
    running: list[str] = []
    last_step = -1
    for rec in result.steps:
        s = rec.step
        if s <= last_step:
            rep.add("start", f"step {s} listed after step {last_step}")
        last_step = s
        for rid in rec.preempted:
            if rid not in running:
                rep.add("transitions", f"step {s}: preempted {rid!r}, which was not running")
                continue
            running.remove(rid)
            ledger.free(rid)
            tokens.pop(rid)
        for rid in running:  # everyone left from before this step decodes one token
            tokens[rid] += 1
            out[rid] += 1
            ledger.grow(rid, tokens[rid])
        for rid in rec.admitted:
            r = by_id.get(rid)
            if r is None or rid in running:
                rep.add("transitions", f"step {s}: admitted {rid!r}, which is unknown or running")
                continue
            if r.arrival > s:
                rep.add("arrival", f"step {s}: admitted {rid!r}, which arrives at step {r.arrival}")
            produces = 1 if out[rid] < r.output_tokens else 0
            tokens[rid] = r.prompt_tokens + out[rid] + produces
            out[rid] += produces
            running.append(rid)
            ledger.grow(rid, tokens[rid])
        if len(running) > max_running:
            rep.add("max_running", f"step {s}: {len(running)} running, max_running={max_running}")
        used = ledger.used
        rep.peak_blocks = max(rep.peak_blocks, used)
        if used > num_blocks:
            rep.add("memory", f"step {s}: the schedule needs {used} blocks of {num_blocks}")
        if rec.blocks_in_use != used:
            rep.add("blocks_claim", f"step {s}: claimed blocks_in_use={rec.blocks_in_use}, "
                                    f"the replay holds {used}")
        finished = [rid for rid in running if out[rid] >= by_id[rid].output_tokens]
        if sorted(rec.finished) != sorted(finished):
            rep.add("finished_claim", f"step {s}: claimed finished={sorted(rec.finished)}, "
                                      f"the replay finishes {sorted(finished)}")
        for rid in finished:
            running.remove(rid)
            ledger.free(rid)
            tokens.pop(rid)
    if running:
        rep.add("coverage", f"still running after the last step: {sorted(running)}")
    problem = ledger.problem()
    if problem:
        rep.add("memory", problem)
    return rep


# --- levels 3 and 4 -------------------------------------------------------------


def replay_schedule(requests, config, schedule, chunked: bool) -> Report:
    """Replay a level-3/4 Schedule. Every decision is applied; every claim is compared."""
    rep = Report()
    cfg = config
    B = cfg.block_size
    by_id = {r.id: r for r in requests}
    expected_rejected = {r.id for r in requests if too_big(r, cfg.num_blocks, B)}
    claimed_rejected = dict(schedule.rejected)
    if set(claimed_rejected) != expected_rejected:
        rep.add("rejected", f"rejected {sorted(claimed_rejected)}, expected {sorted(expected_rejected)}")
    for rid, reason in claimed_rejected.items():
        if reason != "exceeds_cache":
            rep.add("rejected", f"rejected[{rid!r}] = {reason!r}, expected 'exceeds_cache'")

    ledger = BlockLedger(cfg.num_blocks, B)
    status = {r.id: "waiting" for r in requests if r.id not in expected_rejected}
    cached = defaultdict(int)
    out = defaultdict(int)
    first_token: dict[str, int] = {}
    finish: dict[str, int] = {}
    preemptions = defaultdict(int)
    running: list[str] = []
    prev_end = None

    def to_prefill(rid):
        return by_id[rid].prompt_tokens + out[rid] - cached[rid]

    for k, st in enumerate(schedule.steps):
        where = f"step {k} (start {st.start})"
        # --- time
        if prev_end is None:
            if st.start < 0:
                rep.add("start", f"{where}: starts before time 0")
        elif running and st.start != prev_end:
            rep.add("start", f"{where}: requests were running, so it must start at {prev_end}")
        elif st.start < prev_end:
            rep.add("start", f"{where}: starts before the previous step ended at {prev_end}")
        # --- preemptions, then admissions
        preempted_now = set()
        for rid in st.preempted:
            if status.get(rid) != "running":
                rep.add("transitions", f"{where}: preempted {rid!r}, which was not running")
                continue
            status[rid] = "waiting"
            running.remove(rid)
            ledger.free(rid)
            cached[rid] = 0
            preemptions[rid] += 1
            preempted_now.add(rid)
        for rid in st.admitted:
            if status.get(rid) != "waiting" or rid in preempted_now:
                why = "preempted in the same step" if rid in preempted_now else (
                    status.get(rid) or "rejected or unknown")
                rep.add("transitions", f"{where}: admitted {rid!r}, which was {why}")
                continue
            if by_id[rid].arrival > st.start:
                rep.add("arrival", f"{where}: admitted {rid!r}, which arrives at {by_id[rid].arrival}")
            status[rid] = "running"
            running.append(rid)
        if not running:
            rep.add("transitions", f"{where}: nothing is running (a step must run a request)")
        if len(running) > cfg.max_running:
            rep.add("max_running", f"{where}: {len(running)} running, max_running={cfg.max_running}")
        # --- the step's work
        chunks = {}
        for rid, c in st.prefill.items():
            if rid not in running or to_prefill(rid) <= 0:
                rep.add("prefill", f"{where}: prefill[{rid!r}]={c}, but it is not running in prefill")
            elif not isinstance(c, int) or isinstance(c, bool) or not 1 <= c <= to_prefill(rid):
                rep.add("prefill", f"{where}: prefill[{rid!r}]={c!r}, must be 1..{to_prefill(rid)}")
            else:
                chunks[rid] = c
        decoding = [rid for rid in running if to_prefill(rid) == 0]
        if not chunked:
            for rid in running:
                if to_prefill(rid) > 0 and chunks.get(rid) != to_prefill(rid):
                    rep.add("prefill", f"{where}: {rid!r} must compute its whole prefill "
                                       f"({to_prefill(rid)} tokens) in the step it is admitted")
        work = len(decoding) + sum(chunks.values())
        if chunked and work > cfg.token_budget:
            rep.add("budget", f"{where}: {work} tokens computed, token_budget={cfg.token_budget}")
        if running and work == 0:
            rep.add("transitions", f"{where}: computes no token")
        end = st.start + cfg.decode_cost + cfg.prefill_cost * sum(
            c for c in st.prefill.values() if isinstance(c, int))
        if st.end != end:
            rep.add("cost", f"{where}: end={st.end}, the cost model gives {end}")
        for rid in decoding:
            cached[rid] += 1
            out[rid] += 1
            ledger.grow(rid, cached[rid])
        for rid, c in chunks.items():
            cached[rid] += c
            if to_prefill(rid) == 0:
                first_token.setdefault(rid, end)
                if out[rid] < by_id[rid].output_tokens:
                    cached[rid] += 1
                    out[rid] += 1
            ledger.grow(rid, cached[rid])
        used = ledger.used
        rep.peak_blocks = max(rep.peak_blocks, used)
        if used > cfg.num_blocks:
            rep.add("memory", f"{where}: the schedule holds {used} blocks of {cfg.num_blocks}")
        if st.blocks_in_use != used:
            rep.add("blocks_claim", f"{where}: claimed blocks_in_use={st.blocks_in_use}, "
                                    f"the replay holds {used}")
        finished = [rid for rid in running
                    if to_prefill(rid) == 0 and out[rid] >= by_id[rid].output_tokens]
        if sorted(st.finished) != sorted(finished):
            rep.add("finished_claim", f"{where}: claimed finished={sorted(st.finished)}, "
                                      f"the replay finishes {sorted(finished)}")
        for rid in finished:
            status[rid] = "finished"
            finish[rid] = end
            running.remove(rid)
            ledger.free(rid)
        prev_end = st.end
    problem = ledger.problem()
    if problem:
        rep.add("memory", problem)

    # --- every request finished or shed, exactly once
    shed = list(schedule.shed)
    if len(shed) != len(set(shed)):
        rep.add("coverage", "an id appears more than once in shed")
    for rid in shed:
        if rid not in status:
            rep.add("coverage", f"shed {rid!r}, which is rejected or unknown")
        elif status[rid] == "finished":
            rep.add("coverage", f"shed {rid!r}, which finished")
        elif status[rid] == "running":
            rep.add("coverage", f"shed {rid!r}, which is still running after the last step")
    for rid, st_ in status.items():
        if st_ != "finished" and rid not in shed:
            rep.add("coverage", f"{rid!r} neither finished nor shed")

    # --- outcomes and goodput, from the replay
    for rid, t in finish.items():
        r = by_id[rid]
        met = first_token[rid] - r.arrival <= r.ttft_deadline
        rep.outcomes[rid] = (first_token[rid], t, preemptions[rid], met)
        if r.output_tokens >= 2:
            rep.tpot.append((t - first_token[rid]) / (r.output_tokens - 1))
    rep.goodput = sum(1 for o in rep.outcomes.values() if o[3])
    claimed = {
        rid: (o.first_token_time, o.finish_time, o.num_preemptions, o.met_slo)
        for rid, o in schedule.outcomes.items()
    }
    if set(claimed) != set(rep.outcomes):
        rep.add("outcomes", f"outcomes has ids {sorted(claimed)}, the finished ones are "
                            f"{sorted(rep.outcomes)}")
    for rid in sorted(set(claimed) & set(rep.outcomes)):
        if claimed[rid] != rep.outcomes[rid]:
            rep.add("outcomes", f"outcomes[{rid!r}] = (first_token_time, finish_time, "
                                f"num_preemptions, met_slo) {claimed[rid]}, the replay gives "
                                f"{rep.outcomes[rid]}")
    if schedule.goodput != rep.goodput:
        rep.add("goodput_claim", f"goodput={schedule.goodput}, the replay counts {rep.goodput}")
    return rep


def nearest_rank(values, p):
    """Nearest-rank percentile, written the long way: the smallest v with >= p% of values <= v."""
    ordered = sorted(values)
    for v in ordered:
        if sum(1 for x in ordered if x <= v) * 100 >= p * len(ordered):
            return v
    return None
