"""`kata engine run` / `compare` through typer's CliRunner (the sub-app, mounted as `engine`)."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

pytest.importorskip("typer", reason="typer is not installed")  # (a bare venv may lack it)
from typer.testing import CliRunner  # noqa: E402

from kata.judges.cli import engine_app, kv_chart  # noqa: E402

runner = CliRunner()
FAST = ["--no-compute", "--num-requests", "40", "--rate", "10"]


def invoke(*args):
    return runner.invoke(engine_app, list(args))


def test_importing_the_cli_loads_neither_numpy_nor_rich():
    # engine.report (tables, charts; with engine.arith) and judges.cli_support (argument checks)
    # import only the standard library and typer at top level
    code = ("import sys, kata.judges.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'rich', 'torch')"
            " or m.startswith('kata.engine.') and m not in ('kata.engine.report', 'kata.engine.arith')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_clis_choice_lists_mirror_the_engine():
    """kata.judges.cli spells its choices out (importing the engine would slow `kata --help`)."""
    from kata.engine.hardware import HARDWARE
    from kata.engine.parallel import INTERCONNECTS
    from kata.engine.policy import POLICIES
    from kata.engine.workloads import WORKLOADS
    from kata.judges import cli

    assert cli.HARDWARE == tuple(HARDWARE) and cli.INTERCONNECTS == tuple(INTERCONNECTS)
    assert cli.WORKLOADS == tuple(WORKLOADS) and cli.POLICIES == tuple(POLICIES)
    from kata.engine.config import DTYPES, MODEL_PRESETS

    assert set(cli.MODELS) <= set(MODEL_PRESETS) and set(cli.DTYPES) <= set(DTYPES)


def test_run_prints_metrics_and_a_kv_chart():
    result = invoke("run", *FAST, "--hardware", "H100")
    assert result.exit_code == 0, result.output
    for text in ("TTFT p50", "output tokens/s", "KV blocks in use over time", "preemptions",
                 "KV waste"):
        assert text in result.output


def test_run_computes_the_tiny_model_and_prints_json():
    result = invoke("run", "--num-requests", "3", "--max-tokens", "4", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["reference"]["num_requests"] == 3


def test_run_shows_prefix_cache_hits_on_the_shared_prefix_trace():
    result = invoke("run", *FAST, "--workload", "shared-prefix", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["reference"]["prefix_cache_hit_rate"] > 0.5


def test_tp_over_a_network_hop_loses_most_of_the_nvlink_speedup():
    tpot = {}
    for args in ((), ("--tp", "8"), ("--tp", "8", "--interconnect", "network")):
        result = invoke("run", *FAST, "--hardware", "H100", "--json", *args)
        assert result.exit_code == 0, result.output
        tpot[args] = json.loads(result.output)["reference"]["tpot_p50"]
    one, nvlink, network = tpot.values()
    assert nvlink < one / 3 and network > 3 * nvlink
    result = invoke("run", *FAST, "--hardware", "H100", "--tp", "8")
    assert "8x H100 over nvlink" in result.output


def test_a_real_shape_is_charged_for_itself_when_only_simulated():
    """--model llama-3.2-1b --no-compute: the cost model charges the 1B shape, not llama-3-8b."""
    tpot = {}
    for model in ("tiny", "llama-3.2-1b"):
        result = invoke("run", *FAST, "--model", model, "--json")
        assert result.exit_code == 0, result.output
        tpot[model] = json.loads(result.output)["reference"]["tpot_p50"]
    assert tpot["llama-3.2-1b"] < tpot["tiny"] / 3  # 1.5e9 parameters to read, not 8e9


def test_compare_shows_the_three_systems_side_by_side():
    result = invoke("compare", "--num-requests", "60", "--json")
    assert result.exit_code == 0, result.output
    m = json.loads(result.output)
    paged, static = m["continuous, paged"], m["static batching"]
    reserve = m["continuous, reserve max len"]
    assert paged["output_tokens_per_s"] > static["output_tokens_per_s"]
    assert paged["kv_waste"] < reserve["kv_waste"]
    text = invoke("compare", "--num-requests", "30")
    assert text.exit_code == 0 and "the output throughput of static batching" in text.output


def one_error(output: str) -> bool:
    """One `error:` line, wrapped at spaces (continuations indented) where the screen is narrow."""
    first, *rest = output.strip().splitlines()
    return first.startswith("error: ") and all(line.startswith("       ") for line in rest)


@pytest.mark.parametrize("args, message", [
    (["run", "--workload", "nope"], "unknown workload 'nope'"),
    (["run", "--hardware", "B200"], "unknown hardware profile 'B200'"),
    (["run", "--policy", "lifo"], "unknown policy 'lifo'"),
    (["run", "--num-blocks", "0"], "--num-blocks must be > 0"),
    (["run", "--block-size", "-4"], "--block-size must be > 0"),
    (["run", "--num-blocks", "8"], "cannot hold one sequence"),
    (["run", "--device", "cuda"], "--device cuda needs --backend torch"),
    (["compare", "--rate", "0"], "--rate must be > 0"),
    (["run", "--tp", "0"], "--tp must be > 0"),
    (["run", "--tp", "3"], "--tp 3 must be an int >= 1 that divides"),
    (["run", "--interconnect", "infiniband"], "unknown interconnect 'infiniband'"),
    (["run", "--model", "gpt-5"], "unknown model 'gpt-5'"),
    (["run", "--model", "llama-3.2-1b"], "computes on the torch backend: add --backend torch"),
    (["run", "--dtype", "bfloat16"], "computes on the torch backend"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output
    assert one_error(result.output), result.output


def test_a_missing_plugin_is_reported(tmp_path, monkeypatch):
    solution = tmp_path / "solution.py"
    solution.write_text("x = 1\n")
    for flag, module in (("--batcher", "token_batcher"), ("--scheduler", "priority_scheduler")):
        monkeypatch.delitem(sys.modules, f"kata.engine.adapters.{module}", raising=False)
        result = invoke("run", *FAST, flag, str(solution))
        if result.exit_code == 2 and "not available yet" in " ".join(result.output.split()):
            assert one_error(result.output), result.output
        else:  # the adapter exists by now: it must at least load or fail in one line
            assert result.exit_code in (0, 2), result.output
    result = invoke("run", *FAST, "--scheduler", str(tmp_path / "missing.py"))
    assert result.exit_code == 2 and "no such file" in " ".join(result.output.split())  # wrapped if long


def test_a_learner_policy_runs_next_to_the_reference(tmp_path, monkeypatch):
    class Newest:
        def key(self, r):
            return (-r.arrival_time, r.seq_id)

        def pick_victim(self, running):
            return running[0].seq_id

    fake = types.ModuleType("kata.engine.adapters.priority_scheduler")
    fake.load = lambda path: Newest()
    monkeypatch.setitem(sys.modules, "kata.engine.adapters.priority_scheduler", fake)
    solution = tmp_path / "priority_scheduler.py"
    solution.write_text("# the learner's file\n")
    result = invoke("run", *FAST, "--scheduler", str(solution), "--json")
    assert result.exit_code == 0, result.output
    both = json.loads(result.output)
    assert {k.split(":")[0] for k in both} == {"reference", "yours", "memory pressure", "burst"}
    assert both["yours"]["num_requests"] == both["reference"]["num_requests"] == 40
    pressure = next(v for k, v in both.items() if k.startswith("memory pressure"))
    assert pressure["yours"]["num_requests"] == pressure["reference"]["num_requests"] == 300

    fake.load = lambda path: Newest.__new__(object)  # not a policy
    result = invoke("run", *FAST, "--scheduler", str(solution))
    assert result.exit_code == 2 and "none of the methods" in result.output


def test_kv_chart_scales_to_the_width():
    chart = kv_chart([(t, t / 99) for t in range(100)], width=10)
    assert len(chart) == 10 and chart[-1] == "█" and chart[0] in " ▁"
    assert kv_chart([]) == ""


def test_torch_backend_without_torch_is_one_line():
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here")
    result = invoke("run", "--backend", "torch", "--num-requests", "2")
    assert result.exit_code == 2 and "needs torch installed" in result.output
