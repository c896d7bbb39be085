"""Decoding sequences, counted rather than visited: the simulation's fast path.

When computing for real, the scheduler visits every decoding sequence each step anyway. When only
simulating, a step should cost O(changes), not O(running), so DecodeTracker keeps decode progress
lazily:

* a decoding sequence's counts are exact as of `seq.synced_step` and grow by one per step;
  `sync` brings them up to date when someone looks (it finishes, is preempted, or is viewed);
* a sequence first outgrows its blocks at a known step (`wake`); from then on it needs a new
  block every block_size steps, always at the same phase (step % block_size), so it is merely
  counted in `phase_count`. `grant` gives each step's phase its blocks in bulk. Granted blocks
  are *owed*: reserved in the block manager at once (`bm.reserve`, so its free count is true
  at every step), but appended to a table only when that sequence's table must be exact (it
  leaves, or the pool runs short: then every table is made exact and the scheduler grows
  sequences one at a time, as when computing). Reservations come only from free blocks holding
  no cached prefix, so no eviction happens out of order.

The decisions, timings and metrics are the same as growing every sequence every step (the tests
run both ways and compare). With lazy=False it still keeps the running aggregates (how many
sequences decode, their total tokens) and the finish schedule, which the scheduler needs either
way.

    decodes = DecodeTracker(block_manager, lazy=True)
    decodes.start(seq, step)                 # seq's prefill is done; it decodes from now on
    growing = decodes.grant(step, running)   # [] when this step's blocks were granted in bulk
    decodes.stop(seq, step, freeing=True)    # seq leaves running (finished or preempted)
"""

from __future__ import annotations

from collections.abc import Mapping

from kata.engine.arith import cdiv
from kata.engine.block_manager import BlockManager
from kata.engine.sequence import Sequence


