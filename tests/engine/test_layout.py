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


def test_no_module_reads_another_objects_private_attributes():
    """`obj._name` only on `self` or `cls`: state is changed through its owner's public methods."""
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                found.append(f"{path.relative_to(ENGINE)}:{node.lineno}: .{node.attr}")
    assert not found, found


def test_no_function_in_the_package_over_80_lines():
    """The engine and the rest of kata/ alike: a function reads on one screen or two."""
    package = ENGINE.parent
    long = [f"{path.relative_to(package)}: {node.name}, {node.end_lineno - node.lineno + 1} lines"
            for path in sorted(package.rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > 80]
    assert not long, long
