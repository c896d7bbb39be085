"""How long does a submission that hangs keep a learner waiting? For each kata, grades the stub with
every `raise NotImplementedError` turned into an endless loop (so every hidden test hangs) the way
`kata submit` does (every level open, the sandbox where it works), and prints that wall time beside
the reference's verdict time, side by side in one run.

    python benchmarks/worst_case.py                     # every kata, a Python loop
    python benchmarks/worst_case.py token-batcher --loop c
    python benchmarks/worst_case.py --loop both         # also a loop inside C code

Two loops: `python` (`while True: pass`, which pytest-timeout's signal interrupts in the test) and
`c` (a regular expression that backtracks for ever inside the `re` module, which no signal
interrupts: the harness must kill the child and start a fresh one). Goal: at most 30 s for every
kata, on an idle two-core machine; the reference at most 3 s. On a busy machine both swell.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kata.catalog import Workbook  # noqa: E402
from kata.grading import IntegrityError, grade  # noqa: E402
from kata.results import timed_out as count_timed_out  # noqa: E402

GOAL_S, REFERENCE_GOAL_S = 30.0, 3.0
LOOPS = {
    "python": "while True:\n{indent}    pass",
    "c": "import re as _re; _re.match(r'(a|aa)*c', 'a' * 64)\n{indent}raise RuntimeError('unreachable')",
}


def hanging(stub: str, loop: str) -> str:
    """The stub with each `raise NotImplementedError...` line replaced by `loop`."""
    def swap(m: re.Match) -> str:
        return m.group(1) + LOOPS[loop].format(indent=m.group(1))
    return re.sub(r"(?m)^([ \t]*)raise NotImplementedError\b.*$", swap, stub)


def timed(kata, path: Path | None) -> tuple[float, object]:
    t = time.perf_counter()
    try:
        result = grade(kata, path)
    except IntegrityError as e:
        sys.exit(f"worst_case: {e}")
    return time.perf_counter() - t, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slugs", nargs="*", help="katas to time (default: every kata)")
    parser.add_argument("--workbook", default=None)
    parser.add_argument("--loop", choices=("python", "c", "both"), default="python")
    parser.add_argument("--no-reference", action="store_true", help="skip timing the reference")
    args = parser.parse_args()
    wb = Workbook.find(args.workbook)
    unknown = [s for s in args.slugs if s not in wb.slugs()]
    if unknown:
        sys.exit(f"worst_case: unknown kata {unknown[0]!r}; choose from {', '.join(wb.slugs())}")
    loops = ("python", "c") if args.loop == "both" else (args.loop,)
    head = f"{'kata':<26} {'reference s':>11} " + " ".join(f"{'hang (' + lp + ') s':>14}" for lp in loops)
    print(head + f"  tests  timed out  goal <= {GOAL_S:.0f} s")
    worst = 0.0
    for slug in args.slugs or wb.slugs():
        kata = wb.kata(slug)
        ref = "-" if args.no_reference else f"{timed(kata, None)[0]:.2f}"
        cells, n, timed_out = [], 0, []
        for lp in loops:
            with tempfile.TemporaryDirectory(prefix="kata-hang-") as tmp:
                path = Path(tmp) / kata.module
                path.write_text(hanging(kata.stub.read_text(encoding="utf-8"), lp), encoding="utf-8")
                wall, result = timed(kata, path)
            worst = max(worst, wall)
            n = len(result.tests)
            timed_out.append(str(count_timed_out(result)))
            cells.append(f"{wall:>14.2f}")
        mark = "" if all(float(c) <= GOAL_S for c in cells) else "  over"
        print(f"{slug:<26} {ref:>11} " + " ".join(cells) + f"  {n:>5}  {'/'.join(timed_out):>9}{mark}",
              flush=True)
    print(f"worst: {worst:.2f} s (goal <= {GOAL_S:.0f} s)")


if __name__ == "__main__":
    main()
