"""Continuous (iteration-level) batching: who runs in each step, and who gives up memory.

Every step is re-planned from scratch (Orca, vLLM). In order:

 1. decode: each running sequence past its prefill gets one token; it needs a KV slot for its
    newest token, and if the pool is out of blocks someone is preempted (FCFS: the most recently
    admitted, possibly the sequence itself).
 2. chunked prefill: sequences still in prefill get their next chunk from the leftover token
    budget (max_num_batched_tokens minus one per decode).
 3. swap-in: swapped-out sequences come back first, if nothing was preempted this step.
 4. admit: waiting requests join, in policy order, while they fit: blocks for their tokens, a
    sequence slot (max_num_seqs) and at least one token of budget.

Preemption by recompute frees the blocks and requeues the request, which later prefills its
prompt *and* its output so far (prefix caching may give much of it back); by swap, the blocks
are copied to the host pool and back. Either way a greedy request produces the same tokens.

When computing for real, every decoding sequence is visited each step anyway. When only
simulating, decode progress is tracked lazily so that a step costs O(changes), not O(running):

* a decoding sequence's counts are exact as of `seq.synced_step` and grow by one per step; the
  scheduler looks at it when it finishes (`_finish`) or first outgrows its blocks (`_wake`);
* from then on it needs a new block every block_size steps, always at the same phase
  (step % block_size), so it is merely counted in `_phase_count`. Each step grants
  `_phase_count[step % block_size]` blocks in bulk. Granted blocks are *owed*: kept off the
  free count at once, but taken from the block manager only when that sequence's table must be
  exact (it finishes or is preempted, or the pool runs short: then every table is made exact
  and the step proceeds one sequence at a time, as when computing). Owed blocks never exceed
  the free blocks holding no cached prefix, so no eviction happens out of order.

The decisions, timings and metrics are the same as growing every sequence every step (tests
run both ways and compare); running aggregates (number decoding, their total tokens) feed the
cost model and the metrics.

    sched = Scheduler(SchedulerConfig(), BlockManager(1024, 16), max_model_len=4096)
    sched.add(seq)
    batch = sched.schedule()            # ... run the model on it ...
    sched.postprocess(batch, token_ids, now)
"""

from __future__ import annotations

import heapq
from collections import deque
from operator import attrgetter
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.adapters import (WAITING_WINDOW, FCFSPolicy, PolicyError, PriorityPolicy,
                             RequestView, StepBudget)
from engine.block_manager import BlockManager, NoFreeBlocksError
from engine.config import EOS_TOKEN_ID, SchedulerConfig
from engine.sequence import Sequence, SequenceStatus

WAITING, RUNNING, SWAPPED, FINISHED = (SequenceStatus.WAITING, SequenceStatus.RUNNING,
                                       SequenceStatus.SWAPPED, SequenceStatus.FINISHED)


@dataclass(slots=True)
class ScheduledBatch:
    """One step's plan. Prefill chunks start at each sequence's num_computed_tokens."""

    step: int
    prefills: list[tuple[Sequence, int]] = field(default_factory=list)  # (seq, num_new_tokens)
    decodes: list[Sequence] = field(default_factory=list)  # filled only when computing
    copies: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write (src, dst)
    swap_out: list[tuple[int, int]] = field(default_factory=list)  # (device, host) blocks
    swap_in: list[tuple[int, int]] = field(default_factory=list)  # (host, device) blocks
    preempted: bool = False
    # --- the work, for the cost model (padding included for static batching)
    prefill_tokens: int = 0  # new tokens computed by prefill chunks
    prefill_context_tokens: int = 0  # earlier tokens of those sequences whose K/V are read
    prefill_attention_pairs: int = 0  # (query, key) pairs in prefill attention
    num_decode_seqs: int = 0
    num_decode_context_tokens: int = 0  # KV tokens read by decodes (each includes its new one)
    num_sampled: int = 0  # rows that need logits

    @property
    def is_empty(self) -> bool:
        return not (self.prefills or self.num_decode_seqs or self.swap_in or self.swap_out)


