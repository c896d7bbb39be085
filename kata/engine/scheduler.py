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

When only simulating, decode progress is tracked lazily (kata/engine/fastpath.py), so a step costs
O(changes), not O(running); the decisions are the same either way.

    sched = Scheduler(SchedulerConfig(), BlockManager(1024, 16), max_model_len=4096)
    sched.add(seq)
    batch = sched.schedule()            # ... run the model on it ...
    sched.postprocess(batch, token_ids, now)
"""

from __future__ import annotations

from collections import deque

from kata.engine.batch import ScheduledBatch, WaitingQueue
from kata.engine.block_manager import BlockManager, NoFreeBlocksError
from kata.engine.config import SchedulerConfig
from kata.engine.fastpath import DecodeTracker
from kata.engine.hooks import PolicyHooks
from kata.engine.policy import WAITING_WINDOW, StepBudget
from kata.engine.sequence import Sequence, SequenceStatus

__all__ = ["ScheduledBatch", "Scheduler", "WaitingQueue"]

WAITING, RUNNING, SWAPPED, FINISHED = (SequenceStatus.WAITING, SequenceStatus.RUNNING,
                                       SequenceStatus.SWAPPED, SequenceStatus.FINISHED)


class Scheduler:
    def __init__(self, config: SchedulerConfig, block_manager: BlockManager, *,
                 max_model_len: int, policy: object | None = None, batcher: object | None = None,
                 track_decodes: bool = True) -> None:
        self.config = config
        self.bm = block_manager
        self.max_model_len = max_model_len
        self.track_decodes = track_decodes  # list every decode in each batch (to compute them)
        self.decodes = DecodeTracker(block_manager, lazy=not track_decodes)
        self.hooks = PolicyHooks(config.policy, policy, batcher,
                                 sync=lambda seq: self.decodes.sync(seq, self.step))
        self.waiting = WaitingQueue(self.hooks.queue_key)
        self.running: dict[int, Sequence] = {}  # seq_id -> seq, in admission order
        self.prefilling: list[Sequence] = []  # running, prompt not fully computed
        self.swapped: deque[Sequence] = deque()  # preempted by swap, oldest first
        self.step = 0  # index of the next step to schedule
        self.num_preemptions = 0
        self.num_swapped_out = 0  # preemptions that went to the host pool (the rest recompute)
        self._joining: list[Sequence] = []  # swapped in; start decoding next step
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
        """Tokens held by running sequences (shared blocks counted once per holder)."""
        return self.decodes.tokens + self._other_tokens

    @property
    def num_reserved_slots(self) -> int:
        """Token slots in running sequences' block tables and reservations (as above)."""
        return self.bm.num_reserved_slots

    @property
    def num_used_blocks(self) -> int:
        """KV blocks in use or reserved for decoding sequences (the block manager's count)."""
        return self.bm.num_used_blocks

    @property
    def num_free_blocks(self) -> int:
        return self.bm.num_free_blocks

    # --- one step ------------------------------------------------------------------

    def schedule(self) -> ScheduledBatch:
        batch = ScheduledBatch(step=self.step)
        # 1. decode: a KV slot for each decoding sequence's newest token (oldest first); when
        #    simulating, granted in bulk unless the pool runs short.
        if self.track_decodes:
            growing = [s for s in self.running.values() if s.decoding]
        else:
            growing = self.decodes.grant(self.step, self.running)
        for seq in growing:
            if seq.decoding:  # (not preempted earlier in this loop)
                self._grow(seq, batch)
        self.decodes.granted_step = self.step
        # 2. chunked prefill of running sequences, from the budget decodes leave.
        budget = self.config.max_num_batched_tokens - self.decodes.count
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
        batch.measure(self.decodes.count, self.decodes.tokens)
        return batch

    def postprocess(self, batch: ScheduledBatch, token_ids: dict[int, int] | None,
                    now: float) -> list[Sequence]:
        """Apply a finished step (token_ids: seq_id -> token; None if simulating): -> finished."""
        finished: list[Sequence] = []
        self.decodes.advance()
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
                self.decodes.start(seq, self.step)
                if seq.is_stopped(token_ids is not None):
                    self._finish_seq(seq, now, finished)
        if token_ids is not None:
            for seq in batch.decodes:
                if seq.decoding:
                    self.decodes.sync(seq, self.step)
                    seq.output_token_ids.append(token_ids[seq.seq_id])
                    if seq.is_stopped(sampled=True):
                        self._finish_seq(seq, now, finished)
        for seq in self.decodes.finishing.pop(batch.step, ()):
            if seq.decoding and seq.finish_step == batch.step:
                self.decodes.sync(seq, self.step)
                self._finish_seq(seq, now, finished)
        for seq in self._joining:
            self._other_tokens -= seq.num_tokens
            self.decodes.start(seq, self.step)
        self._joining.clear()
        return finished

    # --- growing, leaving and joining ------------------------------------------------------

    def _grow(self, seq: Sequence, batch: ScheduledBatch) -> None:
        """Room in seq's blocks for all its tokens, preempting (maybe seq itself) while short."""
        self.decodes.sync(seq, self.step)
        sid, bm = seq.seq_id, self.bm
        num_new = seq.num_tokens - bm.num_tokens(sid)
        if num_new <= 0:
            return
        while not bm.can_append(sid, num_new):
            victim = self.hooks.pick_victim(self.running)
            self._preempt(victim, batch)
            if victim is seq:
                return
        batch.copies += bm.append(sid, num_new)

    def _leave_running(self, seq: Sequence, freeing: bool = False) -> None:
        """Take seq out of the running queues and aggregates (blocks stay unless `freeing`)."""
        del self.running[seq.seq_id]
        if seq.decoding:
            self.decodes.stop(seq, self.step, freeing)
        else:
            self._other_tokens -= seq.num_tokens
            if seq in self._joining:
                self._joining.remove(seq)
            else:
                self.prefilling.remove(seq)

    def drop(self, seq: Sequence) -> None:
        """Take an arrived sequence out of wherever it is, done or aborted; free its blocks."""
        if seq.status is RUNNING:
            self._leave_running(seq, freeing=True)
        elif seq.status is SWAPPED:
            self.swapped.remove(seq)
        else:  # waiting (if preempted by recompute, it holds no blocks)
            self.waiting.remove(seq)
        if self.bm.has_seq(seq.seq_id):
            self.bm.free(seq.seq_id)
        seq.status = FINISHED

    def _finish_seq(self, seq: Sequence, now: float, finished: list[Sequence]) -> None:
        self.drop(seq)
        seq.finish_time = now
        finished.append(seq)

    def _enter_running(self, seq: Sequence) -> None:
        self._num_admitted += 1
        seq.running_order = self._num_admitted
        seq.status = RUNNING
        self.running[seq.seq_id] = seq
        self._other_tokens += seq.num_tokens

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
        self.decodes.settle(self.running, self.step)  # swap-in takes fresh blocks
        while self.swapped and len(self.running) < self.config.max_num_seqs:
            seq = self.swapped[0]
            if not self.bm.can_swap_in(seq.seq_id):
                break
            self.swapped.popleft()
            batch.swap_in += self.bm.swap_in(seq.seq_id)
            self._enter_running(seq)
            self._joining.append(seq)

    # --- admission ---------------------------------------------------------------------

    def _admit(self, batch: ScheduledBatch, budget: int) -> None:
        max_seqs = self.config.max_num_seqs
        if self.hooks.batcher is None:  # reference: queue order, stop at the first misfit
            while budget > 0 and len(self.running) < max_seqs:
                seq = self.waiting.peek()
                if seq is None or not self._try_admit(seq, batch, budget):
                    return
                budget -= batch.prefills[-1][1]
        elif self.waiting and len(self.running) < max_seqs:  # a plug-in picks from the window
            step_budget = StepBudget(self.step, budget, max_seqs - len(self.running),
                                     self.num_free_blocks, self.bm.block_size)
            for seq in self.hooks.admission_order(self.waiting.head(WAITING_WINDOW), step_budget):
                if budget <= 0 or len(self.running) >= max_seqs:
                    break
                if self._try_admit(seq, batch, budget):
                    budget -= batch.prefills[-1][1]

    def _try_admit(self, seq: Sequence, batch: ScheduledBatch, budget: int) -> bool:
        """Give seq its blocks and its first prefill chunk, if it fits."""
        if not self.config.enable_chunked_prefill and seq.num_tokens > budget:
            return False
        bm, num_tokens = self.bm, seq.num_tokens
        num_slots = self.max_model_len if self.config.memory == "reserve" else num_tokens
        if self.decodes.owed:  # keep the reserved blocks (and evict nothing out of order)
            needed = bm.num_blocks_needed(num_slots, seq.prompt_token_ids, seq.cache_salt)
            self.decodes.settle(self.running, self.step, needed)
        try:  # only prompt blocks are cached: the same with or without computed output ids
            cached = bm.allocate(seq.seq_id, num_slots, seq.prompt_token_ids, seq.cache_salt)
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
        self.decodes.check(self.running, self.step)
        others = [s for s in self.running.values() if not s.decoding]
        assert self._other_tokens == sum(s.num_tokens for s in others)
        assert set(self.bm.block_tables) == set(self.running)
        assert set(self.prefilling) | set(self._joining) == set(others)
