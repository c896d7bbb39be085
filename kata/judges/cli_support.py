"""Small helpers of `kata engine`'s commands (kata/judges/cli.py): one-line errors with exit code
2, argument checks, the console, and loading a learner's policy file. Only typer and the standard
library at module level, so `kata --help` stays fast."""

from __future__ import annotations

import os
from pathlib import Path

import typer


def _fail(message: str) -> None:
    """One `error:` line on stderr, wrapped at spaces like every kata error, and exit code 2."""
    from kata.output import error

    error(message)
    raise typer.Exit(2)


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        _fail(f"unknown {name} {value!r}; choose one of {', '.join(allowed)}")


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            _fail(f"--{name.replace('_', '-')} must be > 0, got {value}")


def _console():
    """Where the engine's reports print: on a terminal, kata's own console (the one `paged()`
    collects, so a report taller than the screen is paged); otherwise a plain one."""
    from rich.console import Console

    from kata.output import console, on_terminal

    if on_terminal() and console().is_terminal:
        return console()
    plain = bool(os.environ.get("KATA_PLAIN")) or bool(os.environ.get("NO_COLOR"))
    return Console(highlight=False, no_color=plain, width=int(os.environ.get("COLUMNS") or 100) if plain else None)


def _load_plugin(kind: str, path: Path):
    """A learner policy through engine.adapters.<module>.load(path)."""
    import importlib

    from kata.engine.policy import PolicyError, check_policy

    module_name = {"batcher": "token_batcher", "scheduler": "priority_scheduler"}[kind]
    if not path.is_file():
        _fail(f"--{kind} {path}: no such file")
    try:
        module = importlib.import_module(f"kata.engine.adapters.{module_name}")
    except ModuleNotFoundError as e:
        if e.name == f"kata.engine.adapters.{module_name}":
            _fail(f"the --{kind} plug-in is not available yet "
                  f"(kata/engine/adapters/{module_name}.py is missing)")
        raise
    try:
        return check_policy(module.load(path), kind=kind)
    except PolicyError as e:
        _fail(str(e))
    except Exception as e:  # the learner's file failed to import or build
        _fail(f"--{kind} {path}: could not load the policy: {type(e).__name__}: {e}")