class WaitingQueue:
    """Waiting sequences in policy order: a heap with lazy deletion (O(log n) push and pop)."""

    def __init__(self, key: Callable[[Sequence], object]) -> None:
        self._key = key
        self._heap: list[list] = []  # [key, tiebreak, seq]
        self._live: dict[int, list] = {}  # seq_id -> its current heap entry
        self._count = 0

    def __len__(self) -> int:
        return len(self._live)

    def push(self, seq: Sequence) -> None:
        entry = [self._key(seq), self._count, seq]
        self._count += 1
        try:
            heapq.heappush(self._heap, entry)
        except TypeError as e:
            raise PolicyError(f"the scheduler policy's key() returned {entry[0]!r}, which cannot "
                              f"be compared with other keys ({e})") from None
        self._live[seq.seq_id] = entry

    def peek(self) -> Sequence | None:
        heap = self._heap
        while heap and self._live.get(heap[0][2].seq_id) is not heap[0]:
            heapq.heappop(heap)  # drop entries removed out of order
        return heap[0][2] if heap else None

    def remove(self, seq: Sequence) -> None:
        del self._live[seq.seq_id]

    def head(self, n: int) -> list[Sequence]:
        """The first n sequences in order. O(len) — used only with a plug-in batcher."""
        return [e[2] for e in heapq.nsmallest(n, self._live.values())]


