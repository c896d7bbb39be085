"""Where the scheduler asks a policy: queue order, the preemption victim, and (with a plug-in
batcher) which waiting requests to admit. The reference policies take fast paths (their rules in
kata/engine/policy.py, applied to the sequences themselves: no snapshots); a plug-in policy sees
RequestView snapshots and its answers are checked, so a wrong answer is one PolicyError line
rather than a corrupted engine.

    hooks = PolicyHooks("fcfs", policy=None, batcher=None, sync=tracker_sync)
    queue = WaitingQueue(hooks.queue_key)
    victim = hooks.pick_victim(scheduler.running)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kata.engine.policy import PolicyError, RequestView, StepBudget, reference_policy, rules_of
from kata.engine.sequence import Sequence


class PolicyHooks:
    def __init__(self, policy_name: str, policy: object | None, batcher: object | None,
                 sync: Callable[[Sequence], None]) -> None:
        ref = reference_policy(policy_name)
        policy = policy if policy is not None else ref
        # a method left out falls back to the reference's; plug-ins are duck-typed (Any): what
        # they answer is checked below, not their types
        self._key_policy: Any = policy if callable(getattr(policy, "key", None)) else ref
        self._victim_policy: Any = policy if callable(getattr(policy, "pick_victim", None)) else ref
        self.batcher: Any = batcher
        self._sync = sync  # brings a lazily tracked decoding sequence's counts up to date
        # the reference keys as C-level getters: one call per push, 100k's in a simulation
        key_rules, victim_rules = rules_of(self._key_policy), rules_of(self._victim_policy)
        self.queue_key = key_rules.order if key_rules is not None else self._plugin_key
        self._fast_victim = victim_rules.victim if victim_rules is not None else None

    def view(self, seq: Sequence) -> RequestView:
        """What a policy sees of a sequence: a read-only snapshot."""
        if seq.decoding:
            self._sync(seq)
        return RequestView(seq.seq_id, seq.request_id, seq.arrival_time, seq.priority,
                           seq.num_prompt_tokens, seq.num_output_tokens, seq.max_tokens,
                           seq.num_computed_tokens, seq.num_preemptions)

    def _plugin_key(self, seq: Sequence) -> object:
        return self._key_policy.key(self.view(seq))

    def pick_victim(self, running: dict[int, Sequence]) -> Sequence:
        """The running sequence to preempt (running is in admission order)."""
        if self._fast_victim is not None:
            return self._fast_victim(running.values())
        seq_id = self._victim_policy.pick_victim([self.view(s) for s in running.values()])
        victim = running.get(seq_id) if isinstance(seq_id, int) else None
        if victim is None:
            raise PolicyError(f"pick_victim returned {seq_id!r}, which is not the seq_id of a "
                              f"running request (running: {list(running)[:10]})")
        return victim

    def admission_order(self, head: list[Sequence], budget: StepBudget) -> Iterator[Sequence]:
        """The plug-in batcher's choice among `head`, in its order, each checked as it is used."""
        by_id = {s.seq_id: s for s in head}
        chosen = self.batcher.admit([self.view(s) for s in head], budget)
        seen = set()
        for seq_id in chosen:
            if seq_id not in by_id or seq_id in seen:
                raise PolicyError(f"admit returned {seq_id!r}: not a waiting seq_id it was shown, "
                                  f"or listed twice (shown: {list(by_id)[:10]})")
            seen.add(seq_id)
            yield by_id[seq_id]
