"""`LLM`: the engine behind vLLM's offline front door, with vLLM's names.

    from kata.engine import LLM, SamplingParams

    llm = LLM(model="tiny", max_num_seqs=8, seed=0)
    outputs = llm.generate(["Hello", "KV"], [SamplingParams(max_tokens=4),
                                             SamplingParams(max_tokens=2, temperature=0)])
    [len(o.outputs[0].token_ids) for o in outputs]     -> [4, 2]
    outputs[0].outputs[0].text, outputs[0].outputs[0].finish_reason

For streaming, drive the engine yourself: `llm.llm_engine.add_request(...)`, then
`llm.llm_engine.step()` returns each request's output so far (outputs.py).

Engine arguments are vLLM's where the concept is the same (see docs/ENGINE.md for the table):
model (a name in MODEL_PRESETS that can be computed: "tiny"), dtype, seed, max_model_len,
block_size, num_gpu_blocks_override, swap_space (GiB of host memory for preempted blocks),
enable_prefix_caching, enable_chunked_prefill, max_num_seqs, max_num_batched_tokens,
preemption_mode, device; and the engine's own: backend ("numpy" or "torch"), hardware and
cost_model (what simulated time is charged for). An unknown argument is refused by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence as SequenceABC

from kata.engine.arith import cdiv
from kata.engine.config import MODEL_PRESETS, CacheConfig, EngineConfig, SchedulerConfig
from kata.engine.outputs import RequestOutput
from kata.engine.sequence import SamplingParams

COMPUTABLE_MODELS = ("tiny",)  # the other presets are shapes the cost model charges for
_SCHEDULER_ARGS = ("enable_chunked_prefill", "max_num_seqs", "max_num_batched_tokens",
                   "preemption_mode")
_ENGINE_ARGS = ("dtype", "device", "backend", "hardware", "cost_model")


def engine_config(model: str = "tiny", *, seed: int = 0, max_model_len: int | None = None,
                  block_size: int = 16, num_gpu_blocks_override: int | None = None,
                  swap_space: float = 0.0, enable_prefix_caching: bool = True,
                  **kwargs: object) -> EngineConfig:
    """An EngineConfig from vLLM-named engine arguments (see the module docstring)."""
    unknown = sorted(set(kwargs) - set(_SCHEDULER_ARGS) - set(_ENGINE_ARGS))
    if unknown:
        raise TypeError(f"LLM: unknown engine argument {unknown[0]!r}; known: model, seed, "
                        f"max_model_len, block_size, num_gpu_blocks_override, swap_space, "
                        f"enable_prefix_caching, {', '.join(_SCHEDULER_ARGS + _ENGINE_ARGS)}")
    if model not in COMPUTABLE_MODELS:
        raise ValueError(f"LLM: model={model!r} cannot be computed here; choose one of "
                         f"{', '.join(COMPUTABLE_MODELS)} (the others in MODEL_PRESETS are "
                         "cost-model shapes: use EngineConfig(compute=False, cost_model=...))")
    m = dataclasses.replace(MODEL_PRESETS[model], seed=seed)
    if max_model_len is not None:
        m = dataclasses.replace(m, max_model_len=max_model_len)
    num_blocks = num_gpu_blocks_override or max(1024, cdiv(m.max_model_len, block_size))
    host_blocks = int(swap_space * 2**30 // (m.kv_bytes_per_token * block_size))
    # the names are checked above, the values by SchedulerConfig.__post_init__
    sched = SchedulerConfig(**{"max_num_seqs": 256, "max_num_batched_tokens": 8192,  # type: ignore[arg-type]
                               **{k: kwargs.pop(k) for k in _SCHEDULER_ARGS if k in kwargs}})
    if host_blocks == 0 and sched.preemption_mode == "swap":
        raise ValueError("LLM: preemption_mode='swap' needs swap_space > 0 (GiB)")
    return EngineConfig(model=m, cache=CacheConfig(block_size, num_blocks, host_blocks,
                                                   enable_prefix_caching),
                        scheduler=sched, **kwargs)  # type: ignore[arg-type]  # checked above


class LLM:
    def __init__(self, model: str = "tiny", **engine_args: object) -> None:
        from kata.engine.llm_engine import LLMEngine

        self.llm_engine = LLMEngine(engine_config(model, **engine_args))  # type: ignore[arg-type]

    def generate(self, prompts: str | dict | SequenceABC[str | dict],
                 sampling_params: SamplingParams | SequenceABC[SamplingParams] | None = None,
                 use_tqdm: bool = False) -> list[RequestOutput]:
        """Complete every prompt; RequestOutputs in prompt order. `sampling_params`: one for
        all prompts or one per prompt (None: vLLM's defaults, SamplingParams()). `use_tqdm` is
        accepted for vLLM's signature; there is no progress bar."""
        return self.llm_engine.generate(prompts, sampling_params)

    def get_tokenizer(self):
        """The byte tokenizer: .encode(text) -> ids after BOS, .decode(ids) -> text."""
        from kata.engine import model

        return model
