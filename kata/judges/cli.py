"""`kata engine run`, `compare` and `plan`: the reference engine from the terminal.

Only typer, the standard library and light kata modules are imported at module level, so
`kata --help` stays fast; numpy, rich and the engine load inside the commands. Bad input is one
line on stderr and exit code 2, never a traceback. It lives beside the other judges, not in the
engine, because it speaks kata's command line (KataTyper, kata's one-line errors) and runs a
learner's file next to the reference.

    kata engine run --workload chat --num-requests 200 --hardware H100
    kata engine run --no-compute --num-requests 100000           # simulate a large trace
    kata engine run --scheduler workspace/priority_scheduler.py  # your policy vs the reference
    kata engine run --interceptor workspace/safety_interceptor.py  # your gateway on the engine
    kata engine compare --workload chat             # static vs continuous, paged vs reserved
    kata engine plan workspace/serving_plan.py --level 2   # your serving plan, judged
"""

from __future__ import annotations

from pathlib import Path

import typer

from kata.judges.cli_support import _choice, _console, _fail, _load_plugin, _positive  # noqa: F401
from kata.engine.report import WASTE_NOTE, _fmt, _metrics_table, _print_chart, kv_chart  # noqa: F401
from kata.usage import KataTyper

engine_app = KataTyper(
    help="Run the reference inference engine (paged KV cache, continuous batching) on a trace.",
    no_args_is_help=True, add_completion=False)

WORKLOADS = ("chat", "bursty", "shared-prefix")  # (engine.workloads.WORKLOADS, without numpy)
HARDWARE = ("A10G", "A100", "H100", "H200")
INTERCONNECTS = ("nvlink", "network", "pcie")  # (engine.parallel.INTERCONNECTS)
POLICIES = ("fcfs", "priority")  # (engine.policy.POLICIES)
MODELS = ("tiny", "llama-3.2-1b")  # the computable engine.config.MODEL_PRESETS
DTYPES = ("auto", "float32", "bfloat16", "float16")  # (engine.config.DTYPES, float64 aside)


# --- shared helpers (numpy/rich imported lazily through these) --------------------------------


def _build_config(*, block_size, num_blocks, max_num_seqs, max_num_batched_tokens, hardware,
                  backend, device, compute, policy="fcfs", preemption="recompute",
                  batching="continuous", memory="paged", num_host_blocks=None,
                  prefix_caching=True, max_model_len=4096, tp=1, interconnect="nvlink",
                  model="tiny", dtype="auto"):
    """The EngineConfig of these options. A model other than the tiny one is also what the
    simulated time is charged for."""
    from dataclasses import replace

    from kata.engine.config import MODEL_PRESETS, CacheConfig, EngineConfig, SchedulerConfig

    try:
        return EngineConfig(
            model=replace(MODEL_PRESETS[model], max_model_len=max_model_len), dtype=dtype,
            cost_model="llama-3-8b" if model == "tiny" else model,
            cache=CacheConfig(block_size=block_size, num_blocks=num_blocks,
                              num_host_blocks=num_blocks if num_host_blocks is None
                              else num_host_blocks,
                              enable_prefix_caching=prefix_caching),
            scheduler=SchedulerConfig(max_num_seqs=max_num_seqs,
                                      max_num_batched_tokens=max_num_batched_tokens,
                                      policy=policy, preemption_mode=preemption,
                                      batching=batching, memory=memory),
            compute=compute, backend=backend, device=device, hardware=hardware,
            tensor_parallel_size=tp, interconnect=interconnect)
    except ValueError as e:
        _fail(_as_options(str(e)))


# EngineConfig's fields as `kata engine run` spells them
OPTIONS = {"tensor_parallel_size": "--tp", "max_num_seqs": "--max-num-seqs", "block_size": "--block-size",
           "num_blocks": "--num-blocks", "max_num_batched_tokens": "--max-num-batched-tokens",
           "num_host_blocks": "--num-blocks", "max_model_len": "--max-model-len"}


def _as_options(message: str) -> str:
    """An EngineConfig error in the words of the command line that was typed:
    "EngineConfig.tensor_parallel_size=3 must be ..." -> "--tp 3 must be ..."."""
    import re

    def option(m):
        name = OPTIONS.get(m.group(2))
        return f"{name} {m.group(3)}" if name else m.group(0)

    return re.sub(r"\b(\w*Config)\.(\w+)=(\S+)", option, message)


