"""`python -m tests.busy [--workers N] -- COMMAND...`: run COMMAND beside a busy neighbour.

One process per core (or N) spins on the CPU for as long as COMMAND runs, as another job on a
shared two-core machine does; then they stop, and the exit code is COMMAND's. The suite must pass
this way too (docs/DEVELOPMENT.md): no test may depend on a quiet machine.

    python -m tests.busy -- .venv/bin/pytest tests/test_grading.py
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def spin(stop) -> None:
    """Burn CPU until `stop` is set (checked every few milliseconds of work)."""
    x = 0
    while not stop.is_set():
        for i in range(20_000):
            x = (x * 31 + i) % 1_000_003


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.busy", description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                        help="spinning processes (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.workers)]
    for w in workers:
        w.start()
    started = time.monotonic()
    try:
        code = subprocess.call(command)
    finally:
        stop.set()
        for w in workers:
            w.join(5)
            if w.is_alive():
                w.kill()
    print(f"busy: {args.workers} spinning process(es) beside it; it took {time.monotonic() - started:.0f} s",
          file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