class Scheduler:
    def __init__(self, config: SchedulerConfig, block_manager: BlockManager, *,
                 max_model_len: int, policy: object | None = None, batcher: object | None = None,
                 track_decodes: bool = True) -> None:
        self.config = config
        self.bm = block_manager
        self.max_model_len = max_model_len
        self.track_decodes = track_decodes  # list every decode in each batch (to compute them)
        ref = PriorityPolicy() if config.policy == "priority" else FCFSPolicy()
        policy = policy if policy is not None else ref
        self._key_policy = policy if callable(getattr(policy, "key", None)) else ref
        self._victim_policy = policy if callable(getattr(policy, "pick_victim", None)) else ref
        self.batcher = batcher
        # The reference policies' keys as C-level getters (one per push: 100k's in a simulation).
        key = {FCFSPolicy: attrgetter("arrival_time", "seq_id"),
               PriorityPolicy: attrgetter("priority", "arrival_time", "seq_id")}
        self.waiting = WaitingQueue(key.get(type(self._key_policy), self._queue_key))
        self.running: dict[int, Sequence] = {}  # seq_id -> seq, in admission order
        self.prefilling: list[Sequence] = []  # running, prompt not fully computed
        self.swapped: deque[Sequence] = deque()  # preempted by swap, oldest first
        self.step = 0  # index of the next step to schedule
        self.num_preemptions = 0
        self.num_swapped_out = 0  # preemptions that went to the host pool (the rest recompute)
        self._wake: dict[int, list[Sequence]] = {}  # step -> seqs first outgrowing their blocks
        self._phase_count = [0] * block_manager.block_size  # phase -> seqs growing at that phase
        self._owed = 0  # blocks granted to decoding seqs, not yet taken from the block manager
        self._granted_step = -1  # the last step whose block needs were granted
        self._finish: dict[int, list[Sequence]] = {}  # step -> seqs producing their last token
        self._joining: list[Sequence] = []  # swapped in; start decoding next step
        self._num_decoding = 0
        self._decode_tokens = 0  # sum of num_tokens of decoding seqs, as of this step's start
        self._other_tokens = 0  # sum of num_tokens of running seqs not decoding
        self._num_admitted = 0

    # --- queries -----------------------------------------------------------------

    def add(self, seq: Sequence) -> None:
        seq.status = WAITING
        self.waiting.push(seq)

    def has_unfinished(self) -> bool:
        return bool(self.running or self.waiting or self.swapped)

    @property
    def num_running_tokens(self) -> int:
        """Tokens held by running sequences (each sequence's count, shared blocks counted
        once per holder)."""
        return self._decode_tokens + self._other_tokens

    @property
    def num_reserved_slots(self) -> int:
        """Token slots in running sequences' block tables (same counting as above)."""
        return self.bm.num_reserved_slots + self._owed * self.bm.block_size

    @property
    def num_used_blocks(self) -> int:
        """KV blocks in use, counting the ones owed to decoding sequences."""
        return self.bm.num_used_blocks + self._owed

    @property
    def num_free_blocks(self) -> int:
        return self.bm.num_free_blocks - self._owed

    def view(self, seq: Sequence) -> RequestView:
        if seq.decoding:
            self._sync(seq)
        return RequestView(seq.seq_id, seq.request_id, seq.arrival_time, seq.priority,
                           seq.num_prompt_tokens, seq.num_output_tokens, seq.max_tokens,
                           seq.num_computed_tokens, seq.num_preemptions)

    # --- one step ------------------------------------------------------------------

    def schedule(self) -> ScheduledBatch:
        batch = ScheduledBatch(step=self.step)
        # 1. decode: a KV slot for each decoding sequence's newest token (oldest first).
        if self.track_decodes:
            for seq in [s for s in self.running.values() if s.decoding]:
                if seq.decoding:  # (not preempted earlier in this loop)
                    self._grow(seq, batch)
        else:
            self._grow_lazily(batch)
        self._granted_step = self.step
        # 2. chunked prefill of running sequences, from the budget decodes leave.
        budget = self.config.max_num_batched_tokens - self._num_decoding
        for seq in self.prefilling:
            if budget <= 0:
                break
            n = min(seq.num_tokens - seq.num_computed_tokens, budget)
            batch.prefills.append((seq, n))
            budget -= n
        # 3. swapped sequences come back before anyone new; 4. then admissions.
        if not batch.preempted:
            if self.swapped:
                self._swap_in(batch)
            if not self.swapped and budget > 0:
                self._admit(batch, budget)
        # 5. the batch's shape, for the model and the cost model.
        if self.track_decodes:
            batch.decodes = [s for s in self.running.values() if s.decoding]
        batch.num_decode_seqs = batch.num_sampled = self._num_decoding
        batch.num_decode_context_tokens = self._decode_tokens
        if batch.prefills:
            tokens = context = pairs = sampled = 0
            for seq, n in batch.prefills:
                c = seq.num_computed_tokens
                tokens += n
                context += c
                pairs += n * c + n * (n + 1) // 2
                sampled += c + n == seq.num_tokens
            batch.prefill_tokens, batch.prefill_context_tokens = tokens, context
            batch.prefill_attention_pairs = pairs
            batch.num_sampled += sampled
        return batch

    def postprocess(self, batch: ScheduledBatch, token_ids: dict[int, int] | None,
                    now: float) -> list[Sequence]:
        """Apply a finished step. token_ids: seq_id -> sampled token (None when simulating).
        Returns the sequences that finished."""
        finished: list[Sequence] = []
        self._decode_tokens += self._num_decoding  # every decoding sequence grew by one token
        self.step += 1
        for seq, n in batch.prefills:
            seq.num_computed_tokens = computed = seq.num_computed_tokens + n
            self.bm.mark_computed(seq.seq_id, computed)
            num_tokens = seq.num_tokens
            if computed == num_tokens:  # its last chunk: a token was sampled
                self.prefilling.remove(seq)
                self._other_tokens -= num_tokens
                seq.num_output_tokens += 1
                if token_ids is not None:
                    seq.output_token_ids.append(token_ids[seq.seq_id])
                if seq.first_token_time is None:
                    seq.first_token_time = now
                self._start_decoding(seq)
                if self._stops(seq, token_ids):
                    self._finish_seq(seq, now, finished)
        if token_ids is not None:
            for seq in batch.decodes:
                if seq.decoding:
                    self._sync(seq)
                    seq.output_token_ids.append(token_ids[seq.seq_id])
                    if self._stops(seq, token_ids):
                        self._finish_seq(seq, now, finished)
        for seq in self._finish.pop(batch.step, ()):
            if seq.decoding and seq.finish_step == batch.step:
                self._sync(seq)
                self._finish_seq(seq, now, finished)
        for seq in self._joining:
            self._other_tokens -= seq.num_tokens
            self._start_decoding(seq)
        self._joining.clear()
        return finished

    # --- decode bookkeeping ------------------------------------------------------------

    def _sync(self, seq: Sequence) -> None:
        """Bring a decoding sequence's counts up to the start of the current step."""
        k = self.step - seq.synced_step
        if k:
            seq.num_output_tokens += k
            seq.num_computed_tokens += k
            seq.synced_step = self.step

    def _start_decoding(self, seq: Sequence) -> None:
        """From this step on, seq produces one token per step until max_tokens."""
        step, num_tokens = self.step, seq.num_tokens
        seq.decoding = True
        seq.synced_step = step
        self._num_decoding += 1
        self._decode_tokens += num_tokens
        remaining = seq.max_tokens - seq.num_output_tokens
        seq.finish_step = finish = step + remaining - 1  # the step that samples its last token
        if remaining > 0:
            self._finish.setdefault(finish, []).append(seq)
        if not self.track_decodes:
            self._plan_wake(seq, num_tokens)

    def _plan_wake(self, seq: Sequence, num_tokens: int) -> None:
        """Register the first step at which seq's tokens outgrow its blocks (if before it ends).

        A block table always holds exactly ceil(slots / block_size) blocks, so its capacity
        follows from the slots the block manager has reserved for seq.
        """
        step, bs = self.step, self.bm.block_size
        capacity = (self.bm.num_tokens(seq.seq_id) + bs - 1) // bs * bs
        # num_tokens grows by one per step, so it passes capacity this many steps from now:
        wake = step + capacity - num_tokens + 1
        if step <= wake <= seq.finish_step:
            seq.wake_step = wake
            self._wake.setdefault(wake, []).append(seq)
        else:
            seq.wake_step = -1

    def _grow_lazily(self, batch: ScheduledBatch) -> None:
        """Simulation: grant this step's new blocks in bulk (see the module docstring)."""
        step, bs = self.step, self.bm.block_size
        phase = step % bs
        for seq in self._wake.pop(step, ()):  # first block needed: from now on, just counted
            if seq.decoding and seq.wake_step == step:
                seq.phase = phase
                self._phase_count[phase] += 1
        demand = self._phase_count[phase]
        if demand + self._owed <= self.bm.num_uncached_free_blocks:
            self._owed += demand
            return
        # Short of blocks: make every table exact, then grow one by one, preempting as needed.
        self._materialize_all()
        for seq in [s for s in self.running.values() if s.decoding and s.phase == phase]:
            if seq.decoding:  # (not preempted earlier in this loop)
                self._grow(seq, batch)

    def _grow(self, seq: Sequence, batch: ScheduledBatch) -> None:
        """Room in seq's blocks for all its tokens, preempting (newest first, maybe seq itself)
        while the pool is short."""
        self._sync(seq)
        sid, bm = seq.seq_id, self.bm
        num_new = seq.num_tokens - bm.num_tokens(sid)
        if num_new <= 0:
            return
        while not bm.can_append(sid, num_new):
            victim = self._pick_victim()
            self._preempt(victim, batch)
            if victim is seq:
                return
        batch.copies += bm.append(sid, num_new)

    def _materialize(self, seq: Sequence) -> None:
        """Take the blocks owed to a decoding seq from the block manager: its table is exact."""
        self._sync(seq)
        target = seq.num_tokens - (self.step - self._granted_step)  # slots granted so far
        have = self.bm.num_tokens(seq.seq_id)
        if target > have:
            table = self.bm.block_tables[seq.seq_id]
            num_blocks = len(table)
            self.bm.append(seq.seq_id, target - have)
            self._owed -= len(table) - num_blocks

    def _forget_owed(self, seq: Sequence) -> None:
        """A decoding seq is about to be freed: drop the blocks it is owed instead of taking them.

        Blocks appended and then freed at once would come off the top of the free stack and go
        back onto it in the same order (a release walks the table backwards), so the pool ends
        exactly as _materialize + free would leave it. Not if the append would copy a shared
        last block first (copy-on-write): then take them for real.
        """
        self._sync(seq)
        bm, bs = self.bm, self.bm.block_size
        table = bm.block_tables[seq.seq_id]
        if bm.num_tokens(seq.seq_id) % bs and bm.ref_count(table[-1]) > 1:
            self._materialize(seq)
            return
        target = seq.num_tokens - (self.step - self._granted_step)  # slots granted so far
        self._owed -= max(0, (target + bs - 1) // bs - len(table))

    def _materialize_all(self) -> None:
        for seq in self.running.values():
            if seq.phase >= 0:
                self._materialize(seq)
        assert self._owed == 0, self._owed

    def _stops(self, seq: Sequence, token_ids: dict[int, int] | None) -> bool:
        if seq.num_output_tokens >= seq.max_tokens:
            return True
        return (token_ids is not None and not seq.params.ignore_eos
                and seq.output_token_ids[-1] == EOS_TOKEN_ID)

    # --- leaving and joining -------------------------------------------------------------

    def _leave_running(self, seq: Sequence, freeing: bool = False) -> None:
        """Remove a running sequence from the queues and aggregates (its blocks stay, unless
        the caller frees them next: `freeing`)."""
        del self.running[seq.seq_id]
        if seq.decoding:
            if freeing and seq.phase >= 0:
                self._forget_owed(seq)
            else:
                self._materialize(seq)  # (syncs it too)
            if seq.phase >= 0:
                self._phase_count[seq.phase] -= 1
            seq.decoding = False
            seq.wake_step = seq.finish_step = seq.phase = -1
            self._num_decoding -= 1
            self._decode_tokens -= seq.num_tokens
        else:
            self._other_tokens -= seq.num_tokens
            if seq in self._joining:
                self._joining.remove(seq)
            else:
                self.prefilling.remove(seq)

    def _finish_seq(self, seq: Sequence, now: float, finished: list[Sequence]) -> None:
        self._leave_running(seq, freeing=True)
        self.bm.free(seq.seq_id)
        seq.status = FINISHED
        seq.finish_time = now
        finished.append(seq)

    def _enter_running(self, seq: Sequence) -> None:
        self._num_admitted += 1
        seq.running_order = self._num_admitted
        seq.status = RUNNING
        self.running[seq.seq_id] = seq
        self._other_tokens += seq.num_tokens

    def _pick_victim(self) -> Sequence:
        policy = self._victim_policy
        if type(policy) is FCFSPolicy:  # fast paths for the reference policies
            return next(reversed(self.running.values()))
        if type(policy) is PriorityPolicy:
            return max(self.running.values(), key=lambda s: (s.priority, s.arrival_time,
                                                             s.seq_id))
        seq_id = policy.pick_victim([self.view(s) for s in self.running.values()])
        victim = self.running.get(seq_id) if isinstance(seq_id, int) else None
        if victim is None:
            raise PolicyError(f"pick_victim returned {seq_id!r}, which is not the seq_id of a "
                              f"running request (running: {list(self.running)[:10]})")
        return victim

    def _preempt(self, seq: Sequence, batch: ScheduledBatch) -> None:
        batch.preempted = True
        self.num_preemptions += 1
        seq.num_preemptions += 1
        past_prefill = seq.decoding or seq in self._joining
        self._leave_running(seq)
        if (self.config.preemption_mode == "swap" and past_prefill
                and self.bm.can_swap_out(seq.seq_id)):
            batch.swap_out += self.bm.swap_out(seq.seq_id)
            self.num_swapped_out += 1
            seq.status = SWAPPED
            self.swapped.append(seq)
        else:  # recompute: drop the KV, prefill everything again later
            self.bm.free(seq.seq_id)
            seq.num_computed_tokens = 0
            self.add(seq)

    def _swap_in(self, batch: ScheduledBatch) -> None:
        if self.swapped and self._owed:
            self._materialize_all()  # swap-in takes fresh blocks: settle the owed ones first
        while self.swapped and len(self.running) < self.config.max_num_seqs:
            seq = self.swapped[0]
            if not self.bm.can_swap_in(seq.seq_id):
                break
            self.swapped.popleft()
            batch.swap_in += self.bm.swap_in(seq.seq_id)
            self._enter_running(seq)
            self._joining.append(seq)

    # --- admission ---------------------------------------------------------------------

    def _queue_key(self, seq: Sequence) -> object:
        policy = self._key_policy
        if type(policy) is FCFSPolicy:
            return (seq.arrival_time, seq.seq_id)
        if type(policy) is PriorityPolicy:
            return (seq.priority, seq.arrival_time, seq.seq_id)
        return policy.key(self.view(seq))

    def _admit(self, batch: ScheduledBatch, budget: int) -> None:
        max_seqs = self.config.max_num_seqs
        if self.batcher is None:  # reference: queue order, stop at the first that does not fit
            while budget > 0 and len(self.running) < max_seqs:
                seq = self.waiting.peek()
                if seq is None or not self._try_admit(seq, batch, budget):
                    return
                budget -= batch.prefills[-1][1]
            return
        if not self.waiting or len(self.running) >= max_seqs:
            return
        head = self.waiting.head(WAITING_WINDOW)
        by_id = {s.seq_id: s for s in head}
        step_budget = StepBudget(self.step, budget, max_seqs - len(self.running),
                                 self.num_free_blocks, self.bm.block_size)
        chosen = self.batcher.admit([self.view(s) for s in head], step_budget)
        seen = set()
        for seq_id in chosen:
            if seq_id not in by_id or seq_id in seen:
                raise PolicyError(f"admit returned {seq_id!r}: not a waiting seq_id it was shown, "
                                  f"or listed twice (shown: {list(by_id)[:10]})")
            seen.add(seq_id)
            if budget <= 0 or len(self.running) >= max_seqs:
                break
            if self._try_admit(by_id[seq_id], batch, budget):
                budget -= batch.prefills[-1][1]

    def _try_admit(self, seq: Sequence, batch: ScheduledBatch, budget: int) -> bool:
        """Give seq its blocks and its first prefill chunk, if it fits."""
        if not self.config.enable_chunked_prefill and seq.num_tokens > budget:
            return False
        bm, num_tokens = self.bm, seq.num_tokens
        num_slots = self.max_model_len if self.config.memory == "reserve" else num_tokens
        if self._owed:  # leave the owed blocks free (and evict nothing out of order)
            needed = bm.num_blocks_needed(num_slots, seq.prompt_token_ids)
            if needed + self._owed > bm.num_uncached_free_blocks:
                self._materialize_all()
        try:  # only prompt blocks are cached: the same with or without computed output ids
            cached = bm.allocate(seq.seq_id, num_slots, seq.prompt_token_ids)
        except NoFreeBlocksError:
            return False
        self.waiting.remove(seq)
        seq.num_computed_tokens = seq.num_cached_tokens = cached
        self._enter_running(seq)
        self.prefilling.append(seq)
        batch.prefills.append((seq, min(num_tokens - cached, budget)))
        return True

    # --- for tests ---------------------------------------------------------------------

    def check_aggregates(self) -> None:
        """Recompute the running aggregates from scratch and compare. O(running)."""
        decoding = [s for s in self.running.values() if s.decoding]
        for s in decoding:
            self._sync(s)
        assert self._num_decoding == len(decoding)
        assert self._decode_tokens == sum(s.num_tokens for s in decoding)
        others = [s for s in self.running.values() if not s.decoding]
        assert self._other_tokens == sum(s.num_tokens for s in others)
        assert set(self.bm.block_tables) == set(self.running)
        assert set(self.prefilling) | set(self._joining) == set(others)
        bs, owed = self.bm.block_size, 0
        for s in decoding:  # every granted token has a slot, in the table or owed
            granted = s.num_tokens - (self.step - self._granted_step)
            table = len(self.bm.block_tables[s.seq_id])
            owed += max(0, (granted + bs - 1) // bs - table)
            assert granted >= s.num_computed_tokens
            assert s.phase >= 0 or (granted + bs - 1) // bs <= table
        assert owed == self._owed and owed <= self.bm.num_uncached_free_blocks
        assert self._phase_count == [sum(s.phase == p for s in decoding) for p in range(bs)]
