"""Wall time of grading a cohort with 1 and 2 workers, and with the reference timed apart (the
default: run once, alone) or in each student's process, side by side in one run.

Builds a cohort of N students in a scratch folder from a kata's reference, its stub and its bug zoo
(cycled), then runs the same grade-batch with each worker count and each way of timing the
reference (the in-process run with the most workers only).

    python benchmarks/grade_batch_bench.py [--kata lru-kv-cache] [--students 20] [--workers 1 2]
    python benchmarks/grade_batch_bench.py --workbook tests/fixtures/workbook --kata adder
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kata.catalog import Workbook  # noqa: E402
from kata.cohort import grade_batch  # noqa: E402


def build_cohort(wb: Workbook, slug: str, students: int, where: Path) -> None:
    kata = wb.kata(slug)
    bugs = sorted(kata.bugs.glob("*.py")) if kata.bugs.is_dir() else []
    sources = [kata.solution, kata.stub, *bugs]
    for i in range(students):
        folder = where / f"student{i:03d}"
        folder.mkdir(parents=True)
        shutil.copyfile(sources[i % len(sources)], folder / kata.module)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workbook", default=None)
    parser.add_argument("--kata", default="lru-kv-cache")
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    wb = Workbook.find(args.workbook)
    with tempfile.TemporaryDirectory() as tmp:
        cohort = Path(tmp) / "cohort"
        build_cohort(wb, args.kata, args.students, cohort)
        # grade only the chosen kata: a workbook view whose catalog holds just that kata
        view = Path(tmp) / "view"
        for part in ("katas", "graders"):
            (view / part).mkdir(parents=True)
            (view / part / args.kata).symlink_to(wb.root / part / args.kata)
        (view / "solutions").mkdir()
        (view / "solutions" / f"{args.kata}.py").symlink_to(wb.root / "solutions" / f"{args.kata}.py")
        view_wb = Workbook(root=view, state_dir=Path(tmp) / "state")
        rows = []
        runs = [(w, True) for w in args.workers] + [(max(args.workers), False)]
        for workers, apart in runs:
            t = time.perf_counter()
            book = grade_batch(view_wb, cohort, workers=workers, reference_apart=apart)
            rows.append((workers, apart, time.perf_counter() - t, book))
    base = rows[0][2]
    print(f"{args.students} submissions of {args.kata}")
    print(f"{'workers':>7} {'reference':>10} {'wall s':>8} {'speed-up':>9}")
    for workers, apart, wall, _book in rows:
        print(f"{workers:>7} {'apart' if apart else 'in-process':>10} {wall:>8.1f} {base / wall:>8.2f}x")

    def points(book):
        return [(r["student"], r["kata"], r["points_earned"]) for r in book["rows"]]
    print("identical scores:", all(points(r[3]) == points(rows[0][3]) for r in rows))


if __name__ == "__main__":
    main()
