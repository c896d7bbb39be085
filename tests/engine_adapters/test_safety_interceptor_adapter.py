"""kata/engine/adapters/safety_interceptor.py: a learner's level-1 gateway and level-3 tenant cache
in front of the engine. The reference solution, plugged in, cancels exactly the flagged requests
with their KV freed at once, never sends a first token before its verdict, and shows the prefix
cache's timing side channel with a shared cache and its absence with salted keys; a cache that
ignores the tenant is reported as a leak; an unfinished file fails with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kata.engine.adapters import PolicyError
from kata.engine.adapters import safety_interceptor as si
from kata.engine.config import CacheConfig, EngineConfig, ModelConfig, SchedulerConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.workloads import Request, make_workload

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "safety-interceptor.py"
STUB = ROOT / "katas" / "safety-interceptor" / "safety_interceptor.py"


def config(**scheduler) -> EngineConfig:
    return EngineConfig(model=ModelConfig(max_model_len=1024),
                        cache=CacheConfig(block_size=16, num_blocks=512, num_host_blocks=0),
                        scheduler=SchedulerConfig(max_num_seqs=16, max_num_batched_tokens=64, **scheduler),
                        compute=False, hardware="A10G")


def test_the_reference_gateway_cancels_exactly_the_flagged_requests():
    trace = make_workload("chat", 30, seed=1, rate=40.0, max_model_len=1024, with_token_ids=True)
    run = si.intercept(config(), trace, SOLUTION, seed=4)
    verdicts = si.classify(si.with_tenants(trace), 4)
    flagged = [rid for rid, (_, f) in verdicts.items() if f]
    assert flagged and run.refused == len(flagged)
    assert len(run.ttft_with) + run.refused == len(run.ttft_without) == 30
    assert run.blocks_freed >= 0  # (a request refused while still queued held none)
    # the first token never leaves before the verdict: every served TTFT is at least its latency
    assert min(run.ttft_with) >= si.CLASSIFY_MS[0] / 1000
    p = run.probe
    assert p["shared_hit"] < p["shared_miss"]  # the channel: a hit is visibly faster
    assert p["salted_hit"] == p["salted_miss"]  # salted keys: nothing to see
    assert p["your_cache_hits"] == 0


def test_a_verdict_during_prefill_cancels_it_and_frees_its_blocks_at_once():
    """A 600-token prompt prefilled 64 tokens a step: refused after its first step, it is cut
    mid-prefill, and the blocks it held (its whole prompt's, allocated at admission) are back in
    the pool at that step, not at the end of the run."""
    trace = [Request("long", 0.0, 600, 8, tuple(i % 250 + 1 for i in range(600)), cache_salt="acme"),
             Request("short", 0.0, 20, 8, tuple(range(200, 220)), cache_salt="beta")]
    verdicts = {"long": (3, True), "short": (0, False)}
    run = si.run_intercepted(lambda: LLMEngine(config()), trace, verdicts, {"long": 0.003})
    assert run.refused == run.cancelled_mid_prefill == 1
    assert 0 < run.wasted_prefill_tokens < 600
    assert run.blocks_freed == -(-600 // 16)
    assert len(run.ttft_with) == 1


def test_a_cache_that_ignores_the_tenant_is_reported_as_a_leak(tmp_path):
    leaky = tmp_path / "safety_interceptor.py"
    leaky.write_text(SOLUTION.read_text() + "\n\n_Honest = TenantPrefixCache\n\n\nclass TenantPrefixCache(_Honest):\n"
                     "    def admit(self, tenant, tokens):\n        return super().admit('acme', tokens)\n")
    probe = si.side_channel(lambda: LLMEngine(config()), si.load(leaky), 16)
    assert probe["your_cache_hits"] == si.PROBE_TOKENS // 16


def test_an_unfinished_file_fails_with_one_line():
    trace = make_workload("chat", 4, seed=0, max_model_len=1024, with_token_ids=True)
    with pytest.raises(PolicyError, match="run_gateway is not implemented yet"):
        si.intercept(config(), trace, STUB, seed=0)


def test_a_file_without_the_functions_fails_at_load(tmp_path):
    empty = tmp_path / "safety_interceptor.py"
    empty.write_text("x = 1\n")
    with pytest.raises(PolicyError, match="has no Request, run_gateway, TenantPrefixCache"):
        si.load(empty)


def test_cli_runs_the_interceptor_and_refuses_a_missing_file(tmp_path):
    from typer.testing import CliRunner

    from kata.judges.cli import engine_app

    ok = CliRunner().invoke(engine_app, ["run", "--no-compute", "--num-requests", "20", "--interceptor",
                                         str(SOLUTION), "--json"])
    assert ok.exit_code == 0, ok.output
    figures = json.loads(ok.output)
    assert figures["served"] + figures["refused"] == 20 and figures["your_cache_probe_hits"] == 0
    missing = CliRunner().invoke(engine_app, ["run", "--interceptor", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2 and "no such file" in missing.output and "Traceback" not in missing.output
