"""Weight precision, GPU links and prices, p99.9 and SLOs, serving plans and their judge."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kata.engine.config import MODEL_PRESETS, EngineConfig, weight_bytes
from kata.engine.cost_model import HARDWARE, CostModel, num_blocks_that_fit
from kata.engine.design import LEVELS, judge
from kata.engine.metrics import Slo, latencies, percentile
from kata.engine.parallel import INTERCONNECTS
from kata.engine.serving import Deployment, MemoryMath, memory_math

LLAMA_8B, LLAMA_70B = MODEL_PRESETS["llama-3-8b"], MODEL_PRESETS["llama-3-70b"]
PLAN = dict(max_num_seqs=256, max_num_batched_tokens=2048, enable_chunked_prefill=True,
            block_size=16, preemption_mode="recompute", router="least-outstanding-tokens")


def test_four_bit_weights_quarter_the_weight_bytes_exactly():
    for model in (LLAMA_8B, LLAMA_70B):
        assert model.num_params % 2 == 0
        assert weight_bytes(model, 4) * 4 == weight_bytes(model, 16) == model.num_params * 2
        assert weight_bytes(model, 8) * 2 == weight_bytes(model, 16)


def test_weight_bytes_rounds_up_and_rejects_other_precisions():
    from dataclasses import replace

    assert weight_bytes(replace(MODEL_PRESETS["tiny"]), 4) == -(-MODEL_PRESETS["tiny"].num_params // 2)
    for bad in (12, True, 16.0):
        with pytest.raises(ValueError, match="weight_bits"):
            weight_bytes(LLAMA_8B, bad)
    with pytest.raises(ValueError, match="weight_bits"):
        EngineConfig(weight_bits=2)


def test_four_bit_weights_move_a_quarter_of_the_weight_bytes_per_step():
    sixteen = CostModel(HARDWARE["H100"], LLAMA_8B)
    four = CostModel(HARDWARE["H100"], LLAMA_8B, weight_bits=4)
    assert four.weight_bytes * 4 == sixteen.weight_bytes


def test_the_a10g_has_pcie_and_every_gpu_a_price():
    assert HARDWARE["A10G"].gpu_link == "pcie" and INTERCONNECTS["pcie"].bandwidth < INTERCONNECTS["nvlink"].bandwidth
    assert all(h.gpu_link in INTERCONNECTS and h.price_per_hour > 0 for h in HARDWARE.values())


def test_num_blocks_that_fit_is_exact_and_knows_precision():
    # the H100's memory as the driver reports it: 81,559 MiB
    assert num_blocks_that_fit(HARDWARE["H100"], LLAMA_8B, 16) == 29043
    assert 29043 == (85_520_809_984 * 9 // 10 - 16060522496) // (16 * 131072)
    four = num_blocks_that_fit(HARDWARE["A10G"], LLAMA_70B, 16, tp_size=2, weight_bits=4)
    assert four == (48_000_000_000 * 9 // 10 - 35276853248) // (16 * 327680) == 1511


# --- percentiles and SLOs ----------------------------------------------------------------------


def test_p999_on_a_known_list():
    assert percentile(range(1, 1001), 99.9) == pytest.approx(999.001)
    assert percentile([10, 20, 30, 40], 99.9) == pytest.approx(39.97)
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([7.0], 99.9) == 7.0
    assert percentile([], 99.9) != percentile([], 99.9)  # NaN
    with pytest.raises(ValueError, match="q"):
        percentile([1], 101)


def seq(arrival, first, finish, n, rid="r"):
    return SimpleNamespace(arrival_time=arrival, first_token_time=first, finish_time=finish,
                           num_output_tokens=n, request_id=rid)


def test_slo_met_goodput_and_held():
    seqs = [seq(0, 0.5, 1.5, 11), seq(0, 2.5, 3.0, 2), seq(1, 1.2, 1.2, 1)]
    slo = Slo(99.0, ttft_s=2.0, tpot_s=0.1)
    assert [slo.met_by(s) for s in seqs] == [True, False, True]  # TPOT 0.1 is within 0.1
    assert slo.goodput(seqs, 2.0) == 1.0
    assert latencies(seqs, "tpot") == [0.1, 0.5]  # a one-token request has no TPOT
    assert not slo.held_by(seqs) and Slo(50.0, ttft_s=2.0).held_by(seqs)
    with pytest.raises(ValueError, match="percentile"):
        Slo(0)
    with pytest.raises(ValueError, match="e2e_s"):
        Slo(99.0, e2e_s=0)


# --- plans -----------------------------------------------------------------------------------------


def test_memory_math_matches_the_prompt():
    dep = Deployment("llama-3-8b", "H100", 16, 1, 2, **PLAN)
    # the prompt's example with the engine's H100 (85,520,809,984 bytes, not the prompt's 80e9)
    assert memory_math(dep, 2560) == MemoryMath(16060522496, 131072, 29043, 181)
    a10g = Deployment("llama-3-70b", "A10G", 8, 2, 1, **PLAN)
    with pytest.raises(ValueError, match="^memory"):
        memory_math(a10g, 1536)


@pytest.mark.parametrize("change, field", [
    (dict(tensor_parallel_size=3), "tensor_parallel_size"), (dict(replicas=0), "replicas"),
    (dict(weight_bits=6), "weight_bits"), (dict(router="random"), "router"),
    (dict(hardware="B200"), "hardware"), (dict(enable_chunked_prefill=1), "enable_chunked_prefill"),
    (dict(max_num_seqs=True), "max_num_seqs"), (dict(max_num_batched_tokens=100), "max_num_batched_tokens"),
])
def test_deployment_names_the_bad_field(change, field):
    values = dict(model="llama-3-8b", hardware="H100", weight_bits=16, tensor_parallel_size=1,
                  replicas=1, **PLAN)
    with pytest.raises(ValueError, match=f"^{field}"):
        Deployment(**{**values, **change})


def test_judge_stops_at_the_first_failing_gate():
    bad = SimpleNamespace(**dict(model="llama-3-8b", hardware="A10G", weight_bits=16,
                                 tensor_parallel_size=1, replicas=1, **PLAN))
    j = judge(bad, 1)
    assert [(c.name, c.passed) for c in j.checks] == [("plan", True), ("constraints", False)]
    assert j.report is None and not j.passed
    missing = SimpleNamespace(model="llama-3-8b")
    assert judge(missing, 1).checks[0].detail.startswith("hardware")


def test_judge_runs_a_plan_and_prices_it_against_the_reference():
    plan = SimpleNamespace(model="llama-3-70b", hardware="A10G", weight_bits=8,
                           tensor_parallel_size=4, replicas=1, **PLAN,
                           memory=MemoryMath(70553706496, 327680, 3022, 31))
    double = SimpleNamespace(**{**vars(plan), "replicas": 2})
    j = judge(double, 3, reference=plan)
    assert [c.name for c in j.checks] == ["plan", "constraints", "memory fits",
                                          "memory arithmetic", "SLO", "cost"]
    assert j.check("SLO").passed and not j.check("cost").passed  # twice the GPUs, same users
    assert j.report.cost > 1.9 * j.reference.cost


def test_every_level_states_its_inputs_as_plain_data():
    for lv in LEVELS.values():
        w, c = lv.workload(), lv.constraints()
        assert w["model"]["name"] == lv.model and set(c["hardware"]) == set(lv.hardware)
        assert lv.max_seq_len == w["prompt_tokens"]["max"] + w["output_tokens"]["max"]
