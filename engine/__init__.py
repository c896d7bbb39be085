"""A reference LLM inference engine in miniature: paged KV cache, continuous batching, preemption.

Read it in this order; each file is small and does one thing:

    config.py         model, cache, scheduler and engine settings (validated dataclasses)
    sequence.py       one request's state: token ids, num_computed_tokens, timestamps
    block_manager.py  the KV block pool: block tables, ref counts, copy-on-write, prefix cache, swap
    kv_cache.py       K and V storage (numpy), written through a slot mapping
    attention.py      paged prefill and decode attention (grouped-query), contiguous reference
    model.py          a tiny seeded decoder-only transformer over bytes, plus sampling
    scheduler.py      continuous batching with a token budget, chunked prefill and preemption
    static_batcher.py the baseline it replaced: padded batches admitted and released together
    cost_model.py     simulated GPU time from FLOPs and bytes on a named hardware profile
    llm_engine.py     add_request / step / run: the loop that ties it together
    workloads.py      seeded synthetic traces; metrics.py turns a run into latency/memory figures
    adapters/         the plug-in protocol for a learner's scheduler or batcher policy
    backends/         the same KV storage, attention and model on torch (cpu or cuda)
    cli.py            `kata engine run` and `kata engine compare`

Importing `engine` imports nothing heavy; numpy is loaded by the modules that need it, and torch
only when the torch backend is asked for.
"""