class DecodeTracker:
    def __init__(self, bm: BlockManager, lazy: bool) -> None:
        self.bm = bm
        self.lazy = lazy
        self.count = 0  # sequences decoding
        self.tokens = 0  # their total num_tokens, as of the current step's start
        self.granted_step = -1  # the last step whose block needs were granted
        self.finishing: dict[int, list[Sequence]] = {}  # step -> seqs sampling their last token
        self._wake: dict[int, list[Sequence]] = {}  # step -> seqs first outgrowing their blocks
        self._phase_count = [0] * bm.block_size  # phase -> seqs needing a block at that phase

    @property
    def owed(self) -> int:
        """Blocks granted to decoding sequences and not yet in their tables (reserved)."""
        return self.bm.num_reserved_blocks

    def sync(self, seq: Sequence, step: int) -> None:
        """Bring a decoding sequence's counts up to the start of `step`."""
        k = step - seq.synced_step
        if k:
            seq.num_output_tokens += k
            seq.num_computed_tokens += k
            seq.synced_step = step

    def start(self, seq: Sequence, step: int) -> None:
        """From `step` on, seq produces one token per step until max_tokens."""
        num_tokens = seq.num_tokens
        seq.decoding = True
        seq.synced_step = step
        self.count += 1
        self.tokens += num_tokens
        remaining = seq.max_tokens - seq.num_output_tokens
        seq.finish_step = finish = step + remaining - 1  # the step that samples its last token
        if remaining > 0:
            self.finishing.setdefault(finish, []).append(seq)
        if self.lazy:
            self._plan_wake(seq, step, num_tokens)

    def advance(self) -> None:
        """A step ran: every decoding sequence grew by one token."""
        self.tokens += self.count

    def stop(self, seq: Sequence, step: int, freeing: bool) -> None:
        """seq leaves the decoding set; its table is made exact unless it is about to be freed."""
        if freeing and seq.phase >= 0:
            self._forget_owed(seq, step)
        else:
            self.materialize(seq, step)  # (syncs it too)
        if seq.phase >= 0:
            self._phase_count[seq.phase] -= 1
        seq.decoding = False
        seq.wake_step = seq.finish_step = seq.phase = -1
        self.count -= 1
        self.tokens -= seq.num_tokens

    # --- blocks ------------------------------------------------------------------------

    def grant(self, step: int, running: Mapping[int, Sequence]) -> list[Sequence]:
        """This step's new blocks for the sequences growing at its phase: granted in bulk when the
        pool has room (returns []); else every table is made exact and the sequences to grow one
        by one, preempting as needed, are returned."""
        bs = self.bm.block_size
        phase = step % bs
        for seq in self._wake.pop(step, ()):  # first block needed: from now on, just counted
            if seq.decoding and seq.wake_step == step:
                seq.phase = phase
                self._phase_count[phase] += 1
        demand = self._phase_count[phase]
        if demand <= self.bm.num_uncached_free_blocks:
            self.bm.reserve(demand)
            return []
        self.materialize_all(running, step)
        return [s for s in running.values() if s.decoding and s.phase == phase]

    def materialize(self, seq: Sequence, step: int) -> None:
        """Take the blocks owed to a decoding seq from the block manager: its table is exact."""
        self.sync(seq, step)
        target = seq.num_tokens - (step - self.granted_step)  # slots granted so far
        have = self.bm.num_tokens(seq.seq_id)
        if target > have:
            self.bm.append(seq.seq_id, target - have, reserved=True)

    def settle(self, running: Mapping[int, Sequence], step: int, needed: int | None = None) -> None:
        """Before taking `needed` fresh blocks (None: any number), make every table exact if the
        owed blocks could otherwise be handed out, or a cached prefix evicted out of order."""
        if self.owed and (needed is None or needed > self.bm.num_uncached_free_blocks):
            self.materialize_all(running, step)

    def materialize_all(self, running: Mapping[int, Sequence], step: int) -> None:
        for seq in running.values():
            if seq.phase >= 0:
                self.materialize(seq, step)
        assert self.owed == 0, self.owed

    def _forget_owed(self, seq: Sequence, step: int) -> None:
        """A decoding seq is about to be freed: drop the blocks it is owed instead of taking them.

        Blocks appended and then freed at once would come off the top of the free stack and go
        back onto it in the same order (a release walks the table backwards), so the pool ends
        exactly as materialize + free would leave it. Not if the append would copy a shared last
        block first (copy-on-write): then take them for real.
        """
        self.sync(seq, step)
        bm, bs = self.bm, self.bm.block_size
        table = bm.block_tables[seq.seq_id]
        if bm.num_tokens(seq.seq_id) % bs and bm.ref_count(table[-1]) > 1:
            self.materialize(seq, step)
            return
        target = seq.num_tokens - (step - self.granted_step)  # slots granted so far
        self.bm.unreserve(max(0, cdiv(target, bs) - len(table)))

    def _plan_wake(self, seq: Sequence, step: int, num_tokens: int) -> None:
        """Register the first step at which seq's tokens outgrow its blocks (if before it ends).

        A block table always holds exactly ceil(slots / block_size) blocks, so its capacity
        follows from the slots the block manager has reserved for seq.
        """
        bs = self.bm.block_size
        capacity = cdiv(self.bm.num_tokens(seq.seq_id), bs) * bs
        wake = step + capacity - num_tokens + 1  # num_tokens grows by one per step
        if step <= wake <= seq.finish_step:
            seq.wake_step = wake
            self._wake.setdefault(wake, []).append(seq)
        else:
            seq.wake_step = -1

    # --- for tests ---------------------------------------------------------------------

    def check(self, running: Mapping[int, Sequence], step: int) -> None:
        """Recompute the aggregates and the owed blocks from scratch and compare. O(running)."""
        decoding = [s for s in running.values() if s.decoding]
        for s in decoding:
            self.sync(s, step)
        assert self.count == len(decoding)
        assert self.tokens == sum(s.num_tokens for s in decoding)
        bs, owed = self.bm.block_size, 0
        for s in decoding:  # every granted token has a slot, in the table or owed
            granted = s.num_tokens - (step - self.granted_step)
            table = len(self.bm.block_tables[s.seq_id])
            owed += max(0, cdiv(granted, bs) - table)
            assert granted >= s.num_computed_tokens
            assert s.phase >= 0 or cdiv(granted, bs) <= table
        assert owed == self.owed, "reserved blocks differ from the blocks owed to decodes"
        assert self._phase_count == [sum(s.phase == p for s in decoding) for p in range(bs)]
