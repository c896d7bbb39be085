"""The scheduler's policy contract: what a policy sees, what it answers, the reference policies
by name, and their order and victim rules (written here once; kata/engine/hooks.py takes them as
fast paths, the reference classes answer through them).

The engine keeps all the mechanics (block tables, budgets, preemption, KV copies); a policy only
makes the choices below, from read-only snapshots of the requests. Any object with the methods
works (duck typing); a method left out falls back to the reference behaviour.

SchedulerPolicy (the priority-scheduler kata):

    key(request: RequestView) -> sortable
        Waiting-queue order: the smallest key is admitted first. Called once each time a request
        joins the queue (on arrival, and again after a preemption by recompute), so it must not
        depend on the clock. Reference FCFS: (arrival_time, seq_id).
    pick_victim(running: list[RequestView]) -> int
        A request must give up its KV blocks (the pool is empty and a running sequence needs a
        new block): return the seq_id of one of `running` (oldest admitted first). Reference
        FCFS: the most recently admitted.

BatcherPolicy (the token-batcher kata):

    admit(waiting: list[RequestView], budget: StepBudget) -> list[int]
        Once per step, after running sequences have their decode tokens and prefill chunks:
        which waiting requests to admit, in order (seq_ids from `waiting`, the first
        WAITING_WINDOW of the queue in policy order). The engine admits each one that fits
        (free blocks for its tokens, a sequence slot, >= 1 token of budget for a prefill chunk)
        and skips one that does not. Reference: admit in queue order, stop at the first misfit.

A learner's kata file becomes such an object through a loader in kata/engine/adapters/.

    class ShortestPromptFirst:                       # a tiny example policy
        def key(self, r):
            return (r.num_prompt_tokens, r.seq_id)

        def pick_victim(self, running):
            return max(running, key=lambda r: r.num_prompt_tokens).seq_id
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Reversible
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Protocol, TypeVar, runtime_checkable

WAITING_WINDOW = 64  # requests shown to BatcherPolicy.admit each step

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class RequestView:
    """A read-only snapshot of one request (one sequence) for a policy."""

    seq_id: int
    request_id: str
    arrival_time: float  # simulated seconds
    priority: int  # lower is more urgent (the workload sets it)
    num_prompt_tokens: int
    num_output_tokens: int  # generated so far
    max_tokens: int  # it stops after this many output tokens
    num_computed_tokens: int  # tokens whose K/V are in the cache
    num_preemptions: int


@dataclass(slots=True, frozen=True)
class StepBudget:
    """What is left in this step for new admissions."""

    step: int
    token_budget: int  # tokens left for prefill chunks this step
    num_free_seqs: int  # sequence slots left (max_num_seqs - running)
    num_free_blocks: int  # free KV blocks in the pool
    block_size: int


@runtime_checkable
class SchedulerPolicy(Protocol):
    def key(self, request: RequestView) -> Any: ...

    def pick_victim(self, running: list[RequestView]) -> int: ...


@runtime_checkable
class BatcherPolicy(Protocol):
    def admit(self, waiting: list[RequestView], budget: StepBudget) -> list[int]: ...


class PolicyError(RuntimeError):
    """A plug-in policy returned something the engine cannot use; the message says what."""


# --- the reference rules: on a RequestView or on the engine's own Sequence alike ---------------

FCFS_ORDER: Callable[[Any], tuple] = attrgetter("arrival_time", "seq_id")
PRIORITY_ORDER: Callable[[Any], tuple] = attrgetter("priority", "arrival_time", "seq_id")


def latest_admitted(running: Reversible[T]) -> T:
    """FCFS's victim: the most recently admitted (`running` is in admission order)."""
    return next(reversed(running))


def least_urgent(running: Iterable[T]) -> T:
    """Priority's victim: the least urgent, latest arrival (the largest PRIORITY_ORDER)."""
    return max(running, key=PRIORITY_ORDER)


class FCFSPolicy:
    """First come, first served; preempt the most recently admitted."""

    name = "fcfs"

    def key(self, request: RequestView) -> tuple:
        return FCFS_ORDER(request)

    def pick_victim(self, running: list[RequestView]) -> int:
        return latest_admitted(running).seq_id


class PriorityPolicy:
    """Lowest `priority` value first (ties: arrival); preempt the least urgent, latest arrival."""

    name = "priority"

    def key(self, request: RequestView) -> tuple:
        return PRIORITY_ORDER(request)

    def pick_victim(self, running: list[RequestView]) -> int:
        return least_urgent(running).seq_id


# --- the registry ---------------------------------------------------------------------------

POLICIES: dict[str, type] = {"fcfs": FCFSPolicy, "priority": PriorityPolicy}  # by config name


@dataclass(slots=True, frozen=True)
class Rules:
    """A reference policy's rules as plain functions: the scheduler's fast path (no snapshots)."""

    order: Callable[[Any], tuple]  # the waiting-queue key
    victim: Callable[[Any], Any]  # the running sequence to preempt, from those in admission order


RULES: dict[type, Rules] = {FCFSPolicy: Rules(FCFS_ORDER, latest_admitted),
                            PriorityPolicy: Rules(PRIORITY_ORDER, least_urgent)}

KINDS = {"scheduler": ("key", "pick_victim"), "batcher": ("admit",)}  # plug-in kind -> methods


def reference_policy(name: str) -> object:
    """The reference policy a SchedulerConfig.policy names (FCFS for any other name)."""
    return POLICIES.get(name, FCFSPolicy)()


def rules_of(policy: object) -> Rules | None:
    """The fast-path rules of a reference policy (exactly its class, not a subclass), else None."""
    return RULES.get(type(policy))


def check_policy(obj: object, *, kind: str) -> object:
    """Return obj if it can serve as a `kind` ("scheduler" or "batcher") policy, else raise
    PolicyError naming the missing method."""
    needed = KINDS[kind]
    found = [m for m in needed if callable(getattr(obj, m, None))]
    if not found:
        raise PolicyError(f"the {kind} policy {type(obj).__name__} has none of the methods "
                          f"{', '.join(needed)}")
    return obj


__all__ = ["RequestView", "StepBudget", "SchedulerPolicy", "BatcherPolicy", "PolicyError",
           "FCFSPolicy", "PriorityPolicy", "check_policy", "WAITING_WINDOW", "FCFS_ORDER",
           "PRIORITY_ORDER", "latest_admitted", "least_urgent", "POLICIES", "Rules", "RULES",
           "KINDS", "reference_policy", "rules_of"]
