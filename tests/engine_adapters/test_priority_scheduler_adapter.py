"""kata/engine/adapters/priority_scheduler.py: a learner's level-2 policy as the engine's scheduler policy.

The reference solution of the kata, loaded through the adapter, must order the queue and pick
victims exactly like the engine's built-in PriorityPolicy, and so give the same run; unfinished or
broken files must fail at load time with a one-line PolicyError.
"""

from pathlib import Path

import pytest

from kata.engine.adapters import PolicyError, PriorityPolicy, RequestView, SchedulerPolicy, check_policy
from kata.engine.adapters.priority_scheduler import load
from kata.engine.config import CacheConfig, EngineConfig, SchedulerConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.workloads import make_workload

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "priority-scheduler.py"
STUB = ROOT / "katas" / "priority-scheduler" / "priority_scheduler.py"


def view(seq_id, arrival, priority, max_tokens=16):
    return RequestView(seq_id, f"r{seq_id}", arrival, priority, 8, 0, max_tokens, 0, 0)


VIEWS = [
    view(0, 0.0, 2), view(1, 0.5, 0), view(2, 0.5, 1), view(3, 0.25, 1),
    view(4, 0.25, 1), view(5, 1.0, 0), view(6, 0.0, 2), view(7, 0.125, 0),
]


def write_module(tmp_path, body):
    """A learner file: the kata's Request plus the given functions."""
    path = tmp_path / "priority_scheduler.py"
    path.write_text(
        "from dataclasses import dataclass\n\n"
        "@dataclass(frozen=True, slots=True)\n"
        "class Request:\n    id: int\n    arrival: int\n    priority: int\n    duration: int\n\n"
        + body
    )
    return path


# --- the reference solution through the adapter -----------------------------------------


def test_reference_is_a_scheduler_policy():
    policy = load(SOLUTION)
    assert isinstance(policy, SchedulerPolicy)
    assert check_policy(policy, kind="scheduler") is policy


def test_queue_order_matches_priority_policy():
    policy, ref = load(SOLUTION), PriorityPolicy()
    got = [v.seq_id for v in sorted(VIEWS, key=policy.key)]
    expected = [v.seq_id for v in sorted(VIEWS, key=ref.key)]
    assert got == expected, f"Sorted {len(VIEWS)} requests by the adapter's key: {got}, expected {expected}."


def test_victim_matches_priority_policy():
    policy, ref = load(SOLUTION), PriorityPolicy()
    for running in (VIEWS, VIEWS[1:3], VIEWS[3:5], [VIEWS[1], VIEWS[5], VIEWS[7]], VIEWS[:1]):
        got, expected = policy.pick_victim(running), ref.pick_victim(running)
        ids = [v.seq_id for v in running]
        assert got == expected, f"Called pick_victim(running {ids}). Returned {got}, expected {expected}."


def test_victim_when_everything_runs_at_priority_zero():
    policy = load(SOLUTION)
    running = [view(1, 0.5, 0), view(2, 0.75, 0), view(3, 0.1, 0)]
    assert policy.pick_victim(running) == 2


def test_engine_run_matches_the_builtin_priority_policy():
    def run(policy):
        config = EngineConfig(compute=False, cache=CacheConfig(num_blocks=256),
                              scheduler=SchedulerConfig(policy="priority", max_num_seqs=16))
        trace = make_workload("bursty", 60, seed=3, with_token_ids=False)
        result = LLMEngine(config, scheduler_policy=policy).run(trace)
        return result, sorted((o.request_id, o.e2e_latency, o.num_preemptions) for o in result.outputs)

    builtin, expected = run(None)
    plugged, got = run(load(SOLUTION))
    assert builtin.metrics.num_preemptions > 0, "the trace should make the engine preempt"
    assert got == expected, "The run with the plugged-in reference policy differs from the built-in priority policy."


# --- the learner's order is the one followed ------------------------------------------------


def test_learner_order_is_followed(tmp_path):
    path = write_module(tmp_path, (
        "def pick_next(waiting):\n"
        "    return max(waiting, key=lambda r: (r.priority, r.arrival, r.id))  # least urgent first\n\n"
        "def pick_victim(running, incoming):\n"
        "    return min(running, key=lambda r: (r.priority, r.arrival, r.id))\n"
    ))
    policy = load(path)
    got = [v.seq_id for v in sorted(VIEWS, key=policy.key)]
    expected = [v.seq_id for v in sorted(VIEWS, key=PriorityPolicy().key)][::-1]
    assert got == expected
    assert policy.pick_victim(VIEWS) == 7  # its own (odd) choice: the most urgent


# --- failures are one-line PolicyErrors, at load time ---------------------------------------


def test_unfinished_stub_fails_at_load():
    with pytest.raises(PolicyError, match="not implemented yet"):
        load(STUB)


def test_missing_file(tmp_path):
    with pytest.raises(PolicyError, match="no such file"):
        load(tmp_path / "priority_scheduler.py")


def test_file_that_does_not_import(tmp_path):
    path = tmp_path / "priority_scheduler.py"
    path.write_text("def pick_next(waiting:\n")
    with pytest.raises(PolicyError, match="SyntaxError"):
        load(path)


def test_missing_functions(tmp_path):
    path = write_module(tmp_path, "def pick_next(waiting):\n    return waiting[0]\n")
    with pytest.raises(PolicyError, match="pick_victim"):
        load(path)


def test_victim_none_is_refused(tmp_path):
    path = write_module(tmp_path, (
        "def pick_next(waiting):\n    return min(waiting, key=lambda r: (r.priority, r.arrival, r.id))\n\n"
        "def pick_victim(running, incoming):\n    return None\n"
    ))
    with pytest.raises(PolicyError, match="returned None"):
        load(path)


def test_pick_next_returning_a_stranger_is_refused(tmp_path):
    path = write_module(tmp_path, (
        "def pick_next(waiting):\n    return Request(99, 0, 0, 0)\n\n"
        "def pick_victim(running, incoming):\n    return running[0]\n"
    ))
    with pytest.raises(PolicyError, match="neither of them"):
        load(path)


def test_exception_in_learner_code_names_the_function(tmp_path):
    path = write_module(tmp_path, (
        "def pick_next(waiting):\n    return min(waiting, key=lambda r: (r.priority, r.arrival, r.id))\n\n"
        "def pick_victim(running, incoming):\n    raise KeyError('oops')\n"
    ))
    with pytest.raises(PolicyError, match="pick_victim.*KeyError"):
        load(path)
