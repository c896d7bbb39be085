"""kata/engine/adapters/token_batcher.py: a learner's level-2 batcher as the engine's batcher policy.

The reference solution of the kata, loaded through the adapter, must admit exactly what the
engine's built-in admission admits (strict FCFS, stop at the first request that does not fit), and
so give the same run; the learner's decision, whatever it is, is the one followed; unfinished or
broken files fail at load time with a one-line PolicyError.
"""

from pathlib import Path

import pytest

from kata.engine.adapters import BatcherPolicy, PolicyError, RequestView, StepBudget, check_policy
from kata.engine.adapters.token_batcher import load
from kata.engine.config import CacheConfig, EngineConfig, SchedulerConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.workloads import make_workload

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "token-batcher.py"
STUB = ROOT / "katas" / "token-batcher" / "token_batcher.py"


def view(seq_id, prompt, generated=0, max_tokens=16):
    return RequestView(seq_id, f"r{seq_id}", 0.0, 0, prompt, generated, max_tokens, 0, 0)


def budget(free_blocks, free_seqs=8, block_size=4, tokens=512):
    return StepBudget(step=0, token_budget=tokens, num_free_seqs=free_seqs,
                      num_free_blocks=free_blocks, block_size=block_size)


def write_module(tmp_path, body):
    """A learner file: the kata's Request plus the given functions."""
    path = tmp_path / "token_batcher.py"
    path.write_text(
        "from dataclasses import dataclass\nfrom types import SimpleNamespace\n\n"
        "@dataclass(frozen=True)\n"
        "class Request:\n    id: str\n    arrival: int\n    prompt_tokens: int\n"
        "    output_tokens: int\n    ttft_deadline: int | None = None\n\n"
        + body
    )
    return path


# --- the reference solution through the adapter -----------------------------------------


def test_reference_is_a_batcher_policy():
    policy = load(SOLUTION)
    assert isinstance(policy, BatcherPolicy)
    assert check_policy(policy, kind="batcher") is policy


def test_admits_in_order_and_stops_at_first_misfit():
    policy = load(SOLUTION)
    # blocks of 4 slots: 8 tokens -> 2 blocks, 13 -> 4, 3 -> 1
    waiting = [view(5, 8), view(2, 13), view(7, 3)]
    got = policy.admit(waiting, budget(free_blocks=5))
    assert got == [5], f"Called admit(sizes 8, 13, 3 tokens; 5 free blocks of 4). Returned {got}, expected [5]: 13 tokens need 4 blocks, 3 are left, and the head blocks the rest."
    got = policy.admit(waiting, budget(free_blocks=7))
    assert got == [5, 2, 7], f"Called admit(sizes 8, 13, 3; 7 free blocks). Returned {got}, expected [5, 2, 7]."


def test_block_count_matches_the_engine_allocation():
    policy = load(SOLUTION)
    # 8 tokens fill exactly 2 blocks: the engine allocates 2, so the learner must ask for 2
    got = policy.admit([view(1, 8)], budget(free_blocks=2))
    assert got == [1], f"Called admit(8 tokens, 2 free blocks of 4). Returned {got}, expected [1]."
    got = policy.admit([view(1, 9)], budget(free_blocks=2))
    assert got == [], f"Called admit(9 tokens, 2 free blocks of 4). Returned {got}, expected []."


def test_preempted_request_needs_its_generated_tokens():
    policy = load(SOLUTION)
    got = policy.admit([view(3, 6, generated=3)], budget(free_blocks=2))  # 9 tokens: 3 blocks
    assert got == [], f"Called admit(prompt 6 + 3 generated, 2 free blocks). Returned {got}, expected []."
    got = policy.admit([view(3, 6, generated=3)], budget(free_blocks=3))
    assert got == [3]


def test_free_sequence_slots_cap_admission():
    policy = load(SOLUTION)
    waiting = [view(i, 2) for i in range(6)]
    got = policy.admit(waiting, budget(free_blocks=100, free_seqs=2))
    assert got == [0, 1], f"Called admit(6 small requests, 2 free slots). Returned {got}, expected [0, 1]."
    assert policy.admit(waiting, budget(free_blocks=100, free_seqs=0)) == []
    assert policy.admit([], budget(free_blocks=100)) == []


def test_no_free_blocks_admits_nothing():
    policy = load(SOLUTION)
    assert policy.admit([view(0, 1), view(1, 1)], budget(free_blocks=0)) == []


def test_engine_run_matches_the_builtin_admission():
    def run(policy):
        config = EngineConfig(compute=False,
                              cache=CacheConfig(num_blocks=320, enable_prefix_caching=False),
                              scheduler=SchedulerConfig(max_num_seqs=16))
        trace = make_workload("bursty", 60, seed=3, with_token_ids=False)
        result = LLMEngine(config, batcher_policy=policy).run(trace)
        return result, sorted((o.request_id, o.e2e_latency, o.num_preemptions) for o in result.outputs)

    builtin, expected = run(None)
    plugged, got = run(load(SOLUTION))
    assert builtin.metrics.num_preemptions > 0, "the trace should make the engine preempt"
    assert got == expected, "The run with the plugged-in reference batcher differs from the built-in admission."


# --- the learner's decision is the one followed ---------------------------------------------


