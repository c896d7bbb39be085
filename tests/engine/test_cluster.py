"""Replicas behind a router (kata/engine/cluster.py) and closed-loop workloads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kata.engine.cluster import Cluster, LeastOutstandingTokens, RoundRobin, make_router
from kata.engine.config import CacheConfig, EngineConfig, ModelConfig, SchedulerConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.workloads import ClosedLoop, Request, Turn, make_closed_loop, make_workload

CONFIG = EngineConfig(model=ModelConfig(max_model_len=1024), cache=CacheConfig(16, 256),
                      scheduler=SchedulerConfig(max_num_seqs=16, max_num_batched_tokens=512),
                      compute=False, hardware="H100")


# --- routers ---------------------------------------------------------------------------------


@given(n=st.integers(1, 8), loads=st.lists(st.lists(st.integers(0, 10**6), min_size=8, max_size=8),
                                           max_size=60))
@settings(max_examples=60, deadline=None)
def test_round_robin_cycles_and_counts_differ_by_at_most_one(n, loads):
    router = RoundRobin(n)
    picks = [router.choose(load[:n]) for load in loads]
    assert picks == [i % n for i in range(len(loads))]  # whatever the loads
    counts = [picks.count(i) for i in range(n)]
    assert max(counts, default=0) - min(counts, default=0) <= 1


@given(outstanding=st.lists(st.integers(0, 10**9), min_size=1, max_size=16))
@settings(max_examples=100, deadline=None)
def test_least_outstanding_tokens_picks_the_first_minimum(outstanding):
    i = LeastOutstandingTokens(len(outstanding)).choose(outstanding)
    assert outstanding[i] == min(outstanding)
    assert all(outstanding[j] > outstanding[i] for j in range(i))  # ties: the lowest index


def test_make_router_rejects_bad_input():
    with pytest.raises(ValueError, match="router"):
        make_router("random", 2)
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match="replicas"):
            make_router("round-robin", bad)


@given(replicas=st.integers(1, 4), router=st.sampled_from(["round-robin", "least-outstanding-tokens"]),
       seed=st.integers(0, 50))
@settings(max_examples=15, deadline=None)
def test_every_request_is_routed_once_and_finishes(replicas, router, seed):
    trace = make_workload("chat", 30, seed=seed, rate=40.0, max_model_len=1024, with_token_ids=False)
    cluster = Cluster(CONFIG, replicas, router)
    result = cluster.run(trace)
    assert sorted(s.request_id for s in result.seqs) == sorted(r.request_id for r in trace)
    assert len(result.assignments) == len(trace) and set(result.assignments) <= set(range(replicas))
    assert cluster.outstanding == [0] * replicas  # every token accounted back on finish
    for s in result.seqs:  # no request starts before it arrives
        assert s.first_token_time > s.arrival_time


def test_one_replica_is_the_plain_engine():
    trace = make_workload("chat", 60, seed=3, rate=30.0, max_model_len=1024, with_token_ids=False)
    alone = LLMEngine(CONFIG).run(trace).metrics
    cluster = Cluster(CONFIG, 1).run(trace).metrics
    assert (cluster.ttft_p99, cluster.e2e_p999, cluster.makespan_s) == (
        alone.ttft_p99, alone.e2e_p999, alone.makespan_s)


def test_least_outstanding_tokens_avoids_the_loaded_replica():
    # one long request then short ones: round-robin puts every other short one behind it
    trace = [Request("long", 0.0, 900, 100)] + [Request(f"s{i}", 0.01 * (i + 1), 20, 10)
                                                for i in range(6)]
    lot = Cluster(CONFIG, 2, "least-outstanding-tokens").run(trace)
    rr = Cluster(CONFIG, 2, "round-robin").run(trace)
    assert lot.assignments == [0, 1, 1, 1, 1, 1, 1]
    assert rr.assignments == [0, 1, 0, 1, 0, 1, 0]


def test_cluster_needs_compute_off():
    with pytest.raises(ValueError, match="compute=False"):
        Cluster(EngineConfig(), 1)


# --- closed loop -------------------------------------------------------------------------------


def test_closed_loop_is_seeded_and_clipped():
    kwargs = dict(seed=7, prompt_median=300, prompt_max=600, output_median=50, output_max=100)
    a = make_closed_loop(50, 3, **kwargs)
    assert a == make_closed_loop(50, 3, **kwargs) != make_closed_loop(50, 3, **{**kwargs, "seed": 8})
    assert a.num_requests == 150 and a.max_seq_len <= 700
    turns = [t for user in a.users for t in user]
    assert all(2 <= t.num_prompt_tokens <= 600 and 1 <= t.output_len <= 100 for t in turns)


def test_closed_loop_rejects_bad_input():
    for kwargs in (dict(num_users=0, requests_per_user=1), dict(num_users=1, requests_per_user=0),
                   dict(num_users=1, requests_per_user=1, think_time_s=0),
                   dict(num_users=1, requests_per_user=1, prompt_median=4000)):
        with pytest.raises(ValueError):
            make_closed_loop(**kwargs)


def test_a_user_sends_the_next_request_a_think_time_after_the_answer():
    loop = ClosedLoop(((Turn(10, 5, 1.0), Turn(20, 5, 2.5), Turn(30, 5, 0.5)),))
    seqs = {s.request_id: s for s in Cluster(CONFIG, 1).run_closed_loop(loop).seqs}
    assert seqs["u0-0"].arrival_time == 1.0
    assert seqs["u0-1"].arrival_time == seqs["u0-0"].finish_time + 2.5
    assert seqs["u0-2"].arrival_time == seqs["u0-1"].finish_time + 0.5


def test_a_slower_server_slows_a_closed_loop_down():
    loop = make_closed_loop(40, 3, seed=1, prompt_max=512, output_max=256)
    fast = Cluster(CONFIG, 2).run_closed_loop(loop).metrics
    slow = Cluster(EngineConfig(model=CONFIG.model, cache=CONFIG.cache, scheduler=CONFIG.scheduler,
                                compute=False, hardware="A10G"), 1).run_closed_loop(loop).metrics
    assert slow.e2e_p50 > fast.e2e_p50 and slow.makespan_s > fast.makespan_s
