"""The baseline continuous batching replaced: static batching.

A batch is formed from the head of the queue, padded to its longest request (longest prompt plus
longest output), prefilled together, decoded until its *last* member is done, and released
together. Memory is reserved for the padded length up front. Members that finish early keep
their rows (computing padding) and wait; newcomers wait for the whole batch. This is how a plain
`model.generate(batch)` server behaves, and what the `compare` command measures against.

Same interface as `Scheduler` (add / schedule / postprocess), so LLMEngine runs either.
"""

from __future__ import annotations

from collections import deque

from kata.engine.block_manager import BlockManager
from kata.engine.config import EOS_TOKEN_ID, SchedulerConfig
from kata.engine.batch import ScheduledBatch
from kata.engine.sequence import Sequence, SequenceStatus


class StaticBatchScheduler:
    def __init__(self, config: SchedulerConfig, block_manager: BlockManager, *,
                 max_model_len: int, track_decodes: bool = True, **_ignored) -> None:
        self.config = config
        self.bm = block_manager
        self.max_model_len = max_model_len
        self.track_decodes = track_decodes
        self.waiting: deque[Sequence] = deque()  # arrival order
        self.running: dict[int, Sequence] = {}  # the current batch
        self.step = 0
        self.num_preemptions = 0  # never preempts: memory is reserved up front
        self._done: set[int] = set()  # members finished but still holding their row
        self._prompt_len = 0  # padded prompt length of the batch
        self._num_decoded = 0  # decode steps run so far in this batch

    def add(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.running or self.waiting)

    @property
    def num_running_tokens(self) -> int:
        return sum(s.num_tokens for s in self.running.values())

    @property
    def num_reserved_slots(self) -> int:
        return self.bm.num_reserved_slots

    @property
    def num_used_blocks(self) -> int:
        return self.bm.num_used_blocks

    # --- one step --------------------------------------------------------------------

    def schedule(self) -> ScheduledBatch:
        batch = ScheduledBatch(step=self.step)
        if not self.running:
            self._form_batch()
            b, p = len(self.running), self._prompt_len
            batch.prefills = [(s, s.num_tokens) for s in self.running.values()]
            batch.prefill_tokens = b * p  # padding rows are computed too
            batch.prefill_attention_pairs = b * p * (p + 1) // 2
            batch.num_sampled = b
            return batch
        active = [s for s in self.running.values() if s.seq_id not in self._done]
        if self.track_decodes:
            batch.decodes = active
        b = len(self.running)
        batch.num_decode_seqs = batch.num_sampled = b  # finished rows still compute (padding)
        batch.num_decode_context_tokens = b * (self._prompt_len + self._num_decoded + 1)
        return batch

    def postprocess(self, batch: ScheduledBatch, token_ids: dict[int, int] | None,
                    now: float) -> list[Sequence]:
        self.step += 1
        if batch.prefills:
            stepped = [s for s, _ in batch.prefills]
        else:
            stepped = [s for s in self.running.values() if s.seq_id not in self._done]
            self._num_decoded += 1
        for seq in stepped:
            seq.num_computed_tokens = seq.num_tokens
            seq.num_output_tokens += 1
            if token_ids is not None:
                seq.output_token_ids.append(token_ids[seq.seq_id])
            if seq.first_token_time is None:
                seq.first_token_time = now
            if seq.num_output_tokens >= seq.max_tokens or (
                    token_ids is not None and not seq.params.ignore_eos
                    and seq.output_token_ids[-1] == EOS_TOKEN_ID):
                self._done.add(seq.seq_id)
        if len(self._done) < len(self.running):
            return []
        finished = list(self.running.values())  # released together
        for seq in finished:
            self.bm.free(seq.seq_id)
            seq.status = SequenceStatus.FINISHED
            seq.finish_time = now
        self.running.clear()
        self._done.clear()
        return finished

    def _form_batch(self) -> None:
        """FCFS, as many as fit when every member reserves the padded length."""
        chosen: list[Sequence] = []
        prompt_len = output_len = 0
        for seq in self.waiting:
            if len(chosen) == self.config.max_num_seqs:
                break
            p, o = max(prompt_len, seq.num_tokens), max(output_len, seq.max_tokens)
            if (len(chosen) + 1) * self.bm.num_blocks_for(p + o) > self.bm.num_blocks:
                break
            chosen.append(seq)
            prompt_len, output_len = p, o
        for seq in chosen:
            self.waiting.popleft()
            self.bm.allocate(seq.seq_id, prompt_len + output_len)
            seq.status = SequenceStatus.RUNNING
            self.running[seq.seq_id] = seq
        self._prompt_len, self._num_decoded = prompt_len, 0
