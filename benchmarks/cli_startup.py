"""How quick is `kata --help`? Median wall time next to a bare Typer app with the same commands.

Both run as fresh interpreters, interleaved, in one run, so machine noise hits both alike, and
both from bytecode compiled by an untimed first run (into a temporary PYTHONPYCACHEPREFIX), as
an installed package would be: with PYTHONDONTWRITEBYTECODE set, every run would otherwise
recompile kata's modules from source and time the compiler.

    python benchmarks/cli_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bare_app_source() -> str:
    """A Typer app with kata's command names and settings, and nothing behind them."""
    sys.path.insert(0, str(REPO))
    import typer.main

    from kata.cli import app

    group = typer.main.get_command(app)
    lines = ["import typer", "app = typer.Typer(add_completion=False, rich_markup_mode=None)"]
    for name in group.commands:
        fn = name.replace("-", "_") + "_cmd"
        lines += [f"@app.command({name!r})", f"def {fn}():", f"    '''{name}.'''"]
    lines += ["app(prog_name='kata')"]
    return "\n".join(lines) + "\n"


def time_once(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "bare_app.py").write_text(bare_app_source())
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        commands = {
            "kata --help": [sys.executable, "-m", "kata", "--help"],
            "bare Typer app --help": [sys.executable, "-c",
                                      f"import sys; sys.path.insert(0, {tmp!r}); import bare_app",
                                      "--help"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        for cmd in commands.values():
            time_once(cmd, env)  # compiles and caches the bytecode
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                times[name].append(time_once(cmd, env))
    base = statistics.median(times["bare Typer app --help"])
    print(f"{'command':<24} {'median ms':>10} {'vs bare':>8}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<24} {med * 1000:>10.1f} {med / base:>7.2f}x")


if __name__ == "__main__":
    main()
