"""The engine loop: add requests, then step until done. Each step reads like the algorithm:

    batch = self.scheduler.schedule()                              # who runs, which KV slots
    token_ids = self._execute(batch)                               # the model (if computing)
    self.clock += self.cost_model.step_time(batch)                 # simulated GPU time
    finished = self.scheduler.postprocess(batch, token_ids, self.clock)

    engine = LLMEngine(EngineConfig())
    engine.add_request("Hello", SamplingParams(max_tokens=8))      -> "req-0"
    engine.step()        -> [RequestOutput(request_id="req-0", outputs=[...1 token...], ...)]
    LLMEngine(EngineConfig(compute=False)).run(make_workload("chat", 1000)).metrics.ttft_p99 -> 0.41

Time is simulated (see cost_model.py): requests carry arrival times; an idle engine's clock jumps
to the next. With compute=False no tensor is made: scheduler, block manager and cost model alone.
"""

from __future__ import annotations

import dataclasses
import heapq
import time
from collections.abc import Iterable
from collections.abc import Sequence as SequenceABC
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from kata.engine.attention import AttentionMetadata, PrefillChunk
from kata.engine.block_manager import BlockManager
from kata.engine.config import MODEL_PRESETS, EngineConfig
from kata.engine.cost_model import HARDWARE, CostModel, link_on
from kata.engine.kv_cache import KVCache
from kata.engine.metrics import Metrics, MetricsRecorder, summarize
from kata.engine.model import TinyModel, encode
from kata.engine.outputs import OnProgress, RequestOutput, RunResult, counted_steps, generate, make_output
from kata.engine.batch import ScheduledBatch
from kata.engine.scheduler import Scheduler
from kata.engine.sequence import SamplingParams, Sequence, SequenceStatus
from kata.engine.static_batcher import StaticBatchScheduler
from kata.engine.workloads import Request

if TYPE_CHECKING:  # torch is optional: the torch backend is imported only when asked for
    from kata.engine.backends import ModelBackend
    from kata.engine.backends.torch_backend import TorchKVCache


