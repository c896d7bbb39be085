"""Plug-in points: a learner's kata solution deciding *who* runs, inside the reference engine.

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

A loader module per kata, `token_batcher.py` / `priority_scheduler.py` in this package, exposes
`load(path) -> policy object`, turning the learner's file into an object with these methods.

    class ShortestPromptFirst:                       # a tiny example policy
        def key(self, r):
            return (r.num_prompt_tokens, r.seq_id)

        def pick_victim(self, running):
            return max(running, key=lambda r: r.num_prompt_tokens).seq_id
"""

from __future__ import annotations

from pathlib import Path

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

WAITING_WINDOW = 64  # requests shown to BatcherPolicy.admit each step


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


# --- reference policies ----------------------------------------------------------------


class FCFSPolicy:
    """First come, first served; preempt the most recently admitted."""

    name = "fcfs"

    def key(self, request: RequestView) -> tuple:
        return (request.arrival_time, request.seq_id)

    def pick_victim(self, running: list[RequestView]) -> int:
        return running[-1].seq_id


class PriorityPolicy:
    """Lowest `priority` value first (ties: arrival); preempt the least urgent, latest arrival."""

    name = "priority"

    def key(self, request: RequestView) -> tuple:
        return (request.priority, request.arrival_time, request.seq_id)

    def pick_victim(self, running: list[RequestView]) -> int:
        return max(running, key=lambda r: (r.priority, r.arrival_time, r.seq_id)).seq_id


def check_policy(obj: object, *, kind: str) -> object:
    """Return obj if it can serve as a `kind` ("scheduler" or "batcher") policy, else raise
    PolicyError naming the missing method."""
    needed = {"scheduler": ("key", "pick_victim"), "batcher": ("admit",)}[kind]
    found = [m for m in needed if callable(getattr(obj, m, None))]
    if not found:
        raise PolicyError(f"the {kind} policy {type(obj).__name__} has none of the methods "
                          f"{', '.join(needed)}")
    return obj


__all__ = ["RequestView", "StepBudget", "SchedulerPolicy", "BatcherPolicy", "PolicyError",
           "FCFSPolicy", "PriorityPolicy", "check_policy", "WAITING_WINDOW"]


def import_learner_module(path: Path, module_name: str, slug: str):
    """Import a learner's kata file under its module name; any failure is one PolicyError line."""
    import importlib.util
    import sys

    if not path.is_file():
        raise PolicyError(f"{path}: no such file (start the kata with `kata start {slug}`)")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None  # a kata file is a .py: a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # its dataclasses look their module up while being built
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # a syntax error, or a stray sys.exit() at import time
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise PolicyError(f"importing {path.name} raised {type(exc).__name__}: {exc}") from None
    return module
