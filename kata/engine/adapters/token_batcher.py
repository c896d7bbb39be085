"""Loader for the token-batcher kata: a learner's level-2 batcher as the engine's batcher policy.

    policy = load("workspace/token_batcher.py")
    LLMEngine(config, batcher_policy=policy).run(trace)

The kata's level 2, `simulate_continuous(requests, num_blocks, block_size, max_running)`, is a
whole simulation, not a per-step callback. Its admission rule (strict FCFS: the request at the
front of the queue is admitted while its blocks fit and a slot is free; the first one that does
not fit stops admission) is what the engine asks a BatcherPolicy for, once per step (see
kata/engine/policy.py). So each step the adapter poses the learner's function a one-step
question whose step-0 answer is the decision:

* the waiting requests at the front of the engine's queue, as many as there are free sequence
  slots (no more can be admitted in one step), arrive at step 0 in queue order;
* an **occupier** request, first in the list, takes the blocks that are not free right now, so
  the learner sees exactly `budget.num_free_blocks` free blocks (the pool it simulates is large
  enough that no waiting request is ever rejected as too big for it);
* `max_running` is the number of free sequence slots (plus one for the occupier).

The requests admitted in the learner's step 0, occupier left out, are the answer, in order.

Token counts. The engine allocates a waiting sequence `num_tokens` slots (prompt + any output it
produced before a preemption: a recompute replays them); the kata's admission counts the prefill
plus the slot of the token it produces. The adapter hands the learner a request of
`num_tokens - 1` prompt tokens and 1 output token, so the learner's block count is the engine's,
and the learner's rule alone decides. Every request is given at most one output token: only the
admission decision matters, and the learner's simulation then finishes in a few steps.

Left out: levels 3 and 4 (deadlines and chunk sizes are the engine's own here; its trace has no
time-to-first-token deadlines).
"""

from __future__ import annotations

from pathlib import Path

from kata.engine.arith import cdiv
from kata.engine.adapters import import_learner_module
from kata.engine.policy import PolicyError, RequestView, StepBudget

MODULE_NAME = "token_batcher_plugin"  # the learner's file is imported under this name
OCCUPIER = "(blocks in use)"  # the id of the stand-in for blocks that are not free


class LearnerBatcherPolicy:
    """The engine's BatcherPolicy (admit) backed by a learner's token-batcher module."""

    def __init__(self, module, path: Path) -> None:
        self.module = module
        self.name = f"token-batcher: {path.name}"

    # --- translation ---------------------------------------------------------------------

    def request(self, view: RequestView):
        """The kata's Request for a waiting engine request (see the module docstring).

        Example: RequestView(seq_id=3, num_prompt_tokens=10, num_output_tokens=2, ...) ->
        Request("3", 0, 11, 1): 12 slots, like the engine's allocation.
        """
        num_tokens = view.num_prompt_tokens + view.num_output_tokens
        if num_tokens >= 2:
            return self.module.Request(str(view.seq_id), 0, num_tokens - 1, 1)
        return self.module.Request(str(view.seq_id), 0, 1, 0)

    def call(self, name: str, *args):
        """Call the learner's function; anything it raises becomes a PolicyError naming it."""
        try:
            return getattr(self.module, name)(*args)
        except NotImplementedError:
            raise PolicyError(f"{name}() is not implemented yet in {self.name.split(': ')[1]} "
                              "(level 2 of the token-batcher kata)") from None
        except PolicyError:
            raise
        except Exception as exc:
            raise PolicyError(f"{name}() raised {type(exc).__name__}: {exc}") from exc

    # --- the BatcherPolicy protocol ------------------------------------------------------

    def admit(self, waiting: list[RequestView], budget: StepBudget) -> list[int]:
        if not waiting or budget.num_free_seqs <= 0:
            return []
        bs = budget.block_size
        waiting = waiting[:budget.num_free_seqs]
        requests = [self.request(v) for v in waiting]
        # the learner's pool: the free blocks, plus as many held by the occupier as the largest
        # waiting request needs, so that none is rejected as larger than the cache
        held = max(cdiv(r.prompt_tokens + r.output_tokens, bs) for r in requests)
        occupier = self.module.Request(OCCUPIER, 0, held * bs, 0)
        result = self.call("simulate_continuous", [occupier] + requests,
                           budget.num_free_blocks + held, bs, budget.num_free_seqs + 1)
        steps = getattr(result, "steps", None)
        if not steps or getattr(steps[0], "step", None) != 0:
            raise PolicyError("simulate_continuous returned no step-0 record for requests that "
                              "all arrive at step 0")
        by_id = {str(v.seq_id): v.seq_id for v in waiting}
        chosen = []
        for rid in steps[0].admitted:
            if rid == OCCUPIER:
                continue
            if rid not in by_id:
                raise PolicyError(f"simulate_continuous admitted {rid!r} at step 0, which is not "
                                  "one of the requests it was given")
            chosen.append(by_id[rid])
        return chosen


def _import(path: Path):
    return import_learner_module(path, MODULE_NAME, "token-batcher")


def load(path: str | Path) -> LearnerBatcherPolicy:
    """Import the learner's token_batcher.py and wrap its level-2 batcher for the engine.

    Raises PolicyError (one line, saying what to do) when the file is missing, does not import,
    lacks Request / simulate_continuous, or has not implemented it yet.
    """
    path = Path(path)
    module = _import(path)
    missing = [name for name in ("Request", "simulate_continuous")
               if not callable(getattr(module, name, None))]
    if missing:
        raise PolicyError(f"{path.name} has no {', '.join(missing)}: the engine plugs in the "
                          "kata's level-2 simulate_continuous")
    policy = LearnerBatcherPolicy(module, path)
    # a quick trial, so that an unfinished file fails now with a clear message rather than in
    # the middle of a run
    trial = [RequestView(0, "a", 0.0, 0, 8, 0, 8, 0, 0), RequestView(1, "b", 0.0, 0, 8, 0, 8, 0, 0)]
    policy.admit(trial, StepBudget(0, 64, 2, 4, 4))
    return policy


__all__ = ["load", "LearnerBatcherPolicy"]
