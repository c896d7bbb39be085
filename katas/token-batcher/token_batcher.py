"""Token batcher: padded batches, continuous batching, SLO-aware admission, chunked prefill.

Read PROMPT.md: it decides every rule and boundary. Standard library only.

    plan_batches(...)        level 1: dynamic batching with padding
    simulate_continuous(...) level 2: continuous batching on a paged KV cache, recompute preemption
    schedule_slo(...)        level 3: your policy under a cost model and a first-token deadline
    schedule_chunked(...)    level 4: chunked prefill under a per-step token budget
    tpot_percentiles(...)    level 4: time-per-output-token percentiles of a schedule

Keep the dataclasses' names and fields: the tests build inputs with them and read your results
field by field. You may add methods, helpers and fields of your own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- input types ----------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    id: str
    arrival: int  # level 1: a time; level 2: a step number; levels 3-4: a time
    prompt_tokens: int  # >= 1
    output_tokens: int  # >= 0
    ttft_deadline: int | None = None  # levels 3-4: max time from arrival to first token, >= 0


@dataclass(frozen=True)
class EngineConfig:
    num_blocks: int  # >= 1: KV blocks in the cache
    block_size: int  # >= 1: token slots per block
    max_running: int  # >= 1: most requests running in one step
    prefill_cost: int  # >= 0: time per prompt token computed in a step
    decode_cost: int  # >= 1: fixed time of every step
    token_budget: int | None = None  # level 4: most tokens computed in one step (>= max_running)


# --- level 1 output -------------------------------------------------------------


@dataclass
class Batch:
    request_ids: list[str]  # in arrival order
    dispatch_time: int  # when it closed
    reason: str  # "full" | "budget" | "window"
    padded_tokens: int  # len(request_ids) * the largest prompt+output in it
    useful_tokens: int  # sum of prompt+output of its requests


@dataclass
class BatchPlan:
    batches: list[Batch]  # in the order they closed
    rejected: dict[str, str]  # id -> "exceeds_batch_tokens"
    padding_waste: int  # sum of padded_tokens - useful_tokens


# --- level 2 output -------------------------------------------------------------


@dataclass
class RequestStats:
    admitted_step: int  # step of its first admission
    first_token_step: int  # step its prefill first completed
    finish_step: int
    num_preemptions: int


@dataclass
class StepRecord:
    step: int
    admitted: list[str]  # in admission order
    preempted: list[str]  # in preemption order
    finished: list[str]  # in admission order
    blocks_in_use: int  # after growth and admission, before finished requests free their blocks


@dataclass
class ContinuousResult:
    requests: dict[str, RequestStats]  # every request that was not rejected
    rejected: dict[str, str]  # id -> "exceeds_cache"
    steps: list[StepRecord]  # steps in which something ran, in increasing step order
    peak_blocks: int  # max blocks_in_use over steps, 0 if there are none


# --- levels 3 and 4 output ------------------------------------------------------


@dataclass
class ScheduledStep:
    start: int
    end: int  # start + decode_cost + prefill_cost * sum(prefill.values())
    preempted: list[str]
    admitted: list[str]
    prefill: dict[str, int]  # id -> tokens it computes in this step: prompt_tokens + generated (L4: a chunk)
    finished: list[str]  # any order
    blocks_in_use: int  # after computing, before finished requests free their blocks


@dataclass
class Outcome:
    first_token_time: int
    finish_time: int
    num_preemptions: int
    met_slo: bool  # first_token_time - arrival <= ttft_deadline


@dataclass
class Schedule:
    steps: list[ScheduledStep] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # finished requests only
    shed: list[str] = field(default_factory=list)  # any order, each once
    rejected: dict[str, str] = field(default_factory=dict)  # id -> "exceeds_cache"
    goodput: int = 0  # number of outcomes with met_slo


@dataclass
class TPOTStats:
    count: int  # finished requests with output_tokens >= 2
    p50: float | None
    p90: float | None
    p99: float | None


# --- level 1 --------------------------------------------------------------------


def plan_batches(
    requests: list[Request], max_batch_size: int, max_batch_tokens: int, window: int
) -> BatchPlan:
    """Group requests, in arrival order, into batches padded to their largest prompt+output.

    A batch closes when it is full ("full"), when the next request would push its padded
    footprint over max_batch_tokens ("budget"), or when its window has passed ("window").
    A request larger than max_batch_tokens is rejected ("exceeds_batch_tokens").

    Example: sizes 3 and 5 arriving at 0 and 1, max_batch_size=3, max_batch_tokens=16, window=5
      -> one batch [a, b]: padded 2 * 5 = 10, useful 8, closed by its window at 0 + 5.
    Raises ValueError naming the field for invalid input (see PROMPT.md).
    """
    # TODO: validate, sort by arrival (stable), then one pass keeping the open batch's largest size
    raise NotImplementedError


# --- level 2 --------------------------------------------------------------------


def simulate_continuous(
    requests: list[Request], num_blocks: int, block_size: int, max_running: int
) -> ContinuousResult:
    """Simulate continuous batching step by step: growth (with recompute preemption of the
    most recently admitted request), then strict FCFS admission, then finished requests free.

    Example: a (prompt 4, output 3) and b (prompt 3, output 4) at step 0, 3 blocks of 4 tokens
      -> at step 1 b needs a new block, none is free, and b preempts itself (see PROMPT.md).
    Raises ValueError naming the field for invalid input.
    """
    # TODO: a FIFO waiting queue (deque), a running list in admission order, a free-block count
    raise NotImplementedError


# --- level 3 --------------------------------------------------------------------


def schedule_slo(requests: list[Request], config: EngineConfig) -> Schedule:
    """Serve or shed every request, maximising goodput (finished with first token in time).

    Each admitted request computes its whole prefill in the step it is admitted; a step takes
    decode_cost + prefill_cost * (prompt tokens computed in it). Memory never exceeds num_blocks.
    Raises ValueError naming the field for invalid input (ttft_deadline is required).
    """
    # TODO: choose a policy; simulate it; report every step, outcome, shed and rejected request
    raise NotImplementedError


# --- level 4 --------------------------------------------------------------------


def schedule_chunked(requests: list[Request], config: EngineConfig) -> Schedule:
    """As schedule_slo, but each step computes at most config.token_budget tokens (one per
    decoding request plus the prefill chunks), so long prompts are prefilled in chunks.

    Raises ValueError naming token_budget if it is None or < max_running.
    """
    # TODO: decodes first, then fill the rest of the budget with prefill chunks
    raise NotImplementedError


def tpot_percentiles(requests: list[Request], schedule: Schedule) -> TPOTStats:
    """Nearest-rank P50/P90/P99 of (finish_time - first_token_time) / (output_tokens - 1) over
    the finished requests with output_tokens >= 2.

    Example: TPOTs [2.0, 7.5, 8.0] -> TPOTStats(3, p50=7.5, p90=8.0, p99=8.0).
    """
    # TODO: rank = ceil(p * n / 100), value = sorted_values[rank - 1]
    raise NotImplementedError
