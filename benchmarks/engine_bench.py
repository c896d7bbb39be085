"""Benchmarks of the reference engine: prints a table, writes JSON. Never passes or fails.

    python benchmarks/engine_bench.py               # full run (a few minutes)
    python benchmarks/engine_bench.py --quick       # smaller traces, fewer repeats (~1 minute)
    python benchmarks/engine_bench.py --out bench-results/engine.json
    python benchmarks/readme_figures.py --write      # docs/ENGINE_TOUR.md's figures from that JSON
    python benchmarks/engine_bench.py --simulated-only benchmarks/results/engine.json
                                                    # after a cost-model change: 3-5 only

Each figure is measured side by side with its baseline in the same run, on the same data:

 1. decode attention, paged vs contiguous: batch 64, 1,024-token contexts, 8 KV heads (32 query
    heads), head dim 64, block 16, blocks scattered through a pool 25% larger than needed, as a
    long-running cache leaves them. Goal: paged / contiguous <= 1.5.
 2. paged decode attention / one bare read (a plain sum) of the same K and V arrays, in the same
    shape. Goal: <= 2.0. Beside it: the same attention computed per block in pool order (one
    batched matmul of every block against its owner's queries, no gather), the KV already in
    cache, and the contiguous version.
 3. KV memory waste on the chat trace (max_model_len 2048): paged, block 16, vs reserving the
    maximum length per request, as systems did before paging. Goal: paged <= 4% (vs the 60-80%
    reported for pre-paging systems).
 4. throughput, continuous vs static batching, same trace, same memory. Goal: >= 3x.
 5. prefix caching on the shared-prefix trace: hit rate and TTFT, with vs without.
 6. compute=False simulation speed: 100k chat requests. Goal: <= 5 s.

Simulated figures (3-5) are deterministic; wall-clock ones (1, 2, 6) depend on the machine and
its load, so the JSON also records a calibration (CPU time of an empty 10M-iteration Python
loop) and the load average. BLAS is pinned to one thread so attention and the bare read (which
numpy runs on one thread) compare like with like; timings are the best of several repeats.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere

from kata.engine.attention import paged_decode_attention  # noqa: E402
from kata.engine.config import (MODEL_PRESETS, CacheConfig, EngineConfig, ModelConfig,  # noqa: E402
                           SchedulerConfig)
from kata.engine.cost_model import HARDWARE, num_blocks_that_fit  # noqa: E402
from kata.engine.llm_engine import LLMEngine  # noqa: E402
from kata.engine.workloads import make_workload  # noqa: E402

# --- helpers ---------------------------------------------------------------------------------


def best_of(fns: dict, repeats: int) -> dict:
    """Best wall time of each function, interleaving the repeats so load hits all alike."""
    best = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()  # warm up (allocations, caches)
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def cpu_model() -> str:
    """The CPU's model name (Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def calibration() -> float:
    """CPU seconds for an empty 10M-iteration loop: ~0.2 on a quiet modern core."""
    start = time.process_time()
    for _ in range(10_000_000):
        pass
    return time.process_time() - start


def sim_config(*, num_blocks, max_model_len=2048, hardware="H100", **scheduler) -> EngineConfig:
    """Llama-3-8B-shaped costs on a simulated GPU; no tensors."""
    sched = dict(max_num_seqs=256, max_num_batched_tokens=8192)
    sched.update(scheduler)
    return EngineConfig(model=ModelConfig(max_model_len=max_model_len),
                        cache=CacheConfig(block_size=16, num_blocks=num_blocks),
                        scheduler=SchedulerConfig(**sched), compute=False, hardware=hardware,
                        cost_model="llama-3-8b")


H100_BLOCKS = num_blocks_that_fit(HARDWARE["H100"], MODEL_PRESETS["llama-3-8b"], 16)


# --- 1, 2: decode attention -------------------------------------------------------------------


