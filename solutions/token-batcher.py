"""Token batcher: reference solution.

Four levels, each a function over a list of `Request`s:

    plan_batches(...)        level 1: dynamic (request-level) batching, padded to the longest request
    simulate_continuous(...) level 2: continuous (iteration-level) batching on a paged KV cache,
                             with preemption by recompute
    schedule_slo(...)        level 3: the same engine under a cost model and a time-to-first-token SLO;
                             the policy (admission order, shedding) is ours to choose
    schedule_chunked(...)    level 4: chunked prefill under a per-step token budget
    tpot_percentiles(...)    level 4: time-per-output-token percentiles of a schedule

Standard library only. Every rule implemented here is stated in PROMPT.md.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field


# --- input types ----------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    id: str
    arrival: int  # level 1: time; level 2: step; levels 3-4: time
    prompt_tokens: int  # >= 1
    output_tokens: int  # >= 0
    ttft_deadline: int | None = None  # levels 3-4: max time from arrival to first token (>= 0)


@dataclass(frozen=True)
class EngineConfig:
    num_blocks: int  # KV blocks in the cache
    block_size: int  # tokens per block
    max_running: int  # max requests running in one step
    prefill_cost: int  # time per prompt token computed in a step (>= 0)
    decode_cost: int  # fixed time of every step (>= 1)
    token_budget: int | None = None  # level 4: max tokens computed in one step


# --- output types ---------------------------------------------------------------


@dataclass
class Batch:
    request_ids: list[str]  # arrival order
    dispatch_time: int
    reason: str  # "full" | "budget" | "window"
    padded_tokens: int  # len(request_ids) * longest (prompt + output)
    useful_tokens: int  # sum of (prompt + output)


@dataclass
class BatchPlan:
    batches: list[Batch]
    rejected: dict[str, str]  # id -> "exceeds_batch_tokens"
    padding_waste: int  # sum of padded - useful over all batches


@dataclass
class RequestStats:
    admitted_step: int  # step of its first admission
    first_token_step: int  # step its prefill first completed
    finish_step: int
    num_preemptions: int


@dataclass
class StepRecord:
    step: int
    admitted: list[str]  # admission order
    preempted: list[str]  # preemption order
    finished: list[str]  # admission order (order of the running list)
    blocks_in_use: int  # after the step's tokens, before finished requests free their blocks


@dataclass
class ContinuousResult:
    requests: dict[str, RequestStats]  # every request that was not rejected
    rejected: dict[str, str]  # id -> "exceeds_cache"
    steps: list[StepRecord]  # steps in which at least one request ran, ascending
    peak_blocks: int  # max blocks_in_use over steps (0 if none)


@dataclass
class ScheduledStep:
    start: int
    end: int  # start + decode_cost + prefill_cost * sum(prefill.values())
    preempted: list[str]
    admitted: list[str]
    prefill: dict[str, int]  # id -> prompt tokens computed in this step
    finished: list[str]
    blocks_in_use: int  # after the step's tokens, before finished requests free their blocks


@dataclass
class Outcome:
    first_token_time: int
    finish_time: int
    num_preemptions: int
    met_slo: bool


@dataclass
class Schedule:
    steps: list[ScheduledStep] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # finished requests only
    shed: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # id -> "exceeds_cache"
    goodput: int = 0  # number of outcomes with met_slo


@dataclass
class TPOTStats:
    count: int  # finished requests with output_tokens >= 2
    p50: float | None
    p90: float | None
    p99: float | None


# --- validation -----------------------------------------------------------------


def _check_int(name: str, value, minimum: int, where: str = "") -> None:
    # type() rather than isinstance(): a bool is an int subclass, and is not a count
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}{where}")


def _validate_requests(requests: list[Request], need_deadline: bool = False) -> None:
    seen: set[str] = set()
    for r in requests:  # the common case: one set lookup and one cheap comparison chain
        if r.id in seen:
            raise ValueError(f"id {r.id!r} is used by more than one request")
        seen.add(r.id)
        a, p, o = r.arrival, r.prompt_tokens, r.output_tokens
        if (type(a) is not int or type(p) is not int or type(o) is not int
                or a < 0 or p < 1 or o < 0
                or (need_deadline and (type(r.ttft_deadline) is not int or r.ttft_deadline < 0))):
            where = f" (request {r.id!r})"
            _check_int("arrival", r.arrival, 0, where)
            _check_int("prompt_tokens", r.prompt_tokens, 1, where)
            _check_int("output_tokens", r.output_tokens, 0, where)
            _check_int("ttft_deadline", r.ttft_deadline, 0, where)


def _validate_config(config: EngineConfig, chunked: bool) -> None:
    _check_int("num_blocks", config.num_blocks, 1)
    _check_int("block_size", config.block_size, 1)
    _check_int("max_running", config.max_running, 1)
    _check_int("prefill_cost", config.prefill_cost, 0)
    _check_int("decode_cost", config.decode_cost, 1)
    if chunked:
        _check_int("token_budget", config.token_budget, config.max_running)


def _arrival_order(requests: list[Request]) -> list[Request]:
    # sorted() is stable: equal arrivals keep their input order
    return sorted(requests, key=lambda r: r.arrival)


# --- level 1: dynamic batching --------------------------------------------------


def plan_batches(
    requests: list[Request], max_batch_size: int, max_batch_tokens: int, window: int
) -> BatchPlan:
    """Group requests into padded batches in arrival order.

    Example: sizes (prompt+output) 3, 5 arriving at 0 and 1, max_batch_tokens=10, window=5
      -> one batch [a, b], padded 2*5=10, useful 8, closed by its window at time 5.
    """
    _validate_requests(requests)
    _check_int("max_batch_size", max_batch_size, 1)
    _check_int("max_batch_tokens", max_batch_tokens, 1)
    _check_int("window", window, 0)

    batches: list[Batch] = []
    rejected: dict[str, str] = {}
    members: list[Request] = []  # the open batch
    longest = 0  # longest prompt+output in the open batch (O(1) per request, never rescanned)

    def close(dispatch_time: int, reason: str) -> None:
        nonlocal members, longest
        useful = sum(r.prompt_tokens + r.output_tokens for r in members)
        batches.append(
            Batch([r.id for r in members], dispatch_time, reason, len(members) * longest, useful)
        )
        members, longest = [], 0

    for r in _arrival_order(requests):
        size = r.prompt_tokens + r.output_tokens
        if size > max_batch_tokens:  # cannot fit even alone; touches no batch
            rejected[r.id] = "exceeds_batch_tokens"
            continue
        if members:
            opened = members[0].arrival
            if r.arrival > opened + window:  # the window ended before r arrived
                close(opened + window, "window")
            elif (len(members) + 1) * max(longest, size) > max_batch_tokens:
                close(r.arrival, "budget")
        members.append(r)
        longest = max(longest, size)
        if len(members) == max_batch_size:
            close(r.arrival, "full")
    if members:
        close(members[0].arrival + window, "window")

    waste = sum(b.padded_tokens - b.useful_tokens for b in batches)
    return BatchPlan(batches, rejected, waste)


# --- level 2: continuous batching on a paged KV cache ---------------------------


@dataclass(slots=True, eq=False)  # compared by identity: `seq in list` must be cheap
class _Seq:
    """A request's state inside the simulation."""

    req: Request
    cached: int = 0  # tokens whose KV is in the cache (0 while not running)
    generated: int = 0  # output tokens produced so far (kept across preemptions)
    first_admitted: int | None = None
    first_token: int | None = None  # step (level 2) or time (levels 3-4) the prefill first completed
    finish: int | None = None  # level 2: finish step
    num_preemptions: int = 0


