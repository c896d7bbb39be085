"""What the grading sandbox costs: the same gradings with and without bubblewrap, side by side.

One kata's reference graded `--runs` times each way (interleaved, so machine noise hits both
alike; the median is shown), then a grade-batch of `--students` submissions (the reference, the
stub and the bug zoo, cycled) each way.

    python benchmarks/sandbox_cost.py [--kata lru-kv-cache] [--runs 3] [--students 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.grade_batch_bench import build_cohort  # noqa: E402
from kata import sandbox  # noqa: E402
from kata.catalog import Workbook  # noqa: E402
from kata.cohort import grade_batch  # noqa: E402
from kata.grading import grade  # noqa: E402

MODES = ("sandbox", "plain")


def _mode(name: str) -> None:
    if name == "plain":
        os.environ[sandbox.ENV_SWITCH] = "off"
    else:
        os.environ.pop(sandbox.ENV_SWITCH, None)


def one_kata(wb: Workbook, slug: str, runs: int) -> dict[str, list[float]]:
    kata = wb.kata(slug)
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(runs):
        for mode in MODES:
            _mode(mode)
            t = time.perf_counter()
            result = grade(kata, None)
            times[mode].append(time.perf_counter() - t)
            assert result.status == "pass", (mode, result.message)
    return times


def batch(wb: Workbook, slug: str, students: int, workers: int) -> dict[str, tuple[float, dict]]:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        cohort = Path(tmp) / "cohort"
        build_cohort(wb, slug, students, cohort)
        view = Path(tmp) / "view"  # a workbook holding just this kata
        for part in ("katas", "graders"):
            (view / part).mkdir(parents=True)
            (view / part / slug).symlink_to(wb.root / part / slug)
        (view / "solutions").mkdir()
        (view / "solutions" / f"{slug}.py").symlink_to(wb.root / "solutions" / f"{slug}.py")
        view_wb = Workbook(root=view, state_dir=Path(tmp) / "state")
        for mode in MODES:
            _mode(mode)
            t = time.perf_counter()
            book = grade_batch(view_wb, cohort, workers=workers)
            out[mode] = (time.perf_counter() - t, book)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kata", default="lru-kv-cache")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(sandbox.status_line())
    if not sandbox.available():
        return
    wb = Workbook.find(Path(__file__).resolve().parent.parent)
    times = one_kata(wb, args.kata, args.runs)
    s, p = statistics.median(times["sandbox"]), statistics.median(times["plain"])
    print(f"{args.kata}, the reference, median of {args.runs}: sandbox {s:.2f} s, plain {p:.2f} s, "
          f"ratio {s / p:.2f}x")
    books = batch(wb, args.kata, args.students, args.workers)
    (bs, bb), (bp, pb) = books["sandbox"], books["plain"]
    same = bb["rows"] == pb["rows"]
    print(f"grade-batch of {args.students} ({args.workers} workers): sandbox {bs:.1f} s, plain {bp:.1f} s, "
          f"ratio {bs / bp:.2f}x; identical gradebooks: {same}")


if __name__ == "__main__":
    main()
