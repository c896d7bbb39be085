"""What the process boundary costs each kata: the calls its hidden suite makes across it, and the
suite's time on the reference in one process and across the boundary, side by side in one run.

    python benchmarks/boundary_calls.py                    # every kata
    python benchmarks/boundary_calls.py kv-block-store lru-kv-cache

Each suite runs twice under plain pytest (`--kata-boundary off`, then `on`, no sandbox, so the
calls can be counted): the time of the whole run, the calls (attribute reads, calls, operators:
each one round trip over a pipe) and the cost per call the difference implies. A kata graded
across the boundary (`process_boundary = true`) should stay within the verdict-time goal of
benchmarks/verdict_time.py; where a suite makes many calls, batch them (AUTHORING.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kata.boundary import STATS_ENV  # noqa: E402
from kata.catalog import Workbook  # noqa: E402


def run(slug: str, mode: str, stats: Path | None) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KATA_")}
    if stats is not None:
        env[STATS_ENV] = str(stats)
    t = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"graders/{slug}",
                               "--kata-boundary", mode], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t, "over 600 s: stopped"
    tail = (done.stdout.strip().splitlines() or ["?"])[-1]
    return time.perf_counter() - t, tail


def main() -> None:
    wb = Workbook.find(str(ROOT))
    slugs = sys.argv[1:] or wb.slugs()
    print(f"{'kata':<26} {'apart':>5} {'calls':>9} {'one s':>7} {'apart s':>8} {'ratio':>6} {'us/call':>8}  result apart")
    for slug in slugs:
        one, _ = run(slug, "off", None)
        with tempfile.TemporaryDirectory() as tmp:
            stats = Path(tmp) / "stats.jsonl"
            apart, tail = run(slug, "on", stats)
            last: dict[int, int] = {}
            if stats.exists():
                for line in stats.read_text().splitlines():
                    row = json.loads(line)
                    last[row["client"]] = row["calls"]
        calls = sum(last.values())
        per = (apart - one) / calls * 1e6 if calls else 0.0
        flag = "yes" if wb.kata(slug).process_boundary else "no"
        print(f"{slug:<26} {flag:>5} {calls:>9,} {one:>7.2f} {apart:>8.2f} {apart / one:>6.2f} {per:>8.1f}  {tail}")


if __name__ == "__main__":
    main()
