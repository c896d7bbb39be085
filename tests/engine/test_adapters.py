"""The plug-in protocol: a learner's policy object drives the engine's choices."""

from __future__ import annotations

import pytest

from kata.engine.adapters import (FCFSPolicy, PolicyError, PriorityPolicy, RequestView, StepBudget,
                             check_policy)
from kata.engine.llm_engine import LLMEngine
from kata.engine.workloads import Request

from .helpers import tiny_config


class ShortestFirst:
    """A fake scheduler policy: shortest prompt first; preempt the longest prompt."""

    def __init__(self):
        self.victim_calls = 0

    def key(self, r: RequestView):
        return (r.num_prompt_tokens, r.seq_id)

    def pick_victim(self, running: list[RequestView]) -> int:
        self.victim_calls += 1
        return max(running, key=lambda r: (r.num_prompt_tokens, r.seq_id)).seq_id


class OnePerStep:
    """A fake batcher: admit at most one request per step, the last one shown."""

    def __init__(self):
        self.budgets: list[StepBudget] = []

    def admit(self, waiting: list[RequestView], budget: StepBudget) -> list[int]:
        self.budgets.append(budget)
        return [waiting[-1].seq_id]


TRACE = [Request(f"r{i}", 0.0, n, 20) for i, n in enumerate([30, 5, 18, 9])]


def run(**policies):
    engine = LLMEngine(tiny_config(num_blocks=16, max_num_seqs=2, max_model_len=64,
                                   compute=False), **policies)
    engine.run(TRACE)
    return engine


def test_scheduler_policy_orders_the_queue_and_picks_victims():
    policy = ShortestFirst()
    engine = run(scheduler_policy=check_policy(policy, kind="scheduler"))
    firsts = sorted(engine.finished_seqs, key=lambda s: s.first_token_time)
    assert [s.request_id for s in firsts[:2]] == ["r1", "r3"]  # shortest prompts admitted first
    assert policy.victim_calls == engine.scheduler.num_preemptions > 0
    assert len(engine.finished_seqs) == 4


def test_batcher_policy_decides_admission():
    batcher = OnePerStep()
    engine = run(batcher_policy=batcher)
    first = batcher.budgets[0]
    assert first.num_free_seqs == 2 and first.token_budget == 32 and first.block_size == 4
    assert len(engine.finished_seqs) == 4
    assert engine.finished_seqs[0].request_id == "r3"  # it admitted the queue's last first


def test_a_missing_method_falls_back_to_the_reference():
    class KeyOnly:
        def key(self, r):
            return -r.seq_id  # newest first

    engine = run(scheduler_policy=check_policy(KeyOnly(), kind="scheduler"))
    assert engine.finished_seqs[0].request_id == "r3"


def test_bad_policies_are_reported_not_crashed():
    with pytest.raises(PolicyError, match="none of the methods"):
        check_policy(object(), kind="scheduler")

    class BadVictim(ShortestFirst):
        def pick_victim(self, running):
            return 12345

    with pytest.raises(PolicyError, match="pick_victim returned 12345"):
        run(scheduler_policy=BadVictim())

    class BadAdmit:
        def admit(self, waiting, budget):
            return ["nope"]

    with pytest.raises(PolicyError, match="admit returned 'nope'"):
        run(batcher_policy=BadAdmit())

    class Lazy:
        def admit(self, waiting, budget):
            return []

    with pytest.raises(RuntimeError, match="no progress"):
        run(batcher_policy=Lazy())


def test_reference_policies_follow_the_protocol():
    views = [RequestView(i, f"r{i}", float(i), p, 10, 0, 5, 0, 0) for i, p in enumerate([1, 2, 0])]
    assert FCFSPolicy().pick_victim(views) == 2
    assert PriorityPolicy().pick_victim(views) == 1
    assert sorted(views, key=PriorityPolicy().key)[0].seq_id == 2
    assert sorted(views, key=FCFSPolicy().key)[0].seq_id == 0