def test_learner_decision_is_followed(tmp_path):
    # a (wrong) batcher that admits everything but the occupier, last given first
    path = write_module(tmp_path, (
        "def simulate_continuous(requests, num_blocks, block_size, max_running):\n"
        "    ids = [r.id for r in requests][1:][::-1]\n"
        "    return SimpleNamespace(steps=[SimpleNamespace(step=0, admitted=ids)])\n"
    ))
    policy = load(path)
    got = policy.admit([view(4, 2), view(9, 2), view(1, 2)], budget(free_blocks=100))
    assert got == [1, 9, 4], f"Called admit through a learner that reverses the queue. Returned {got}, expected [1, 9, 4]."


def test_learner_sees_the_free_blocks_and_slots(tmp_path):
    path = write_module(tmp_path, (
        "SEEN = []\n\n"
        "def simulate_continuous(requests, num_blocks, block_size, max_running):\n"
        "    SEEN.append((requests[0].prompt_tokens, num_blocks, block_size, max_running,\n"
        "                 [(r.prompt_tokens, r.output_tokens) for r in requests[1:]]))\n"
        "    return SimpleNamespace(steps=[SimpleNamespace(step=0, admitted=[requests[0].id])])\n"
    ))
    policy = load(path)
    policy.module.SEEN.clear()
    assert policy.admit([view(0, 10, generated=2), view(1, 1)], budget(free_blocks=5, free_seqs=3)) == []
    occupier_tokens, num_blocks, block_size, max_running, others = policy.module.SEEN[-1]
    # 12 tokens -> (11 prompt, 1 output) = 3 blocks: the occupier holds 3, the pool is 5 + 3
    assert (occupier_tokens, num_blocks, block_size, max_running) == (12, 8, 4, 4)
    assert others == [(11, 1), (1, 0)]


# --- failures are one-line PolicyErrors, at load time ---------------------------------------


def test_unfinished_stub_fails_at_load():
    with pytest.raises(PolicyError, match="not implemented yet"):
        load(STUB)


def test_missing_file(tmp_path):
    with pytest.raises(PolicyError, match="no such file"):
        load(tmp_path / "token_batcher.py")


def test_file_that_does_not_import(tmp_path):
    path = tmp_path / "token_batcher.py"
    path.write_text("def simulate_continuous(requests:\n")
    with pytest.raises(PolicyError, match="SyntaxError"):
        load(path)


def test_missing_function(tmp_path):
    path = write_module(tmp_path, "def plan_batches(requests, a, b, c):\n    return None\n")
    with pytest.raises(PolicyError, match="simulate_continuous"):
        load(path)


def test_admitting_a_stranger_is_refused(tmp_path):
    path = write_module(tmp_path, (
        "def simulate_continuous(requests, num_blocks, block_size, max_running):\n"
        "    return SimpleNamespace(steps=[SimpleNamespace(step=0, admitted=['nobody'])])\n"
    ))
    with pytest.raises(PolicyError, match="not one of the requests"):
        load(path)


def test_no_step_zero_is_refused(tmp_path):
    path = write_module(tmp_path, (
        "def simulate_continuous(requests, num_blocks, block_size, max_running):\n"
        "    return SimpleNamespace(steps=[])\n"
    ))
    with pytest.raises(PolicyError, match="no step-0 record"):
        load(path)


def test_exception_in_learner_code_names_the_function(tmp_path):
    path = write_module(tmp_path, (
        "def simulate_continuous(requests, num_blocks, block_size, max_running):\n"
        "    raise KeyError('oops')\n"
    ))
    with pytest.raises(PolicyError, match="simulate_continuous.*KeyError"):
        load(path)


# --- the stress traces of `kata engine run`: where a wrong batcher shows ---------------------


def run_json(batcher: Path) -> dict:
    import json

    from typer.testing import CliRunner

    from kata.judges.cli import engine_app

    result = CliRunner().invoke(engine_app, ["run", "--no-compute", "--batcher", str(batcher), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


STRESS_ROWS = ("num_preemptions", "ttft_p99", "ttft_slo_violations", "kv_utilization_mean")


def test_a_wrong_batcher_shows_under_memory_pressure_but_not_on_the_default_trace(tmp_path):
    """The default trace leaves the pool half empty: a batcher that admits past a blocked head
    (a bug of the kata's zoo) gives the reference's rows there. The stress traces tell them apart;
    the reference solution plugged in gives the reference's rows everywhere."""
    from kata.catalog import Workbook
    from kata.zoo import ZooPatch

    kata = Workbook.find().kata("token-batcher")
    wrong = tmp_path / "token_batcher.py"
    wrong.write_text(ZooPatch.parse(kata.bugs / "admission_skips_blocked_head.patch")
                     .apply(SOLUTION.read_text()))
    bad, good = run_json(wrong), run_json(SOLUTION)
    stress = [k for k in bad if k not in ("reference", "yours")]
    assert [k.split(":")[0] for k in stress] == ["memory pressure", "burst"]
    assert bad["yours"]["num_preemptions"] == bad["reference"]["num_preemptions"] == 0
    for title in stress:
        ref, yours = bad[title]["reference"], bad[title]["yours"]
        assert ref["num_preemptions"] > 0, title  # the trace does put the pool under pressure
        assert [yours[k] for k in STRESS_ROWS] != [ref[k] for k in STRESS_ROWS], title
        assert good[title]["yours"] == good[title]["reference"], title
