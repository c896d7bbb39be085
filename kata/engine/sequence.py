"""One request's state as it moves through the engine: waiting -> running -> finished.

A `Sequence` holds token ids (prompt, then output), how many of them already have KV in the cache
(`num_computed_tokens`), and the timestamps the metrics are made from. The block manager keeps its
block table; the scheduler moves it between queues.

    seq = Sequence(seq_id=0, request_id="r0", prompt_token_ids=[256, 104, 105], ...)
    seq.num_tokens           -> 3      (prompt + output so far)
    seq.num_computed_tokens  -> 0      (nothing in the KV cache yet: it needs a prefill)

Without compute (simulation), output token *ids* are never made up: only counts move, and
`prompt_token_ids` may be None when prefix caching is not wanted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from kata.engine.config import EOS_TOKEN_ID


class SequenceStatus(enum.Enum):
    WAITING = "waiting"  # queued: no KV blocks (new, or preempted by recompute)
    RUNNING = "running"  # holds KV blocks; in prefill or decode
    SWAPPED = "swapped"  # preempted by swap: its blocks sit in the host pool
    FINISHED = "finished"


@dataclass(slots=True)
class SamplingParams:
    """Per-request generation settings, with vLLM's names and defaults.

    temperature 0 is greedy (argmax). Otherwise softmax(logits / temperature), cut to the
    `top_k` largest (0 or -1: no cut) and to the smallest set whose probability reaches `top_p`,
    sampled with the request's own generator, seeded by `seed` (None: by its sequence number,
    so a run is still reproducible): its tokens do not depend on the batch, the backend or
    preemption. A request stops after `max_tokens`, or at EOS or any of `stop_token_ids`
    (unless `ignore_eos`, which ignores EOS only).

        SamplingParams()                              # vLLM's defaults: 16 tokens, temperature 1
        SamplingParams(max_tokens=8, temperature=0)   # greedy
    """

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1 = no cut
    seed: int | None = None
    ignore_eos: bool = False
    stop_token_ids: list[int] | None = None
    n: int = 1  # completions per prompt: only 1 (parallel sampling is not wired in)

    def __post_init__(self) -> None:
        if self.n != 1:
            raise ValueError(f"SamplingParams.n must be 1 here (parallel sampling is not "
                             f"supported), got {self.n!r}")
        if type(self.max_tokens) is not int or self.max_tokens < 1:
            raise ValueError(f"SamplingParams.max_tokens must be an int >= 1, got "
                             f"{self.max_tokens!r}")
        if not self.temperature >= 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < -1:
            raise ValueError(f"SamplingParams.top_k must be >= 0 (or -1: no cut), got "
                             f"{self.top_k}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


@dataclass(slots=True, eq=False)  # eq=False: compared and hashed by identity
class Sequence:
    seq_id: int
    request_id: str
    prompt_token_ids: list[int] | None  # None: a simulated prompt with no ids (no prefix caching)
    num_prompt_tokens: int
    params: SamplingParams
    max_tokens: int  # params.max_tokens, clipped so prompt + output <= max_model_len
    arrival_time: float = 0.0
    priority: int = 0  # lower runs first under the "priority" policy
    cache_salt: str | None = None  # prefix-cache namespace (a tenant): shared only within it
    prompt: str | None = None  # the prompt's text, if it was given as text
    status: SequenceStatus = SequenceStatus.WAITING
    output_token_ids: list[int] = field(default_factory=list)  # filled only when computing
    num_output_tokens: int = 0
    num_computed_tokens: int = 0  # tokens whose K/V are in the cache
    num_cached_tokens: int = 0  # of those, found in the prefix cache at the last allocation
    rng: np.random.Generator | None = None  # for seeded sampling
    # --- timestamps (simulated seconds) and counters, for metrics.py
    first_token_time: float | None = None
    finish_time: float | None = None
    num_preemptions: int = 0
    # --- scheduler bookkeeping (see scheduler.py: decode progress is tracked lazily)
    synced_step: int = 0  # num_output_tokens is exact as of the start of this step
    wake_step: int = -1  # next step the scheduler must look at this sequence
    finish_step: int = -1  # step after which it has produced max_tokens
    running_order: int = 0  # admission counter: lower = admitted earlier
    decoding: bool = False  # running and past its prefill: one new token per step
    phase: int = -1  # simulation: step % block_size at which it takes a new block, once counted

    @property
    def num_tokens(self) -> int:
        return self.num_prompt_tokens + self.num_output_tokens

    @property
    def token_ids(self) -> list[int]:
        """Prompt + output ids (compute mode only)."""
        assert self.prompt_token_ids is not None
        return self.prompt_token_ids + self.output_token_ids

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    def is_stopped(self, sampled: bool) -> bool:
        """Done after its latest token: max_tokens reached, or (when tokens are really sampled,
        `sampled`) it was EOS (not ignored) or one of the stop token ids."""
        if self.num_output_tokens >= self.max_tokens:
            return True
        if not sampled:
            return False
        last, p = self.output_token_ids[-1], self.params
        return (last == EOS_TOKEN_ID and not p.ignore_eos) or (
            p.stop_token_ids is not None and last in p.stop_token_ids)
