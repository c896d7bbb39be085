"""The engine stays readable: no file over 300 lines, no class over 250 (the scheduler and the
block manager read as their algorithms; bookkeeping lives in its own modules)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "kata" / "engine"


def test_no_engine_file_over_300_lines_and_no_class_over_250():
    too_long = []
    for path in sorted(ENGINE.rglob("*.py")):
        text = path.read_text()
        if len(text.splitlines()) > 300:
            too_long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 250:
                too_long.append(f"{path.name}: class {node.name}, "
                                f"{node.end_lineno - node.lineno + 1} lines")
    assert not too_long, too_long
