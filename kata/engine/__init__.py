"""A reference LLM inference engine in miniature: paged KV cache, continuous batching, preemption.

Read it in this order; each file is small and does one thing:

    llm.py            `LLM(model="tiny").generate(prompts, sampling_params)`: vLLM's front door
    outputs.py        RequestOutput / CompletionOutput, as vLLM names them
    config.py         model, cache, scheduler and engine settings (validated dataclasses)
    sequence.py       one request's state (token ids, num_computed_tokens, timestamps), and
                      SamplingParams
    prefix_cache.py   the prefix cache's index: SHA-256 keys, every hit verified
    block_pool.py     physical KV blocks: ref counts, free lists and LRU, reservations
    block_tables.py   each sequence's block table and token count
    block_manager.py  sequences' block tables on the pool: allocate, append (copy-on-write), fork
    swap.py           moving a preempted sequence's blocks to the host pool and back
    kv_cache.py       K and V storage (numpy), written through a slot mapping
    attention.py      paged prefill and decode attention (grouped-query), contiguous reference
    model.py          a tiny seeded decoder-only transformer over bytes, plus sampling
    batch.py          one step's ScheduledBatch, and the waiting queue
    scheduler.py      continuous batching with a token budget, chunked prefill and preemption
    fastpath.py       the simulation's lazy decode tracking (a step costs O(changes))
    policy.py         the policy contract (RequestView, StepBudget, SchedulerPolicy,
                      BatcherPolicy, PolicyError), the reference policies by name, their rules
    hooks.py          where the scheduler asks a policy: queue order, victims, admissions
    static_batcher.py the baseline it replaced: padded batches admitted and released together
    cost_model.py     simulated GPU time from FLOPs and bytes on a named hardware profile
    llm_engine.py     add_request / step / run: the loop that ties it together
    workloads.py      seeded synthetic traces (open and closed loop); metrics.py turns a run into
                      latency/memory figures, percentiles up to p99.9, SLOs and goodput
    cluster.py        several replicas behind a router (round-robin, least-outstanding-tokens)
    serving.py        a serving plan: its exact memory arithmetic, its simulation, its cost
    design.py         the design round's levels and judge(plan, level), shared by grader and CLI
    adapters/         loaders: a learner's kata file as a scheduler or batcher policy
    backends/         the same KV storage, attention and model on torch (cpu or cuda)
    report.py         a run's metrics table and KV chart, as `kata engine` prints them
    scenarios.py      the stress traces a plug-in policy is also run on
    arith.py          cdiv, the one ceiling division (blocks for n tokens)

    from kata.engine import LLM, SamplingParams
    LLM(model="tiny").generate("Hello", SamplingParams(max_tokens=4))[0].outputs[0].text

The engine imports nothing from kata outside kata.engine; `kata engine run`, `compare` and
`plan` live in kata/judges/, on top of it.

Importing `kata.engine` imports nothing heavy (the names above load on first use); numpy is
loaded by the modules that need it, and torch only when the torch backend is asked for.
"""

_EXPORTS = {"LLM": "kata.engine.llm", "SamplingParams": "kata.engine.sequence",
            "RequestOutput": "kata.engine.outputs", "CompletionOutput": "kata.engine.outputs",
            "LLMEngine": "kata.engine.llm_engine", "EngineConfig": "kata.engine.config"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    """`from kata.engine import LLM` imports kata.engine.llm then, not at `import kata.engine`."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'kata.engine' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)
