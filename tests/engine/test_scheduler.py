"""Scheduler: budgets, preemption, policies, static batching; property-checked on random traces."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kata.engine.llm_engine import LLMEngine
from kata.engine.sequence import SequenceStatus
from kata.engine.workloads import Request, make_workload

from .helpers import tiny_config


def step_checked(engine: LLMEngine) -> None:
    """Run to completion, checking every invariant after every step."""
    cfg, bm, sched = engine.config, engine.block_manager, engine.scheduler
    while engine.has_unfinished():
        engine.step()
        bm.check_invariants()
        if hasattr(sched, "check_aggregates"):
            sched.check_aggregates()
        assert len(sched.running) <= cfg.scheduler.max_num_seqs
        assert bm.num_used_blocks <= cfg.cache.num_blocks


requests = st.lists(
    st.builds(lambda t, p, o, pr: (t, p, o, pr), st.floats(0, 2), st.integers(1, 40),
              st.integers(1, 30), st.integers(0, 2)),
    min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(reqs=requests, num_blocks=st.integers(12, 40), chunked=st.booleans(),
       policy=st.sampled_from(["fcfs", "priority"]),
       mode=st.sampled_from(["recompute", "swap"]),
       memory=st.sampled_from(["paged", "reserve"]), budget=st.sampled_from([8, 16, 80]))
def test_random_traces_keep_invariants_and_finish(reqs, num_blocks, chunked, policy, mode,
                                                  memory, budget):
    cfg = tiny_config(num_blocks=num_blocks, max_model_len=44, compute=False,
                      max_num_batched_tokens=max(budget, 44) if not chunked else budget,
                      enable_chunked_prefill=chunked, policy=policy, preemption_mode=mode,
                      num_host_blocks=16 if mode == "swap" else 0, memory=memory)
    engine = LLMEngine(cfg)
    trace = [Request(f"r{i}", t, min(p, 40), o, tuple(range(min(p, 40))), pr)
             for i, (t, p, o, pr) in enumerate(reqs)]
    engine.add_trace(trace)
    step_checked(engine)
    done = engine.finished_seqs
    assert len(done) == len(trace)
    for seq in done:  # each produced exactly what it asked for, after it arrived
        assert seq.status is SequenceStatus.FINISHED
        assert seq.num_output_tokens == seq.max_tokens == min(
            dict((r.request_id, r.output_len) for r in trace)[seq.request_id],
            44 - seq.num_prompt_tokens)
        assert seq.arrival_time <= seq.first_token_time <= seq.finish_time
    assert engine.block_manager.num_free_blocks == num_blocks


@settings(max_examples=40, deadline=None)
@given(reqs=requests, num_blocks=st.integers(12, 40), policy=st.sampled_from(["fcfs", "priority"]),
       mode=st.sampled_from(["recompute", "swap"]), budget=st.sampled_from([8, 16, 80]))
def test_lazy_block_growth_decides_exactly_like_growing_every_step(reqs, num_blocks, policy,
                                                                   mode, budget):
    """The simulation's bulk, owed-block growth vs visiting every decoding sequence each step."""
    trace = [Request(f"r{i}", t, min(p, 40), o, tuple(range(min(p, 40))), pr)
             for i, (t, p, o, pr) in enumerate(reqs)]
    results = []
    for exact in (False, True):
        cfg = tiny_config(num_blocks=num_blocks, max_model_len=44, compute=False, policy=policy,
                          preemption_mode=mode, num_host_blocks=16 if mode == "swap" else 0,
                          max_num_batched_tokens=budget)
        engine = LLMEngine(cfg)
        engine.scheduler.track_decodes = exact
        metrics = json.dumps(engine.run(trace).metrics.to_dict())  # (NaN-safe comparison)
        results.append((metrics, [(s.request_id, s.finish_time) for s in engine.finished_seqs]))
    assert results[0] == results[1]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), mode=st.sampled_from(["recompute", "swap"]))
def test_simulation_matches_computing_exactly(seed, mode):
    """compute=False is the same scheduler and block manager: identical metrics."""
    trace = make_workload("chat", 6, seed=seed, rate=50.0, max_model_len=64)
    trace = [dataclasses.replace(r, output_len=min(r.output_len, 12)) for r in trace]
    results = []
    for compute in (True, False):
        cfg = tiny_config(num_blocks=20, max_model_len=64, compute=compute, preemption_mode=mode,
                          num_host_blocks=32 if mode == "swap" else 0)
        results.append(json.dumps(LLMEngine(cfg).run(trace).metrics.to_dict()))
    assert results[0] == results[1]