def pool_order_attention(q, k_cache, v_cache, tables: np.ndarray, lens: np.ndarray):
    """Decode attention computed per block in pool order, without gathering K or V: one batched
    matmul of every used block against its owner's queries (scores), per-sequence softmax over
    its blocks (maxima and sums reduced by owner), one batched matmul of every block's
    probabilities with its V, and a segmented sum of the partial outputs by owner.
    q (n, H, D); tables (n, blocks) of full contexts; lens (n,). The benchmark's alternative
    to the engine's gather-into-cache kernel."""
    n, h, d = q.shape
    _, bs, kh, _ = k_cache.shape
    g = h // kh
    blocks = np.sort(tables.ravel())  # pool order
    lo, hi = blocks[0], blocks[-1] + 1  # one span of the pool, read in place (no gather);
    owner = np.zeros(hi - lo, np.intp)  # its unused blocks are computed and then ignored
    owner[tables.ravel() - lo] = np.repeat(np.arange(n), tables.shape[1])
    by_owner = (tables - lo).ravel()  # span positions of each sequence's blocks, grouped
    starts = np.arange(n) * tables.shape[1]
    qt = np.ascontiguousarray((q * np.float32(d ** -0.5)).reshape(n, kh, g, d).transpose(0, 1, 3, 2))
    k = k_cache[lo:hi].transpose(0, 2, 1, 3)  # (span, KH, bs, D): a view
    s = np.matmul(k, qt[owner])  # (span, KH, bs, G): one batched matmul over every block
    m = np.maximum.reduceat(s.max(axis=2)[by_owner], starts)  # (n, KH, G) per-sequence max
    s -= m[owner][:, :, None, :]
    np.exp(s, out=s)
    total = np.add.reduceat(s.sum(axis=2)[by_owner], starts)  # (n, KH, G)
    part = np.matmul(s.transpose(0, 1, 3, 2), v_cache[lo:hi].transpose(0, 2, 1, 3))  # (span, KH, G, D)
    out = np.add.reduceat(part[by_owner], starts) / total[..., None]
    return out.reshape(n, h, d)


def bench_attention(quick: bool) -> dict:
    # The headline shape in both modes (the goal is stated for it); --quick repeats less.
    batch, ctx, kv_heads, heads, head_dim, bs = 64, 1024, 8, 32, 64, 16
    rng = np.random.default_rng(0)
    blocks_per_seq = ctx // bs
    pool = int(batch * blocks_per_seq * 1.25)
    k_cache = rng.standard_normal((pool, bs, kv_heads, head_dim), dtype=np.float32)
    v_cache = rng.standard_normal((pool, bs, kv_heads, head_dim), dtype=np.float32)
    tables = rng.permutation(pool)[:batch * blocks_per_seq].reshape(batch, blocks_per_seq)
    k = np.ascontiguousarray(k_cache[tables].reshape(batch, ctx, kv_heads, head_dim))
    v = np.ascontiguousarray(v_cache[tables].reshape(batch, ctx, kv_heads, head_dim))
    q = rng.standard_normal((batch, heads, head_dim), dtype=np.float32)
    g = heads // kv_heads
    table_lists, lens = tables.tolist(), [ctx] * batch

    def contiguous():  # the strongest contiguous version: one batched matmul each way, with
        # K @ q^T (the narrow side last) as the paged kernel does: BLAS is ~2.5x faster so
        qt = (q.reshape(batch, kv_heads, g, head_dim) * np.float32(head_dim ** -0.5))
        s = k.transpose(0, 2, 1, 3) @ qt.transpose(0, 1, 3, 2)  # (batch, KH, ctx, G)
        s = np.ascontiguousarray(s.transpose(0, 1, 3, 2))  # (batch, KH, G, ctx)
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        return (s @ v.transpose(0, 2, 1, 3)).reshape(batch, heads, head_dim)

    def paged():
        return paged_decode_attention(q, k_cache, v_cache, table_lists, lens)

    def naive_paged():  # gather everything, then attend: the obvious version
        kg = k_cache[tables].reshape(batch, ctx, kv_heads, head_dim)
        vg = v_cache[tables].reshape(batch, ctx, kv_heads, head_dim)
        qg = q.reshape(batch, kv_heads, g, head_dim) * np.float32(head_dim ** -0.5)
        s = qg @ kg.transpose(0, 2, 3, 1)
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        return (s @ vg.transpose(0, 2, 1, 3)).reshape(batch, heads, head_dim)

    hot_tables = [table_lists[0]] * batch

    def paged_in_cache():  # every sequence reads the same blocks: the KV never leaves the caches,
        # so this is the kernel's compute alone (the floor of paged / bare read on this CPU)
        return paged_decode_attention(q, k_cache, v_cache, hot_tables, lens)

    def bare_read():  # a plain sum over the same K and V: every byte read once
        k.sum()
        v.sum()

    def pool_order():
        return pool_order_attention(q, k_cache, v_cache, tables, np.asarray(lens))

    assert np.allclose(paged(), contiguous(), atol=1e-4)
    assert np.allclose(pool_order(), contiguous(), atol=1e-4)
    t = best_of({"bare_read": bare_read, "contiguous": contiguous, "paged": paged,
                 "naive_paged": naive_paged, "paged_in_cache": paged_in_cache,
                 "pool_order": pool_order}, repeats=3 if quick else 7)
    kv_bytes = k.nbytes + v.nbytes
    return {
        "shape": dict(batch=batch, context=ctx, kv_heads=kv_heads, heads=heads,
                      head_dim=head_dim, block_size=bs, pool_blocks=pool),
        "kv_bytes": kv_bytes,
        "seconds": t,
        "bare_read_gb_per_s": kv_bytes / t["bare_read"] / 1e9,
        "paged_over_contiguous": t["paged"] / t["contiguous"],
        "naive_paged_over_contiguous": t["naive_paged"] / t["contiguous"],
        "contiguous_over_bare_read": t["contiguous"] / t["bare_read"],
        "paged_in_cache_over_bare_read": t["paged_in_cache"] / t["bare_read"],
        "paged_over_bare_read": t["paged"] / t["bare_read"],
        "pool_order_over_bare_read": t["pool_order"] / t["bare_read"],
    }


