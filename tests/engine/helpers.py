"""Small builders shared by the engine tests."""

from __future__ import annotations

from kata.engine.config import CacheConfig, EngineConfig, ModelConfig, SchedulerConfig


def tiny_config(*, num_blocks=64, block_size=4, max_num_seqs=8, max_num_batched_tokens=32,
                max_model_len=128, compute=True, num_host_blocks=0, prefix_caching=True,
                **scheduler) -> EngineConfig:
    """A config small enough that memory pressure and chunking happen within a few requests."""
    return EngineConfig(
        model=ModelConfig(max_model_len=max_model_len),
        cache=CacheConfig(block_size=block_size, num_blocks=num_blocks,
                          num_host_blocks=num_host_blocks, enable_prefix_caching=prefix_caching),
        scheduler=SchedulerConfig(max_num_seqs=max_num_seqs,
                                  max_num_batched_tokens=max_num_batched_tokens, **scheduler),
        compute=compute)