def _run_engine(config, trace, *, label="reference", scheduler_policy=None, batcher_policy=None):
    """One trace through the engine, its progress on stderr as it goes (kata.output.long_run:
    a bar on a terminal, a line every few seconds otherwise): `label` names the run."""
    from kata.engine.llm_engine import LLMEngine
    from kata.engine.policy import PolicyError
    from kata.output import long_run

    try:
        with long_run() as progress:
            update = progress.task(label, total=len(trace), unit="requests finished")
            result = LLMEngine(config, scheduler_policy=scheduler_policy,
                               batcher_policy=batcher_policy).run(trace, on_progress=update)
            update(len(trace))
            return result
    except PolicyError as e:
        from kata.output import error

        error(f"your policy: {e}")
        raise typer.Exit(1) from None
    except (ImportError, RuntimeError) as e:
        if "torch" in str(e) or "CUDA" in str(e):
            _fail(f"the torch backend is not usable here: {e}")
        raise


def _check_backend(backend: str, device: str, compute: bool, model: str = "tiny",
                   dtype: str = "auto") -> None:
    _choice("backend", backend, ("numpy", "torch"))
    _choice("device", device.split(":")[0], ("cpu", "cuda"))
    _choice("model", model, MODELS)
    _choice("dtype", dtype, DTYPES)
    if backend == "numpy" and device != "cpu":
        _fail("--device cuda needs --backend torch")
    if backend == "numpy" and compute and (model != "tiny" or dtype not in ("auto", "float32")):
        _fail(f"--model {model} --dtype {dtype} computes on the torch backend: add --backend torch "
              "(and --device cuda for a GPU), or --no-compute")
    if backend == "torch" and compute:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            _fail("--backend torch needs torch installed (CPU build: pip install torch==2.13.0)")


def _run_interceptor(config, trace, path: Path, seed: int, as_json: bool) -> None:
    """`run --interceptor`: the learner's safety gateway and tenant cache on the engine."""
    from kata.engine.adapters import safety_interceptor as si
    from kata.engine.policy import PolicyError

    if not path.is_file():
        _fail(f"--interceptor {path}: no such file")
    try:
        result = si.intercept(config, trace, path, seed)
    except PolicyError as e:
        _fail(f"--interceptor {path}: {e}")
    if as_json:
        import json

        typer.echo(json.dumps(si.to_dict(result), indent=2))
        return
    si.render(_console(), result)


# --- commands -------------------------------------------------------------------------------