def test_token_budget_and_chunked_prefill():
    cfg = tiny_config(max_num_batched_tokens=16, compute=False)
    engine = LLMEngine(cfg)
    engine.add_trace([Request("long", 0.0, 50, 3), Request("short", 0.0, 5, 3)])
    engine._release_arrivals()
    batch = engine.scheduler.schedule()
    assert [n for _, n in batch.prefills] == [16]  # the long prompt takes the whole budget
    engine.scheduler.postprocess(batch, None, 0.1)
    batch = engine.scheduler.schedule()
    assert [(s.request_id, n) for s, n in batch.prefills] == [("long", 16)]
    assert batch.prefill_tokens + batch.num_decode_seqs <= 16


def test_priority_policy_admits_urgent_requests_first():
    cfg = tiny_config(max_num_seqs=1, compute=False, policy="priority")
    engine = LLMEngine(cfg)
    engine.add_trace([Request("first-low", 0.0, 8, 4, priority=2),
                      Request("urgent", 0.0, 8, 4, priority=0),
                      Request("later-low", 0.0, 8, 4, priority=2)])
    engine.run()
    assert [s.request_id for s in engine.finished_seqs] == ["urgent", "first-low", "later-low"]


def test_fcfs_preempts_the_newest_and_requeues_it_at_the_front():
    cfg = tiny_config(num_blocks=12, max_model_len=40, compute=False)
    engine = LLMEngine(cfg)
    engine.add_trace([Request(f"r{i}", 0.0, 4, 30) for i in range(3)])
    step_checked(engine)
    order = [s.request_id for s in engine.finished_seqs]
    assert order == ["r0", "r1", "r2"]
    by_id = {s.request_id: s for s in engine.finished_seqs}
    assert by_id["r0"].num_preemptions == 0 and engine.scheduler.num_preemptions > 0


def test_static_batching_releases_the_batch_together():
    cfg = tiny_config(compute=False, batching="static", num_blocks=64, max_num_seqs=2)
    engine = LLMEngine(cfg)
    engine.add_trace([Request("short", 0.0, 4, 2), Request("long", 0.0, 4, 20),
                      Request("next", 0.0, 4, 2)])
    step_checked(engine)
    t = {s.request_id: s for s in engine.finished_seqs}
    assert t["short"].finish_time == t["long"].finish_time  # released together
    assert t["next"].first_token_time > t["long"].finish_time  # waited for the whole batch


def test_reserve_max_length_wastes_most_of_its_memory():
    trace = make_workload("chat", 30, seed=1, rate=5.0, max_model_len=1024,
                          with_token_ids=False)
    waste = {}
    for memory in ("paged", "reserve"):
        cfg = tiny_config(compute=False, num_blocks=1024, block_size=16, max_model_len=1024,
                          memory=memory, max_num_seqs=16, max_num_batched_tokens=256)
        waste[memory] = LLMEngine(cfg).run(trace).metrics.kv_waste
    assert waste["paged"] < 0.05 and waste["reserve"] > 0.5


@settings(max_examples=30, deadline=None)
@given(reqs=requests, num_blocks=st.integers(12, 40), mode=st.sampled_from(["recompute", "swap"]),
       budget=st.sampled_from([8, 16, 80]))
def test_free_block_count_is_true_after_every_step(reqs, num_blocks, mode, budget):
    """bm.num_free_blocks of the lazy simulation equals, after every step, the recount from the
    block tables of an engine that grows every table every step (and so has nothing owed)."""
    from kata.engine.scheduler import Scheduler

    trace = [Request(f"r{i}", t, min(p, 40), o, tuple(range(min(p, 40))), pr)
             for i, (t, p, o, pr) in enumerate(reqs)]
    cfg = tiny_config(num_blocks=num_blocks, max_model_len=44, compute=False, preemption_mode=mode,
                      num_host_blocks=16 if mode == "swap" else 0, max_num_batched_tokens=budget)
    lazy, exact = LLMEngine(cfg), LLMEngine(cfg)
    exact.scheduler = Scheduler(cfg.scheduler, exact.block_manager, max_model_len=44,
                                track_decodes=True)  # tables exact at every step
    for engine in (lazy, exact):
        engine.add_trace(trace)
    steps = 0
    while lazy.has_unfinished():
        lazy.step(), exact.step()
        steps += 1
        tables = exact.block_manager.block_tables.values()
        recount = num_blocks - len({b for t in tables for b in t})
        assert exact.block_manager.num_reserved_blocks == 0
        assert exact.block_manager.num_free_blocks == recount, steps
        assert lazy.block_manager.num_free_blocks == recount, steps
        assert lazy.scheduler.num_free_blocks == lazy.block_manager.num_free_blocks
    assert not exact.has_unfinished() and lazy.block_manager.num_free_blocks == num_blocks
