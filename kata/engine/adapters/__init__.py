"""Loaders: a learner's kata file turned into a policy the engine's scheduler can ask.

The contract a policy meets (RequestView, StepBudget, SchedulerPolicy, BatcherPolicy,
PolicyError, the reference policies) is the engine's own, in kata/engine/policy.py; it is
re-exported here so a loader, a grader or a test can name it from one place. A loader module per
kata, `token_batcher.py` / `priority_scheduler.py` in this package, exposes
`load(path) -> policy object`, turning the learner's file into an object with the contract's
methods; `safety_interceptor.py` runs a learner's gateway in front of the engine.
"""

from __future__ import annotations

from pathlib import Path

from kata.engine.policy import (WAITING_WINDOW, BatcherPolicy, FCFSPolicy, PolicyError,
                                PriorityPolicy, RequestView, SchedulerPolicy, StepBudget,
                                check_policy)

__all__ = ["RequestView", "StepBudget", "SchedulerPolicy", "BatcherPolicy", "PolicyError",
           "FCFSPolicy", "PriorityPolicy", "check_policy", "WAITING_WINDOW",
           "import_learner_module"]


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