@engine_app.command(short_help="Run a trace; print its metrics and KV use.")
def run(
    workload: str = typer.Option("chat", help="chat, bursty or shared-prefix."),
    num_requests: int = typer.Option(40, help="Requests in the trace (the tiny model really runs: keep it small, or use --no-compute)."),
    rate: float = typer.Option(20.0, help="Mean arrivals per simulated second."),
    seed: int = typer.Option(0, help="Trace seed."),
    max_tokens: int = typer.Option(None, help="Cap every request's output length."),
    policy: str = typer.Option("fcfs", help="fcfs or priority."),
    preemption: str = typer.Option("recompute", help="recompute or swap."),
    block_size: int = typer.Option(16, help="Token slots per KV block."),
    num_blocks: int = typer.Option(2048, help="KV blocks in the pool."),
    max_num_seqs: int = typer.Option(64, help="Sequences per step."),
    max_num_batched_tokens: int = typer.Option(2048, help="Token budget per step."),
    hardware: str = typer.Option("A100", help="A10G, A100, H100 or H200 (simulated time)."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel GPUs the simulated time is split "
                                           "over (divides llama-3-8b's 8 KV heads)."),
    interconnect: str = typer.Option("nvlink", help="nvlink, network or pcie: the TP group's link."),
    backend: str = typer.Option("numpy", help="numpy or torch."),
    device: str = typer.Option("cpu", help="cpu or cuda (torch backend)."),
    model: str = typer.Option("tiny", help="tiny, or llama-3.2-1b (its real shape, seeded "
                                           "weights; torch backend, best on a GPU)."),
    dtype: str = typer.Option("auto", help="auto (the model's float32), float32, bfloat16 or "
                                           "float16 (torch backend)."),
    compute: bool = typer.Option(True, "--compute/--no-compute",
                                 help="Run the model, or only simulate (no tensors)."),
    batcher: Path = typer.Option(None, help="Your token-batcher solution, run next to the "
                                            "reference admission."),
    scheduler: Path = typer.Option(None, help="Your priority-scheduler solution, run next to "
                                              "the reference policy."),
    interceptor: Path = typer.Option(None, help="Your safety-interceptor solution: its gateway "
                                                "cancels flagged requests on the engine."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
) -> None:
    """Run one trace through the engine; print its metrics and KV usage over time."""
    _choice("workload", workload, WORKLOADS)
    _choice("policy", policy, POLICIES)
    _choice("preemption mode", preemption, ("recompute", "swap"))
    _choice("hardware profile", hardware, HARDWARE)
    _choice("interconnect", interconnect, INTERCONNECTS)
    _positive(num_requests=num_requests, rate=rate, block_size=block_size, tp=tp,
              num_blocks=num_blocks, max_num_seqs=max_num_seqs,
              max_num_batched_tokens=max_num_batched_tokens,
              max_tokens=1 if max_tokens is None else max_tokens)
    _check_backend(backend, device, compute, model, dtype)
    learner = {}
    if scheduler is not None:
        learner["scheduler_policy"] = _load_plugin("scheduler", scheduler)
    if batcher is not None:
        learner["batcher_policy"] = _load_plugin("batcher", batcher)
    config = _build_config(block_size=block_size, num_blocks=num_blocks,
                           max_num_seqs=max_num_seqs,
                           max_num_batched_tokens=max_num_batched_tokens, hardware=hardware,
                           backend=backend, device=device, compute=compute, policy=policy,
                           preemption=preemption, tp=tp, interconnect=interconnect, model=model,
                           dtype=dtype)
    from kata.engine.workloads import make_workload

    trace = make_workload(workload, num_requests, seed=seed, rate=rate,
                          max_model_len=config.model.max_model_len, with_token_ids=True)
    if max_tokens is not None:
        from dataclasses import replace

        trace = [replace(r, output_len=min(r.output_len, max_tokens)) for r in trace]
    if interceptor is not None:
        return _run_interceptor(config, trace, interceptor, seed, as_json)
    results = {"reference": _run_engine(config, trace)}
    stress = {}  # title -> {"reference": ..., "yours": ...}: where a plug-in's choices show
    if learner:
        results["yours"] = _run_engine(config, trace, label="yours", **learner)
        stress = _stress_runs(workload, rate, seed, learner, dict(
            block_size=block_size, max_num_seqs=max_num_seqs, hardware=hardware, tp=tp,
            interconnect=interconnect, max_num_batched_tokens=max_num_batched_tokens,
            backend=backend, device=device, policy=policy, preemption=preemption, model=model,
            dtype=dtype))
    mode = f"{model} model computed" if compute else "simulated, no tensors"
    where = hardware if tp == 1 else f"{tp}x {hardware} over {interconnect}"
    _report_run(results, stress, as_json, f"{workload}, {num_requests} requests at {rate:g}/s on "
                f"{where} ({mode}, {backend}); {num_blocks} blocks of {block_size}, policy {policy}")


def _stress_runs(workload: str, rate: float, seed: int, learner: dict, options: dict) -> dict:
    """The stress traces (memory pressure, a burst), each run with the reference and the
    learner's policy: title -> {"reference": RunResult, "yours": RunResult}."""
    from kata.engine.scenarios import STRESS_REQUESTS, stress_scenarios
    from kata.engine.workloads import make_workload

    stress = {}
    for title, overrides, name, at in stress_scenarios(workload, rate):
        cfg = _build_config(**{**options, **overrides})
        t = make_workload(name, STRESS_REQUESTS, seed=seed, rate=at,
                          max_model_len=cfg.model.max_model_len, with_token_ids=True)
        stress[title] = {"reference": _run_engine(cfg, t, label=f"{title}: reference"),
                         "yours": _run_engine(cfg, t, label=f"{title}: yours", **learner)}
    return stress


def _report_run(results: dict, stress: dict, as_json: bool, header: str) -> None:
    """`kata engine run`'s output: JSON, or the header, metrics tables and KV charts."""
    if as_json:
        import json

        out = {k: r.metrics.to_dict() for k, r in results.items()}
        for title, runs in stress.items():
            out[title] = {k: r.metrics.to_dict() for k, r in runs.items()}
        typer.echo(json.dumps(out, indent=2))
        return
    from kata.output import paged

    console = _console()
    with paged():  # taller than a screen: its header would scroll away
        console.print(header)
        console.print(_metrics_table({k: r.metrics for k, r in results.items()}))
        console.print(WASTE_NOTE)
        for name, r in results.items():
            _print_chart(console, name, r.metrics)
        walls = ", ".join(f"{k} {r.wall_time_s:.1f} s" for k, r in results.items())
        console.print(f"wall time: {walls}")
        for title, runs in stress.items():
            console.print(f"\n{title} (simulated)")
            console.print(_metrics_table({k: r.metrics for k, r in runs.items()}))


@engine_app.command(short_help="Static vs continuous batching, paged vs reserved.")
def compare(
    workload: str = typer.Option("chat", help="chat, bursty or shared-prefix."),
    num_requests: int = typer.Option(300, help="Requests in the trace."),
    rate: float = typer.Option(20.0, help="Mean arrivals per simulated second."),
    seed: int = typer.Option(0, help="Trace seed."),
    block_size: int = typer.Option(16, help="Token slots per KV block."),
    num_blocks: int = typer.Option(2048, help="KV blocks in the pool (the same for all)."),
    max_num_seqs: int = typer.Option(64, help="Sequences per step (batch size for static)."),
    hardware: str = typer.Option("A100", help="A10G, A100, H100 or H200."),
    compute: bool = typer.Option(False, "--compute/--no-compute",
                                 help="Run the tiny model too (slower; same figures)."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
) -> None:
    """Static vs continuous batching, and paged vs reserve-max-length memory, on one trace."""
    _choice("workload", workload, WORKLOADS)
    _choice("hardware profile", hardware, HARDWARE)
    _positive(num_requests=num_requests, rate=rate, block_size=block_size,
              num_blocks=num_blocks, max_num_seqs=max_num_seqs)
    common = dict(block_size=block_size, num_blocks=num_blocks, max_num_seqs=max_num_seqs,
                  max_num_batched_tokens=max(2048, max_num_seqs), hardware=hardware,
                  backend="numpy", device="cpu", compute=compute)
    configs = {
        "continuous, paged": _build_config(**common),
        "static batching": _build_config(**common, batching="static"),
        "continuous, reserve max len": _build_config(**common, memory="reserve"),
    }
    from kata.engine.workloads import make_workload

    trace = make_workload(workload, num_requests, seed=seed, rate=rate,
                          max_model_len=configs["continuous, paged"].model.max_model_len,
                          with_token_ids=True)
    results = {name: _run_engine(cfg, trace, label=name) for name, cfg in configs.items()}
    if as_json:
        import json

        typer.echo(json.dumps({k: r.metrics.to_dict() for k, r in results.items()}, indent=2))
        return
    from kata.output import paged

    console = _console()
    title = (f"{workload}, {num_requests:,} requests at {rate:g}/s on {hardware}; each run "
             f"with the same {num_blocks:,} KV blocks of {block_size} tokens")
    with paged():  # taller than a screen: the table's header would scroll away
        console.print(title)
        console.print(_metrics_table({k: r.metrics for k, r in results.items()}))
        console.print(WASTE_NOTE)
        base = results["continuous, paged"].metrics.output_tokens_per_s
        for name, r in results.items():
            if name != "continuous, paged":
                ratio = base / r.metrics.output_tokens_per_s
                console.print(f"continuous, paged: {ratio:.1f}x the output throughput of {name}")
        for name, r in results.items():
            _print_chart(console, name, r.metrics)


@engine_app.command(short_help="Judge your serving plan beside the reference's.")
def plan(path: Path = typer.Argument(..., help="Your serving-plan file, e.g. workspace/serving_plan.py."),
         level: int = typer.Option(1, help="The serving-plan level whose workload to run (1-4)."),
         workload: str | None = typer.Option(None, "--workload", metavar="NAME",
                                             help="Instead of a level: another workload the prompt names "
                                                  "(few-users, prefill-heavy).")) -> None:
    """Judge your serving plan on a level's workload, beside the reference plan (serving-plan)."""
    from kata.judges.plan_report import PlanError, judge_files, reference_path, render

    try:
        judgement = judge_files(path, workload if workload is not None else level, reference_path())
    except PlanError as e:
        _fail(str(e))
    if not render(judgement, _console()):
        raise typer.Exit(1)