# --- 3, 4: memory waste, static vs continuous ---------------------------------------------------


def bench_waste(quick: bool) -> dict:
    trace = make_workload("chat", 300 if quick else 2000, seed=0, rate=30.0, max_model_len=2048,
                          with_token_ids=False)
    out = {}
    for memory in ("paged", "reserve"):
        m = LLMEngine(sim_config(num_blocks=H100_BLOCKS, memory=memory)).run(trace).metrics
        out[memory] = dict(kv_waste=m.kv_waste, kv_utilization_mean=m.kv_utilization_mean,
                           output_tokens_per_s=m.output_tokens_per_s,
                           num_preemptions=m.num_preemptions)
    return out


def bench_static(quick: bool) -> dict:
    # Everyone arrives at once (an offline batch): throughput is what is left to compare.
    n = 400 if quick else 3000
    trace = make_workload("chat", n, seed=1, rate=1e6, max_model_len=2048, with_token_ids=False)
    blocks = 8192  # the same memory for both: 131k token slots (16 GiB of llama-3-8b KV)
    out = {}
    for batching in ("continuous", "static"):
        m = LLMEngine(sim_config(num_blocks=blocks, batching=batching)).run(trace).metrics
        out[batching] = dict(output_tokens_per_s=m.output_tokens_per_s, makespan_s=m.makespan_s,
                             e2e_p50=m.e2e_p50, kv_utilization_mean=m.kv_utilization_mean,
                             kv_waste=m.kv_waste)
    out["speedup"] = out["continuous"]["output_tokens_per_s"] / out["static"]["output_tokens_per_s"]
    return out


# --- 5: prefix caching ----------------------------------------------------------------------------


def bench_prefix(quick: bool) -> dict:
    trace = make_workload("shared-prefix", 300 if quick else 2000, seed=2, rate=20.0,
                          max_model_len=2048, with_token_ids=True)
    out = {}
    for caching in (True, False):
        cfg = sim_config(num_blocks=H100_BLOCKS)
        cfg.cache.enable_prefix_caching = caching
        m = LLMEngine(cfg).run(trace).metrics
        out["on" if caching else "off"] = dict(hit_rate=m.prefix_cache_hit_rate,
                                               ttft_p50=m.ttft_p50, ttft_p99=m.ttft_p99,
                                               output_tokens_per_s=m.output_tokens_per_s)
    out["ttft_p50_reduction"] = 1 - out["on"]["ttft_p50"] / out["off"]["ttft_p50"]
    out["ttft_p99_reduction"] = 1 - out["on"]["ttft_p99"] / out["off"]["ttft_p99"]
    return out


# --- 6: simulation speed ------------------------------------------------------------------------


def bench_sim_speed(quick: bool) -> dict:
    n = 10_000 if quick else 100_000
    start = time.perf_counter()
    trace = make_workload("chat", n, seed=3, rate=50.0, max_model_len=8192, with_token_ids=False)
    trace_s = time.perf_counter() - start
    engine = LLMEngine(sim_config(num_blocks=H100_BLOCKS, max_model_len=8192))
    wall, cpu = time.perf_counter(), time.process_time()
    m = engine.run(trace).metrics
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return dict(num_requests=n, trace_seconds=trace_s, run_wall_seconds=wall,
                run_cpu_seconds=cpu, num_steps=m.num_steps, simulated_seconds=m.makespan_s,
                requests_per_wall_second=n / wall,
                output_tokens=int(m.output_tokens_per_s * m.makespan_s))


