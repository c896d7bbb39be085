"""How long does a learner wait for a verdict? Grades each kata's reference on its hidden suite the
way `kata submit` does (a private copy, a child pytest process, the manifest checked before and
after) and prints the wall time per kata, side by side in one run, with the slowest hidden tests.

    python benchmarks/verdict_time.py                       # every kata
    python benchmarks/verdict_time.py streaming-token-counter tp-placement
    python benchmarks/verdict_time.py --slowest 5           # five slowest tests per kata
    python benchmarks/verdict_time.py --boundary            # in one process, then apart, side by side

Goal: every reference verdict in <= 3 s on two cores. On a busy machine the wall time swells: run
it on a quiet one. The time splits into the child's start-up (pytest, hypothesis, the plugin) and
the tests themselves (the "in tests" column); `--slowest` shows where the second part goes, so a
timing test can be kept at the smallest size that still separates the wrong complexity. (No CPU
figure: the sandboxed child is killed, not reaped, so its CPU time never reaches this process.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kata.catalog import Workbook  # noqa: E402
from kata.grading import IntegrityError, grade  # noqa: E402

GOAL_S = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slugs", nargs="*", help="katas to time (default: every kata)")
    parser.add_argument("--workbook", default=None)
    parser.add_argument("--slowest", type=int, default=3, help="slowest hidden tests to list per kata")
    parser.add_argument("--boundary", action="store_true",
                        help="grade each kata in one process and across the process boundary, side by side")
    args = parser.parse_args()
    wb = Workbook.find(args.workbook)
    unknown = [s for s in args.slugs if s not in wb.slugs()]
    if unknown:
        sys.exit(f"verdict_time: unknown kata {unknown[0]!r}; choose from {', '.join(wb.slugs())}")
    if args.boundary:
        return side_by_side(wb, args.slugs or wb.slugs())
    rows = []
    for slug in args.slugs or wb.slugs():
        kata = wb.kata(slug)
        t = time.perf_counter()
        try:
            result = grade(kata, kata.solution)
        except IntegrityError as e:
            sys.exit(f"verdict_time: {e}")
        wall = time.perf_counter() - t
        in_tests = sum(x.duration or 0.0 for x in result.tests)
        slow = sorted(result.tests, key=lambda x: -(x.duration or 0.0))[: args.slowest]
        rows.append((slug, wall, in_tests, len(result.tests), result.status, slow))
    print(f"{'kata':<26} {'verdict s':>9} {'in tests s':>10} {'tests':>5}  status  goal <= {GOAL_S:.0f} s")
    for slug, wall, in_tests, n, status, _ in rows:
        mark = "" if wall <= GOAL_S else "  over"
        print(f"{slug:<26} {wall:>9.2f} {in_tests:>10.2f} {n:>5}  {status:<6}{mark}")
    for slug, *_, slow in rows:
        if slow:
            print(f"{slug}: slowest " + "; ".join(f"{x.name} {x.duration or 0:.2f} s" for x in slow))


def side_by_side(wb, slugs) -> None:
    """Each kata's reference verdict with KATA_BOUNDARY=off, then =on (kata/boundary.py)."""
    import os

    from kata.grading import BOUNDARY_ENV

    print(f"{'kata':<26} {'one s':>7} {'apart s':>8} {'ratio':>6}  status  goal <= {GOAL_S:.0f} s")
    for slug in slugs:
        kata, walls, statuses = wb.kata(slug), [], []
        for mode in ("off", "on"):
            os.environ[BOUNDARY_ENV] = mode
            t = time.perf_counter()
            result = grade(kata, kata.solution)
            walls.append(time.perf_counter() - t)
            statuses.append(result.status)
        os.environ.pop(BOUNDARY_ENV, None)
        mark = "" if walls[1] <= GOAL_S else "  over"
        print(f"{slug:<26} {walls[0]:>7.2f} {walls[1]:>8.2f} {walls[1] / walls[0]:>6.2f}  "
              f"{'/'.join(statuses):<6}{mark}")


if __name__ == "__main__":
    main()
