"""Optional compute backends. `torch_backend` runs the engine's tensors on torch (cpu or cuda);
it is imported only when `backend="torch"` is asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence as SequenceABC

    import numpy as np

    from kata.engine.attention import AttentionMetadata
    from kata.engine.sequence import Sequence


class ModelBackend(Protocol):
    """What the engine calls on its model: TinyModel (numpy) or TorchModel (torch). Each reads
    its own backend's KV cache and returns its own logits (an ndarray or a Tensor) for its own
    sample: the engine makes the pair, so the cache and logits types are left open (Any)."""

    def forward(self, input_ids: np.ndarray, positions: np.ndarray, meta: AttentionMetadata,
                kv_cache: Any) -> Any: ...

    def sample(self, logits: Any, seqs: SequenceABC[Sequence]) -> list[int]: ...
