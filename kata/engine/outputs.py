"""What the engine hands back, shaped like vLLM's: RequestOutput with CompletionOutputs.

    out = LLM(model="tiny").generate("Hello", SamplingParams(max_tokens=4, temperature=0))[0]
    out.request_id, out.prompt_token_ids       -> "req-0", [256, 72, 101, 108, 108, 111]
    out.outputs[0].token_ids                   -> 4 ids;  .text their bytes as text
    out.outputs[0].finish_reason               -> "length" ("stop": EOS or a stop token id;
                                                   "abort": cancelled; None while running)
    out.finished, out.metrics.ttft             -> True, simulated seconds to the first token

`LLMEngine.step()` returns one of these for every request that got a token in the step
(`finished` False until its last), so a caller can stream; the text is always cumulative, as
vLLM's default output kind. One completion per request (vLLM's `n=1`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from dataclasses import dataclass, field

from kata.engine.config import EOS_TOKEN_ID
from kata.engine.model import decode
from kata.engine.metrics import Metrics
from kata.engine.sequence import SamplingParams, Sequence


@dataclass(slots=True)
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None = None  # not computed here
    logprobs: None = None
    finish_reason: str | None = None  # "stop", "length", "abort"; None while running
    stop_reason: int | None = None  # the token id that stopped it (EOS or a stop_token_ids one)

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass(slots=True)
class RequestMetrics:
    """Simulated seconds (cost_model.py), as vLLM's RequestMetrics names them."""

    arrival_time: float
    first_token_time: float | None
    finished_time: float | None
    num_preemptions: int = 0

    @property
    def ttft(self) -> float | None:
        return None if self.first_token_time is None else self.first_token_time - self.arrival_time

    @property
    def e2e_latency(self) -> float | None:
        return None if self.finished_time is None else self.finished_time - self.arrival_time


@dataclass(slots=True)
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    outputs: list[CompletionOutput]
    finished: bool
    metrics: RequestMetrics
    num_cached_tokens: int = 0  # prompt tokens found in the prefix cache


def make_output(seq: Sequence, aborted: bool = False) -> RequestOutput:
    """A RequestOutput of the sequence as it stands (finished or not)."""
    ids = list(seq.output_token_ids)
    reason, stop = None, None
    if aborted:
        reason = "abort"
    elif seq.is_finished:
        p, last = seq.params, ids[-1] if ids else None
        by_token = last is not None and ((last == EOS_TOKEN_ID and not p.ignore_eos) or (
            p.stop_token_ids is not None and last in p.stop_token_ids))
        reason, stop = ("stop", last) if by_token else ("length", None)
    completion = CompletionOutput(0, decode(ids), ids, finish_reason=reason, stop_reason=stop)
    prompt_ids = list(seq.prompt_token_ids) if seq.prompt_token_ids is not None else None
    metrics = RequestMetrics(seq.arrival_time, seq.first_token_time, seq.finish_time,
                             seq.num_preemptions)
    return RequestOutput(seq.request_id, seq.prompt, prompt_ids, [completion], seq.is_finished,
                         metrics, seq.num_cached_tokens)


@dataclass(slots=True)
class RunResult:
    metrics: Metrics
    outputs: list[RequestOutput] = field(default_factory=list)
    wall_time_s: float = 0.0  # real seconds the run took


def generate(engine, prompts, params=None) -> list[RequestOutput]:
    """Run prompts (a string, a list, or {"prompt_token_ids": [...]} dicts) to completion with
    one SamplingParams for all or one per prompt; their RequestOutputs, in prompt order."""
    prompts = [prompts] if isinstance(prompts, (str, dict)) else list(prompts)
    if params is None or isinstance(params, SamplingParams):
        params = [params or SamplingParams()] * len(prompts)
    elif len(params) != len(prompts):
        raise ValueError(f"generate: {len(params)} SamplingParams for {len(prompts)} prompts; "
                         "give one for all, or one per prompt")
    ids = []
    for prompt, p in zip(prompts, params, strict=True):
        if isinstance(prompt, dict):
            if "prompt_token_ids" not in prompt:
                raise ValueError("generate: a dict prompt needs 'prompt_token_ids'")
            prompt = list(prompt["prompt_token_ids"])
        ids.append(engine.add_request(prompt, p))
    by_id = {o.request_id: o for o in engine.run().outputs}
    return [by_id[i] for i in ids]


PROGRESS_STEPS = 32  # counted_steps: a progress call once every this many steps
OnProgress = Callable[[int, int], None]  # on_progress(requests finished, requests in all)
S = TypeVar("S")


def counted_steps(step: Callable[[], S], finished: list, num_done: int, total: int,
                  on_progress: OnProgress) -> Callable[[], S]:
    """`step` (LLMEngine's), calling on_progress(requests finished since `num_done`, `total`)
    once every PROGRESS_STEPS steps: how `LLMEngine.run` reports a long run as it goes."""
    count = 0

    def counted() -> S:
        nonlocal count
        result = step()
        count += 1
        if count % PROGRESS_STEPS == 0:
            on_progress(len(finished) - num_done, total)
        return result

    return counted
