"""The engine stands alone: no module under kata/engine imports a kata module outside kata.engine
(at the top, inside a function, or through a relative import that climbs out of the package),
and a ceiling division is written once, as kata.engine.arith.cdiv."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "kata" / "engine"


def _imported(path: Path, top: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) for every import in the file, at the top or inside a function;
    `from M import a` gives M.a (so `from kata import grading` reads as kata.grading). `top` is
    the folder holding the `kata` package."""
    parts = path.relative_to(top).with_suffix("").parts
    package = list(parts[:-1])  # the package a relative import starts from
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = [] if node.level == 0 else package[:len(package) - (node.level - 1)]
            if node.level and node.level - 1 >= len(package):
                base = ["(above the top package)"]
            module = ".".join(base + ([node.module] if node.module else []))
            found += [(node.lineno, f"{module}.{alias.name}" if module else alias.name)
                      for alias in node.names]
    return found


def _outside_the_engine(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "(above the top package)" or parts[0] == "kata" and parts[1:2] != ["engine"]


def test_the_engine_imports_nothing_from_kata_outside_the_engine():
    top = ENGINE.parents[1]
    reaching_out = [f"{path.relative_to(top)}:{line}: {name}"
                    for path in sorted(ENGINE.rglob("*.py"))
                    for line, name in _imported(path, top) if _outside_the_engine(name)]
    assert not reaching_out, reaching_out


def test_the_walk_sees_relative_and_function_level_imports(tmp_path):
    """The check itself: each way of reaching out is caught, and the engine's own imports pass."""
    engine = tmp_path / "kata" / "engine"
    (engine / "adapters").mkdir(parents=True)
    probe = engine / "adapters" / "probe.py"
    probe.write_text("from .. import policy\nfrom ..arith import cdiv\nimport kata.engine.arith\n"
                     "from kata import engine\n"
                     "def f():\n    from ... import catalog\n    from ...output import error\n"
                     "    import kata.usage\n    from kata import grading\n    import kata\n"
                     "    from .... import elsewhere\n")
    names = [name for _, name in _imported(probe, tmp_path)]
    assert names == ["kata.engine.policy", "kata.engine.arith.cdiv", "kata.engine.arith",
                     "kata.engine", "kata.catalog", "kata.output.error", "kata.usage",
                     "kata.grading", "kata", "(above the top package).elsewhere"]
    assert [_outside_the_engine(n) for n in names] == [False] * 4 + [True] * 6


def test_a_ceiling_division_is_written_once_as_cdiv():
    """`-(-n // size)` and friends: the engine says cdiv(n, size) (kata/engine/arith.py)."""
    found = [f"{path.relative_to(ENGINE.parent)}:{i}: {line.strip()}"
             for path in sorted(ENGINE.rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if "-(-" in line]
    assert not found, found