class LLMEngine:
    def __init__(self, config: EngineConfig | None = None, *, scheduler_policy: object = None,
                 batcher_policy: object = None) -> None:
        self.config = c = config if config is not None else EngineConfig()
        self.block_manager = BlockManager(
            c.cache.num_blocks, c.cache.block_size,
            enable_prefix_caching=c.cache.enable_prefix_caching,
            num_host_blocks=c.cache.num_host_blocks)
        scheduler_cls = StaticBatchScheduler if c.scheduler.batching == "static" else Scheduler
        self.scheduler = scheduler_cls(c.scheduler, self.block_manager,
                                       max_model_len=c.model.max_model_len,
                                       policy=scheduler_policy, batcher=batcher_policy,
                                       track_decodes=c.compute)
        self.cost_model = CostModel(HARDWARE[c.hardware], MODEL_PRESETS[c.cost_model],
                                    c.cache.block_size, tp_size=c.tensor_parallel_size,
                                    interconnect=link_on(HARDWARE[c.hardware], c.interconnect),
                                    weight_bits=c.weight_bits)
        self.recorder = MetricsRecorder()
        self.clock = 0.0  # simulated seconds
        self._pending: list[tuple[float, int, Sequence]] = []  # not yet arrived (heap)
        self._finished: list[Sequence] = []
        self.aborted: list[Sequence] = []  # cancelled by abort_request, in order
        self._sampled: list[Sequence] = []  # the sequences that got a token in the last step
        self._just_aborted: list[Sequence] = []  # aborted since the last step(): reported by it
        self._next_seq_id = 0
        self.model: ModelBackend | None = None  # set when computing
        self.kv_cache: KVCache | TorchKVCache | None = None
        if c.compute:
            self._init_model()

    def _init_model(self) -> None:
        c = self.config
        m, cache = c.model, c.cache
        dtype = m.dtype if c.dtype == "auto" else c.dtype  # "auto": the model config's
        args = (m.num_layers, cache.num_blocks, cache.block_size, m.num_kv_heads, m.head_dim)
        if c.backend == "torch":  # imported only when asked for
            from kata.engine.backends.torch_backend import TorchKVCache
            from kata.engine.backends.torch_model import TorchModel

            self.model = TorchModel.for_config(m, device=c.device, dtype=dtype)
            self.kv_cache = TorchKVCache(*args, dtype=dtype, device=c.device,
                                         num_host_blocks=cache.num_host_blocks)
        else:
            self.model = TinyModel(dataclasses.replace(m, dtype=dtype))
            self.kv_cache = KVCache(*args, dtype=dtype, num_host_blocks=cache.num_host_blocks)

    # --- requests ----------------------------------------------------------------------

    def add_request(self, prompt: str | list[int] | None = None,
                    params: SamplingParams | None = None, *, num_prompt_tokens: int | None = None,
                    arrival_time: float | None = None, priority: int = 0,
                    request_id: str | None = None, cache_salt: str | None = None) -> str:
        """Queue a request; it arrives at `arrival_time` (default: now). Returns its id.

        prompt: text (byte-encoded after a BOS token) or token ids. When simulating, a prompt may
        be given by `num_prompt_tokens` alone. `cache_salt` (a tenant's name) keeps its prefix-cache
        blocks apart from every other salt's.
        """
        params = params if params is not None else SamplingParams()
        ids = encode(prompt) if isinstance(prompt, str) else (
            list(prompt) if prompt is not None else None)
        n = len(ids) if ids is not None else num_prompt_tokens
        max_len = self.config.model.max_model_len
        if n is None or n < 1:
            raise ValueError("add_request: give a non-empty prompt or num_prompt_tokens >= 1")
        if n >= max_len:
            raise ValueError(f"add_request: the prompt has {n} tokens; max_model_len is {max_len}")
        if ids is None and self.config.compute:
            raise ValueError("add_request: computing needs prompt token ids")
        if ids is not None and any(not 0 <= t < self.config.model.vocab_size for t in ids):
            raise ValueError("add_request: a prompt token id is outside the vocabulary")
        seq_id, self._next_seq_id = self._next_seq_id, self._next_seq_id + 1
        arrival = self.clock if arrival_time is None else float(arrival_time)
        seq = Sequence(seq_id=seq_id, request_id=request_id or f"req-{seq_id}",
                       prompt_token_ids=ids, num_prompt_tokens=n, params=params,
                       max_tokens=min(params.max_tokens, max_len - n), arrival_time=arrival,
                       priority=priority, cache_salt=cache_salt,
                       prompt=prompt if isinstance(prompt, str) else None)
        if params.temperature > 0:
            seq.rng = np.random.default_rng(params.seed if params.seed is not None else seq_id)
        heapq.heappush(self._pending, (arrival, seq_id, seq))
        return seq.request_id

    def add_trace(self, requests: Iterable[Request]) -> None:
        """Queue a workload trace; each request stops after its output_len tokens."""
        for r in requests:
            self.add_request(list(r.prompt_token_ids) if r.prompt_token_ids else None,
                             SamplingParams(max_tokens=r.output_len, temperature=0.0,
                                            ignore_eos=True),
                             num_prompt_tokens=r.num_prompt_tokens, arrival_time=r.arrival_time,
                             priority=r.priority, request_id=r.request_id,
                             cache_salt=r.cache_salt)

    def abort_request(self, request_id: str) -> bool:
        """Cancel an unfinished request between steps (say, a safety classifier flagged it): it
        leaves every queue, its KV blocks are freed at once, and it produces nothing more. It
        goes to `aborted`, not to the finished requests the metrics cover. False if no live
        request has that id."""
        s, pending = self.scheduler, self._pending
        if not isinstance(s, Scheduler):
            raise ValueError("abort_request needs continuous batching (SchedulerConfig.batching)")
        waiting = next((i for i, e in enumerate(pending) if e[2].request_id == request_id), None)
        seq: Sequence | None
        if waiting is not None:  # not arrived yet: out of the arrivals heap
            seq = pending[waiting][2]
            pending[waiting] = pending[-1]
            pending.pop()
            heapq.heapify(pending)
        else:
            live = chain(s.running.values(), s.waiting, s.swapped)
            seq = next((q for q in live if q.request_id == request_id), None)
            if seq is None:
                return False
            s.drop(seq)
        seq.status, seq.finish_time = SequenceStatus.FINISHED, self.clock
        self.aborted.append(seq)
        self._just_aborted.append(seq)
        return True

    def has_unfinished(self) -> bool:
        return bool(self._pending) or self.scheduler.has_unfinished()

    has_unfinished_requests = has_unfinished  # vLLM's name

    # --- the loop --------------------------------------------------------------------------

    def step(self) -> list[RequestOutput]:
        """Run one iteration. Returns a RequestOutput for every request that got a token in it
        (cumulative text and token ids; `finished` on its last), so a caller can stream, and
        for every request aborted since the last step (finish_reason "abort"). When only
        simulating there are no tokens: just the requests that finished or were aborted."""
        aborted, self._just_aborted = self._just_aborted, []
        finished = self._step()
        done = {s.seq_id for s in finished}
        return [make_output(s, aborted=True) for s in aborted] + [
            make_output(s) for s in self._sampled if s.seq_id not in done] + [
            make_output(s) for s in finished]

    def _step(self) -> list[Sequence]:
        scheduler, pending = self.scheduler, self._pending
        self._sampled = []
        if pending and pending[0][0] <= self.clock:
            self._release_arrivals()
        if not scheduler.has_unfinished():
            if not pending:
                return []
            self.clock = pending[0][0]  # idle: jump to the next arrival
            self._release_arrivals()
        batch = scheduler.schedule()
        if batch.is_empty and not batch.preempted:
            if self._pending:  # nothing could be admitted; wait for the next arrival
                self.clock = max(self.clock, self._pending[0][0])
                return []
            raise RuntimeError("the scheduler made no progress: nothing runs and no waiting "
                               "request was admitted (a batcher policy that admits nothing?)")
        token_ids = self._execute(batch) if self.config.compute else None
        duration = self.cost_model.step_time(batch)
        self.clock = clock = self.clock + duration
        finished = scheduler.postprocess(batch, token_ids, clock)
        self.recorder.record_step(clock, duration, scheduler.num_used_blocks,
                                  scheduler.num_running_tokens, scheduler.num_reserved_slots)
        if finished:
            self._finished += finished
        return finished

    def run(self, requests: Iterable[Request] | None = None, on_progress: OnProgress | None = None) -> RunResult:
        """Add a trace (optional), step until every request is done, summarise.

        RunResult.outputs lists each finished request (empty when simulating: see
        `finished_seqs` for per-request timestamps then). on_progress: see `counted_steps`."""
        start = time.perf_counter()
        if requests is not None:
            self.add_trace(requests)
        num_done = len(self._finished)
        scheduler, pending = self.scheduler, self._pending
        step = self._step if on_progress is None else counted_steps(  # the plain loop, as quick as ever
            self._step, self._finished, num_done, len(pending), on_progress)
        while pending or scheduler.has_unfinished():  # = self.has_unfinished(), inlined
            step()
        outputs = ([make_output(s) for s in self._finished[num_done:]]
                   if self.config.compute else [])
        return RunResult(self.metrics(), outputs, time.perf_counter() - start)

    @property
    def finished_seqs(self) -> list[Sequence]:
        """Every finished sequence so far, in finishing order."""
        return self._finished

    def generate(self, prompts: str | dict | SequenceABC[str | dict],
                 params: SamplingParams | SequenceABC[SamplingParams] | None = None
                 ) -> list[RequestOutput]:
        """Run prompts to completion; their RequestOutputs, in order (kata/engine/llm.py `LLM`
        is the front door with vLLM's signature)."""
        return generate(self, prompts, params)

    def metrics(self) -> Metrics:
        bm = self.block_manager
        return summarize(self._finished, self.recorder, num_blocks=bm.num_blocks,
                         num_preemptions=self.scheduler.num_preemptions,
                         cache_hit_tokens=bm.num_cache_hit_tokens,
                         cache_query_tokens=bm.num_cache_query_tokens)

    # --- internals ---------------------------------------------------------------------------

    def _release_arrivals(self) -> None:
        pending, clock, add = self._pending, self.clock, self.scheduler.add
        while pending and pending[0][0] <= clock:
            add(heapq.heappop(pending)[2])

    def _execute(self, batch: ScheduledBatch) -> dict[int, int]:
        """Move KV blocks as planned, run the model on the batch, sample. -> seq_id: token."""
        model, kv, bm = self.model, self.kv_cache, self.block_manager
        assert model is not None and kv is not None  # _init_model set both (computing)
        kv.swap_out(batch.swap_out)  # before anything overwrites the freed blocks
        kv.swap_in(batch.swap_in)
        kv.copy_blocks(batch.copies)  # copy-on-write, before this step's writes
        if not batch.prefills and not batch.decodes:
            return {}
        input_ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        meta = AttentionMetadata(slot_mapping=np.zeros(0, np.intp))
        sample_rows: list[int] = []
        sample_seqs: list[Sequence] = []
        for seq, n in batch.prefills:  # rows [row, row + n): one chunk of one sequence
            start, row = seq.num_computed_tokens, len(input_ids)
            input_ids += seq.token_ids[start:start + n]
            positions += range(start, start + n)
            slots += bm.slot_mapping(seq.seq_id, start, start + n)
            meta.prefills.append(PrefillChunk(row, n, start, bm.block_tables[seq.seq_id]))
            if start + n == seq.num_tokens:
                sample_rows.append(row + n - 1)
                sample_seqs.append(seq)
        meta.num_prefill_tokens = len(input_ids)
        for seq in batch.decodes:  # one row each: the newest token
            pos = seq.num_tokens - 1
            sample_rows.append(len(input_ids))
            sample_seqs.append(seq)
            input_ids.append(seq.token_ids[pos])
            positions.append(pos)
            slots += bm.slot_mapping(seq.seq_id, pos, pos + 1)
            meta.decode_block_tables.append(bm.block_tables[seq.seq_id])
            meta.decode_context_lens.append(pos + 1)
        meta.slot_mapping = np.asarray(slots, np.intp)
        meta.sample_rows = np.asarray(sample_rows, np.intp)
        logits = model.forward(np.asarray(input_ids, np.intp), np.asarray(positions, np.intp),
                               meta, kv)
        self._sampled = sample_seqs
        return dict(zip((s.seq_id for s in sample_seqs), model.sample(logits, sample_seqs),
                        strict=True))

