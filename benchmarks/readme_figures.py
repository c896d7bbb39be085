"""Write the engine figures the docs quote from the benchmark's JSON, so they are what the command printed.

    python benchmarks/engine_bench.py                 # writes bench-results/engine.json
    python benchmarks/readme_figures.py --write       # copies it to benchmarks/results/engine.json
                                                      # and rewrites docs/ENGINE_TOUR.md's figures block
    python benchmarks/readme_figures.py --check       # exit 1 if the doc and the JSON disagree

The block sits between the markers <!-- engine-figures --> and <!-- /engine-figures --> in
docs/ENGINE_TOUR.md, the engine's tour that the README links; it names the date, the CPU, its
cores and the load of the run, and says which figures are simulated (the same on any machine)
and which depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "bench-results" / "engine.json"  # what engine_bench.py writes
KEPT = ROOT / "benchmarks" / "results" / "engine.json"  # the run the doc quotes (committed)
DOC = ROOT / "docs" / "ENGINE_TOUR.md"  # where the figures block lives
START, END = "<!-- engine-figures -->", "<!-- /engine-figures -->"


def goal(value: float, limit: float, higher_is_better: bool) -> str:
    met = value >= limit if higher_is_better else value <= limit
    return "met" if met else "not met"


def render(r: dict) -> str:
    """The figures block for one benchmark JSON."""
    m, a, w, s, p, sp = (r[k] for k in ("machine", "attention", "waste", "static_vs_continuous",
                                        "prefix_caching", "sim_speed"))
    sh = a["shape"]
    n = sp["num_requests"]
    lines = [
        f"Measured on {r['date']} with `python benchmarks/engine_bench.py{' --quick' if r['quick'] else ''}`",
        f"on {m['cpu']} ({m['cpus']} cores), 1-minute load {m['load_average'][0]:.1f}, and written here by",
        "`python benchmarks/readme_figures.py --write` (the run is kept in `benchmarks/results/`).",
        "Simulated figures come from the cost model and are the same on any machine; the attention",
        "ratios and the simulation's run time depend on the machine and its load.",
        *([f"The simulated figures were rerun on {r['simulated_date']} after a change to the cost "
           "model (`--simulated-only`)."] if r.get("simulated_date") else []),
        "",
        "| figure | measured | goal |",
        "|---|---|---|",
        f"| paged / contiguous decode attention (batch {sh['batch']}, {sh['context']:,}-token contexts, "
        f"{sh['kv_heads']} KV heads, head dim {sh['head_dim']}, block {sh['block_size']}, scattered blocks; "
        f"machine) | {a['paged_over_contiguous']:.2f}x | <= 1.5x: "
        f"{goal(a['paged_over_contiguous'], 1.5, False)} |",
        f"| paged decode attention / one bare read (a plain sum) of the same K and V, same shape "
        f"(machine) | {a['paged_over_bare_read']:.2f}x (contiguous: "
        f"{a['contiguous_over_bare_read']:.2f}x; paged with the KV already in cache: "
        f"{a['paged_in_cache_over_bare_read']:.2f}x; per block in pool order, one batched matmul: "
        f"{a['pool_order_over_bare_read']:.2f}x) | "
        f"<= 2.0x: {goal(a['paged_over_bare_read'], 2.0, False)} |",
        f"| KV memory waste on the chat trace, paged (block 16) vs reserve-max-length (simulated) | "
        f"{w['paged']['kv_waste']:.1%} vs {w['reserve']['kv_waste']:.1%} | <= 4%: "
        f"{goal(w['paged']['kv_waste'], 0.04, False)} |",
        f"| continuous / static batching throughput, the benchmark's trace, same memory (simulated) | "
        f"{s['speedup']:.1f}x | >= 3x: {goal(s['speedup'], 3.0, True)} |",
        f"| prefix caching on the shared-system-prompt trace (simulated) | "
        f"{p['on']['hit_rate']:.1%} hit rate; TTFT p50 -{p['ttft_p50_reduction']:.0%}, "
        f"p99 -{p['ttft_p99_reduction']:.0%} | |",
        f"| `compute=False`, {n:,} chat requests, an H100's KV pool, 256 sequences a step "
        f"(the benchmark's trace, not `kata engine run`'s smaller pool; machine) | "
        f"{sp['run_cpu_seconds']:.1f} s CPU, "
        f"{sp['run_wall_seconds']:.1f} s wall | <= 5 s: {goal(sp['run_cpu_seconds'], 5.0, False)} |",
    ]
    return "\n".join(lines)


def block(doc: str) -> tuple[int, int]:
    """(start, end) offsets of the text between the markers."""
    i, j = doc.find(START), doc.find(END)
    if i < 0 or j < i:
        sys.exit(f"{DOC}: no {START} ... {END} block to write the figures into")
    return i + len(START) + 1, j


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"copy {RUN.name} and rewrite {DOC.name}")
    mode.add_argument("--check", action="store_true", help=f"exit 1 if {DOC.name} disagrees with the kept run")
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    start, end = block(doc)
    if args.write:
        if not RUN.is_file():
            sys.exit(f"{RUN}: no benchmark run; run `python benchmarks/engine_bench.py` first")
        KEPT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RUN, KEPT)
        DOC.write_text(doc[:start] + render(json.loads(KEPT.read_text())) + "\n" + doc[end:],
                       encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)} from {KEPT.relative_to(ROOT)}")
        return 0
    want = render(json.loads(KEPT.read_text()))
    if doc[start:end].rstrip("\n") != want:
        print(f"{DOC.relative_to(ROOT)}: the engine figures differ from {KEPT.relative_to(ROOT)}; "
              "run `python benchmarks/readme_figures.py --write`")
        return 1
    print(f"{DOC.relative_to(ROOT)} matches {KEPT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