def _blocks(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)  # ceil


def _too_big(r: Request, num_blocks: int, block_size: int) -> bool:
    # the most a request ever holds: its prompt and all its output tokens
    return _blocks(r.prompt_tokens + r.output_tokens, block_size) > num_blocks


def simulate_continuous(
    requests: list[Request], num_blocks: int, block_size: int, max_running: int
) -> ContinuousResult:
    """Step-by-step continuous batching with FCFS admission and recompute preemption."""
    _validate_requests(requests)
    _check_int("num_blocks", num_blocks, 1)
    _check_int("block_size", block_size, 1)
    _check_int("max_running", max_running, 1)

    rejected: dict[str, str] = {}
    seqs: list[_Seq] = []  # every accepted request, in arrival order
    for r in _arrival_order(requests):
        # the most a request ever holds is its prompt and all its output
        if -(-(r.prompt_tokens + r.output_tokens) // block_size) > num_blocks:
            rejected[r.id] = "exceeds_cache"
        else:
            seqs.append(_Seq(r))

    pending = deque(seqs)  # not yet arrived
    waiting: deque[_Seq] = deque()  # arrived, not running; preempted requests re-enter at the front
    running: list[_Seq] = []  # admission order: running[-1] is the most recently admitted
    free = num_blocks
    steps: list[StepRecord] = []
    step = 0

    while pending or waiting or running:
        if not running and not waiting:
            step = max(step, pending[0].req.arrival)  # idle: jump to the next arrival
        while pending and pending[0].req.arrival <= step:
            waiting.append(pending.popleft())

        # 1. growth: oldest first, every running request takes a slot for its next token;
        #    with no free block, the most recently admitted request is preempted (maybe itself)
        preempted: list[_Seq] = []
        finished: list[_Seq] = []  # collected in running order = admission order
        i = 0
        while i < len(running):
            seq = running[i]
            if seq.cached % block_size == 0:  # its blocks are full: the next token needs a new one
                while free == 0 and running[-1] is not seq:
                    free += _preempt(running.pop(), block_size, preempted)
                if free == 0:  # seq is the most recently admitted: it gives up its own blocks
                    free += _preempt(running.pop(), block_size, preempted)
                    break
                free -= 1
            seq.cached += 1
            seq.generated += 1
            if seq.generated == seq.req.output_tokens:
                finished.append(seq)
            i += 1
        for seq in preempted:  # each victim goes in front of the earlier ones
            waiting.appendleft(seq)

        # 2. admission, strict FCFS: the head's prefill (+ its first token) must fit
        admitted: list[str] = []
        while waiting and len(running) < max_running:
            seq = waiting[0]
            tokens = seq.req.prompt_tokens + seq.generated
            produces = seq.generated < seq.req.output_tokens
            need = -(-(tokens + produces) // block_size)
            if need > free:
                break  # the head blocks everyone behind it
            waiting.popleft()
            free -= need
            seq.cached = tokens + produces
            seq.generated += produces
            if seq.first_admitted is None:
                seq.first_admitted = seq.first_token = step
            running.append(seq)
            admitted.append(seq.req.id)
            if seq.generated == seq.req.output_tokens:
                finished.append(seq)

        if running:
            # 3. record the step; then finished requests free their blocks for the next step
            steps.append(StepRecord(step, admitted, [s.req.id for s in preempted],
                                    [s.req.id for s in finished], num_blocks - free))
            for seq in finished:
                free += _blocks(seq.cached, block_size)
                seq.finish = step
            if finished:
                running = [s for s in running if s.generated < s.req.output_tokens]
        step += 1

    stats = {
        s.req.id: RequestStats(s.first_admitted, s.first_token, s.finish, s.num_preemptions)
        for s in seqs
    }
    peak = max((s.blocks_in_use for s in steps), default=0)
    return ContinuousResult(stats, rejected, steps, peak)


def _preempt(seq: _Seq, block_size: int, preempted: list[_Seq]) -> int:
    """Recompute preemption: drop the KV, keep the generated tokens. Returns blocks freed."""
    freed = _blocks(seq.cached, block_size)
    seq.cached = 0
    seq.num_preemptions += 1
    preempted.append(seq)
    return freed


# --- levels 3 and 4: an SLO-aware policy ----------------------------------------
#
# The physics (what a step costs, what memory a request holds) is fixed by the prompt; the policy
# is ours. This one:
#   * sheds a request as soon as even its best case would miss its deadline (work spent on it
#     would be wasted, and it delays everyone behind it),
#   * orders requests that have not had their first token by deadline (EDF); requests preempted
#     after their first token have no deadline left and go after them,
#   * level 3: admits a request only if this step still ends by its deadline and by the deadlines
#     of the others admitted in the same step (the first token comes at the end of the step);
#   * level 4: decodes first, then the rest of the token budget goes to prefill chunks, EDF; a
#     request is started only if the final footprints (prompt + all output) of everything running
#     fit in the cache. Output lengths are known, so this never preempts: preemption is what makes
#     time-per-output-token tails long.
#   * when decodes still need blocks that are not free, the most recently admitted request is
#     preempted (as in level 2).


class _SLOScheduler:
    def __init__(self, requests: list[Request], config: EngineConfig, chunked: bool):
        self.cfg = config
        self.chunked = chunked
        self.schedule = Schedule()
        self.pending: deque[_Seq] = deque()  # not yet arrived, arrival order
        for r in _arrival_order(requests):
            if _too_big(r, config.num_blocks, config.block_size):
                self.schedule.rejected[r.id] = "exceeds_cache"
            else:
                self.pending.append(_Seq(r))
        self.waiting: list[_Seq] = []  # arrived, not running, not shed
        self.running: list[_Seq] = []  # admission order
        self.free = config.num_blocks

    # --- small helpers

    def blocks(self, seq: _Seq) -> int:
        return _blocks(seq.cached, self.cfg.block_size)

    def final_blocks(self, seq: _Seq) -> int:
        return _blocks(seq.req.prompt_tokens + seq.req.output_tokens, self.cfg.block_size)

    @staticmethod
    def deadline(seq: _Seq) -> int:
        return seq.req.arrival + seq.req.ttft_deadline

    @staticmethod
    def to_prefill(seq: _Seq) -> int:
        """Tokens to compute before its next output token: prompt + generated - cached."""
        return seq.req.prompt_tokens + seq.generated - seq.cached

    def hopeless(self, seq: _Seq, now: int) -> bool:
        """Would it miss its first-token deadline even with the whole engine to itself?"""
        if seq.first_token is not None:
            return False  # its first token is out: it has no deadline left
        rest = self.to_prefill(seq)
        steps = -(-rest // self.cfg.token_budget) if self.chunked else 1
        best = now + max(steps, 1) * self.cfg.decode_cost + rest * self.cfg.prefill_cost
        return best > self.deadline(seq)

    def chunk_that_fits(self, seq: _Seq, limit: int) -> int:
        """Largest prefill chunk <= limit whose new blocks fit in the free ones."""
        room = (self.blocks(seq) + self.free) * self.cfg.block_size - seq.cached
        rest = self.to_prefill(seq)
        chunk = min(rest, limit, room)
        # completing the prefill also stores the token it produces
        if chunk == rest and seq.generated < seq.req.output_tokens and chunk + 1 > room:
            chunk -= 1
        return max(chunk, 0)

    def reserve(self, seq: _Seq, chunk: int, prefill: dict[str, int]) -> None:
        """Take the blocks that `chunk` more tokens (and the token a completed prefill makes) need."""
        prefill[seq.req.id] = chunk
        completes = chunk == self.to_prefill(seq)
        after = seq.cached + chunk + (completes and seq.generated < seq.req.output_tokens)
        self.free -= _blocks(after, self.cfg.block_size) - self.blocks(seq)

    def preempt(self, seq: _Seq, preempted: list[_Seq]) -> None:
        self.free += _preempt(seq, self.cfg.block_size, preempted)
        self.running.remove(seq)
        self.waiting.append(seq)

    # --- the loop: one iteration per step

    def run(self) -> Schedule:
        now = 0
        while self.pending or self.waiting or self.running:
            if not self.running and not self.waiting:
                now = max(now, self.pending[0].req.arrival)  # idle until the next arrival
            while self.pending and self.pending[0].req.arrival <= now:
                self.waiting.append(self.pending.popleft())
            preempted = self.shed_hopeless(now)
            preempted += self.make_room_for_decodes()
            prefill, admitted = self.plan_prefill(now, preempted)
            if self.running:
                now = self.execute(now, preempted, admitted, prefill)
            # else: everything that had arrived was shed; go on to the next arrival
        self.schedule.goodput = sum(o.met_slo for o in self.schedule.outcomes.values())
        return self.schedule

    def shed_hopeless(self, now: int) -> list[_Seq]:
        """Shed waiting (and, level 4, half-prefilled) requests that cannot make their deadline."""
        keep = []
        for seq in self.waiting:
            if self.hopeless(seq, now):
                self.schedule.shed.append(seq.req.id)
            else:
                keep.append(seq)
        self.waiting = keep
        preempted: list[_Seq] = []
        # only a level-4 partial prefill can be running and hopeless. Shedding it takes a step
        # that preempts it, and no step may run nothing: so only when another request keeps
        # running or a waiting one will be admitted (plan_prefill admits the first candidate
        # when nothing runs); otherwise it finishes late.
        hopeless = [s for s in self.running if self.hopeless(s, now)]
        if hopeless and (len(hopeless) < len(self.running) or keep):
            for seq in hopeless:
                self.preempt(seq, preempted)
                self.waiting.remove(seq)
                self.schedule.shed.append(seq.req.id)
        return preempted

    def make_room_for_decodes(self) -> list[_Seq]:
        """Give every decoding request the block its next token needs, preempting the youngest."""
        bs = self.cfg.block_size
        preempted: list[_Seq] = []
        while True:
            need = sum(1 for s in self.running if self.to_prefill(s) == 0 and s.cached % bs == 0)
            if need <= self.free:
                self.free -= need
                return preempted
            self.preempt(self.running[-1], preempted)

    def candidates(self, preempted: list[_Seq]) -> list[_Seq]:
        """Waiting requests in the order we would like to start them."""
        fresh = [s for s in self.waiting if s.first_token is None and s not in preempted]
        fresh.sort(key=lambda s: (self.deadline(s), s.req.arrival))
        started = [s for s in self.waiting if s.first_token is not None and s not in preempted]
        return fresh + started

    def plan_prefill(self, now: int, preempted: list[_Seq]) -> tuple[dict[str, int], list[_Seq]]:
        """Decide this step's prefill tokens and admissions. Returns (prefill, admitted)."""
        cfg = self.cfg
        prefill: dict[str, int] = {}
        admitted: list[_Seq] = []
        budget = None  # level 4: tokens left in this step
        committed = 0  # level 4: final blocks of everything running
        if self.chunked:
            budget = cfg.token_budget - sum(1 for s in self.running if self.to_prefill(s) == 0)
            committed = sum(self.final_blocks(s) for s in self.running)
            for seq in sorted((s for s in self.running if self.to_prefill(s) > 0),
                              key=self.deadline):
                chunk = self.chunk_that_fits(seq, budget)
                if chunk > 0:
                    self.reserve(seq, chunk, prefill)
                    budget -= chunk

        binding: list[_Seq] = []  # level 3: admitted now, first token due at the end of this step
        tokens = 0  # level 3: prefill tokens of this step
        for seq in self.candidates(preempted):
            if len(self.running) >= cfg.max_running or budget == 0:
                break
            if self.chunked:
                if committed + self.final_blocks(seq) > cfg.num_blocks:
                    continue
                chunk = self.chunk_that_fits(seq, budget)
                if chunk == 0:
                    continue
                budget -= chunk
                committed += self.final_blocks(seq)
            else:
                chunk = self.to_prefill(seq)
                if self.chunk_that_fits(seq, chunk) < chunk:
                    continue  # its prompt (+ first token) does not fit in the free blocks
                end = now + cfg.decode_cost + (tokens + chunk) * cfg.prefill_cost
                due = binding + ([seq] if seq.first_token is None else [])
                if any(end > self.deadline(s) for s in due):
                    continue
                tokens += chunk
                binding = due
            self.admit(seq, chunk, prefill, admitted)

        # Never idle with work waiting: with nothing running, the first candidate always fits the
        # empty cache (it was not rejected) and, not being hopeless, makes its deadline.
        assert self.running or not self.candidates(preempted)
        return prefill, admitted

    def admit(self, seq: _Seq, chunk: int, prefill: dict[str, int], admitted: list[_Seq]) -> None:
        self.waiting.remove(seq)
        self.running.append(seq)
        admitted.append(seq)
        self.reserve(seq, chunk, prefill)

    def execute(self, now: int, preempted: list[_Seq], admitted: list[_Seq],
                prefill: dict[str, int]) -> int:
        """Run the step: every request computes its tokens; record it; finished ones leave."""
        cfg = self.cfg
        end = now + cfg.decode_cost + cfg.prefill_cost * sum(prefill.values())
        for seq in self.running:
            if self.to_prefill(seq) == 0:  # decode: one token
                seq.cached += 1
                seq.generated += 1
            elif seq.req.id in prefill:
                seq.cached += prefill[seq.req.id]
                if self.to_prefill(seq) == 0:  # prefill complete: it produces a token
                    if seq.first_token is None:
                        seq.first_token = end
                    if seq.generated < seq.req.output_tokens:
                        seq.cached += 1
                        seq.generated += 1
        blocks_in_use = cfg.num_blocks - self.free
        finished = [s for s in self.running
                    if self.to_prefill(s) == 0 and s.generated == s.req.output_tokens]
        for seq in finished:
            self.free += self.blocks(seq)
            r = seq.req
            met = seq.first_token - r.arrival <= r.ttft_deadline
            self.schedule.outcomes[r.id] = Outcome(seq.first_token, end, seq.num_preemptions, met)
        if finished:
            self.running = [s for s in self.running if s not in finished]
        self.schedule.steps.append(ScheduledStep(
            now, end, [s.req.id for s in preempted], [s.req.id for s in admitted],
            prefill, [s.req.id for s in finished], blocks_in_use,
        ))
        return end


def schedule_slo(requests: list[Request], config: EngineConfig) -> Schedule:
    """Level 3: serve every request or shed it, maximising the number that meet their TTFT SLO."""
    _validate_requests(requests, need_deadline=True)
    _validate_config(config, chunked=False)
    return _SLOScheduler(requests, config, chunked=False).run()


def schedule_chunked(requests: list[Request], config: EngineConfig) -> Schedule:
    """Level 4: as level 3, with prefill split into chunks under config.token_budget."""
    _validate_requests(requests, need_deadline=True)
    _validate_config(config, chunked=True)
    return _SLOScheduler(requests, config, chunked=True).run()


def tpot_percentiles(requests: list[Request], schedule: Schedule) -> TPOTStats:
    """Nearest-rank P50/P90/P99 of (finish - first token) / (output_tokens - 1).

    Only finished requests with output_tokens >= 2 count.
    Example: TPOTs [1.0, 2.0, 4.0] -> p50 = 2.0 (rank ceil(0.5*3) = 2), p90 = p99 = 4.0.
    """
    _validate_requests(requests)  # ttft_deadline is not needed here, so not checked
    outputs = {r.id: r.output_tokens for r in requests}
    for rid, o in schedule.outcomes.items():
        if rid not in outputs:
            raise ValueError(f"outcomes has id {rid!r}, which is not one of the requests")
        if o.finish_time < o.first_token_time:
            raise ValueError(f"finish_time {o.finish_time} < first_token_time {o.first_token_time} "
                             f"(outcome {rid!r})")
    values = sorted(
        (o.finish_time - o.first_token_time) / (outputs[rid] - 1)
        for rid, o in schedule.outcomes.items()
        if outputs[rid] >= 2
    )
    if not values:
        return TPOTStats(0, None, None, None)

    def rank(p: int) -> float:
        return values[math.ceil(p * len(values) / 100) - 1]

    return TPOTStats(len(values), rank(50), rank(90), rank(99))
