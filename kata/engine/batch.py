"""What one scheduler step hands the model: the batch, and the waiting queue it was drawn from.

    batch = ScheduledBatch(step=0)          # filled in by Scheduler.schedule()
    queue = WaitingQueue(key=lambda s: (s.arrival_time, s.seq_id))
    queue.push(seq); queue.peek() -> seq; queue.remove(seq)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from kata.engine.policy import PolicyError
from kata.engine.sequence import Sequence


@dataclass(slots=True)
class ScheduledBatch:
    """One step's plan. Prefill chunks start at each sequence's num_computed_tokens."""

    step: int
    prefills: list[tuple[Sequence, int]] = field(default_factory=list)  # (seq, num_new_tokens)
    decodes: list[Sequence] = field(default_factory=list)  # filled only when computing
    copies: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write (src, dst)
    swap_out: list[tuple[int, int]] = field(default_factory=list)  # (device, host) blocks
    swap_in: list[tuple[int, int]] = field(default_factory=list)  # (host, device) blocks
    preempted: bool = False
    # --- the work, for the cost model (padding included for static batching)
    prefill_tokens: int = 0  # new tokens computed by prefill chunks
    prefill_context_tokens: int = 0  # earlier tokens of those sequences whose K/V are read
    prefill_attention_pairs: int = 0  # (query, key) pairs in prefill attention
    num_decode_seqs: int = 0
    num_decode_context_tokens: int = 0  # KV tokens read by decodes (each includes its new one)
    num_sampled: int = 0  # rows that need logits

    def measure(self, num_decoding: int, decode_tokens: int) -> None:
        """Fill in the work fields from the decodes' aggregates and the prefill chunks."""
        self.num_decode_seqs = self.num_sampled = num_decoding
        self.num_decode_context_tokens = decode_tokens
        tokens = context = pairs = sampled = 0
        for seq, n in self.prefills:
            c = seq.num_computed_tokens
            tokens += n
            context += c
            pairs += n * c + n * (n + 1) // 2  # each new token attends to all before it
            sampled += c + n == seq.num_tokens  # its last chunk: logits for one token
        self.prefill_tokens, self.prefill_context_tokens = tokens, context
        self.prefill_attention_pairs = pairs
        self.num_sampled += sampled

    @property
    def is_empty(self) -> bool:
        return not (self.prefills or self.num_decode_seqs or self.swap_in or self.swap_out)


class WaitingQueue:
    """Waiting sequences in policy order: a heap with lazy deletion (O(log n) push and pop)."""

    def __init__(self, key: Callable[[Sequence], object]) -> None:
        self._key = key
        self._heap: list[list] = []  # [key, tiebreak, seq]
        self._live: dict[int, list] = {}  # seq_id -> its current heap entry
        self._count = 0

    def __len__(self) -> int:
        return len(self._live)

    def __iter__(self):
        """The waiting sequences, in no particular order."""
        return (entry[2] for entry in self._live.values())

    def push(self, seq: Sequence) -> None:
        entry = [self._key(seq), self._count, seq]
        self._count += 1
        try:
            heapq.heappush(self._heap, entry)
        except TypeError as e:
            raise PolicyError(f"the scheduler policy's key() returned {entry[0]!r}, which cannot "
                              f"be compared with other keys ({e})") from None
        self._live[seq.seq_id] = entry

    def peek(self) -> Sequence | None:
        heap = self._heap
        while heap and self._live.get(heap[0][2].seq_id) is not heap[0]:
            heapq.heappop(heap)  # drop entries removed out of order
        return heap[0][2] if heap else None

    def remove(self, seq: Sequence) -> None:
        del self._live[seq.seq_id]

    def head(self, n: int) -> list[Sequence]:
        """The first n sequences in order. O(len) — used only with a plug-in batcher."""
        return [e[2] for e in heapq.nsmallest(n, self._live.values())]