# --- report ---------------------------------------------------------------------------------------


def verdict(value: float, goal: float, higher_is_better: bool) -> str:
    met = value >= goal if higher_is_better else value <= goal
    return "met" if met else "NOT met"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 20 s)")
    parser.add_argument("--out", default="bench-results/engine.json", help="JSON output path")
    parser.add_argument("--simulated-only", metavar="RUN",
                        help="rerun only the simulated figures (3-5) into a copy of RUN, a kept "
                             "run's JSON whose machine figures stay: what a cost-model change moves")
    args = parser.parse_args(argv)
    q = args.quick
    today = time.strftime("%Y-%m-%d", time.gmtime())
    benches = [("attention", bench_attention), ("waste", bench_waste),
               ("static_vs_continuous", bench_static), ("prefix_caching", bench_prefix),
               ("sim_speed", bench_sim_speed)]
    if args.simulated_only:
        results = json.loads(Path(args.simulated_only).read_text())
        q, results["simulated_date"], benches = results["quick"], today, benches[1:4]
    else:
        results = {"quick": q, "date": today, "machine": dict(
            cpu=cpu_model(), python=platform.python_version(), numpy=np.__version__,
            cpus=os.cpu_count(),
            load_average=list(os.getloadavg()), calibration_cpu_s=calibration(),
            blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))}
    for name, fn in benches:
        start = time.perf_counter()
        results[name] = fn(q)
        results[name]["bench_seconds"] = time.perf_counter() - start
        print(f"  ... {name} done in {results[name]['bench_seconds']:.1f} s", file=sys.stderr)

    a, w, s, p, sp = (results[k] for k in ("attention", "waste", "static_vs_continuous",
                                            "prefix_caching", "sim_speed"))
    n_sim = sp["num_requests"]
    rows = [
        ("paged / contiguous decode attention", f"{a['paged_over_contiguous']:.2f}x", "<= 1.5x",
         verdict(a["paged_over_contiguous"], 1.5, False)),
        ("  (naive gather-then-attend / contiguous)", f"{a['naive_paged_over_contiguous']:.2f}x",
         "", ""),
        ("paged decode attention / bare KV read", f"{a['paged_over_bare_read']:.2f}x", "<= 2.0x",
         verdict(a["paged_over_bare_read"], 2.0, False)),
        ("  (contiguous / bare KV read)", f"{a['contiguous_over_bare_read']:.2f}x", "", ""),
        ("  (paged, KV already in cache / bare read)",
         f"{a['paged_in_cache_over_bare_read']:.2f}x", "", ""),
        ("  (per block in pool order, batched / bare read)",
         f"{a['pool_order_over_bare_read']:.2f}x", "", ""),
        ("KV waste, paged block 16 (chat)", f"{w['paged']['kv_waste']:.1%}", "<= 4%",
         verdict(w["paged"]["kv_waste"], 0.04, False)),
        ("KV waste, reserve max length (chat)", f"{w['reserve']['kv_waste']:.1%}", "(60-80%)", ""),
        ("continuous / static throughput", f"{s['speedup']:.1f}x", ">= 3x",
         verdict(s["speedup"], 3.0, True)),
        ("prefix cache hit rate (shared prefix)", f"{p['on']['hit_rate']:.1%}", "", ""),
        ("TTFT p50 / p99 reduction from caching",
         f"{p['ttft_p50_reduction']:.0%} / {p['ttft_p99_reduction']:.0%}", "", ""),
        (f"simulate {n_sim:,} requests (wall)", f"{sp['run_wall_seconds']:.1f} s",
         "<= 5 s" if n_sim == 100_000 else "(quick)",
         verdict(sp["run_wall_seconds"], 5.0, False) if n_sim == 100_000 else ""),
        ("  (same, CPU time of this process)", f"{sp['run_cpu_seconds']:.1f} s", "", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"\nengine benchmarks{' (quick)' if q else ''}; calibration "
          f"{results['machine']['calibration_cpu_s']:.2f} s CPU per 10M empty loops "
          f"(~0.2 on a quiet core), load average {results['machine']['load_average'][0]:.1f}")
    print(f"{'figure':{width}}  {'measured':>12}  {'goal':>9}  verdict")
    for label, value, goal, v in rows:
        print(f"{label:{width}}  {value:>12}  {goal:>9}  {v}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=float))
    print(f"\nwrote {out}")
    return results


if __name__ == "__main__":
    main()
