"""A kata's visible tests cut to the levels a learner has open: the workspace's test file.

test_visible.py is cut by its top-level statements (by `ast`, so a comment or a string inside a
test never confuses it): a test marked `@pytest.mark.level(n)` stays when level n is open, with
the comment lines just above it; a helper, constant or class without a level stays when a kept
statement uses its name (so a later level's helper and its example data leave with it); the
docstring, imports and other statements stay. With every level open the text is the file as
written, byte for byte, so line numbers in a failure report match the file the learner has.

    cut(text, [1])        -> the imports, `check` and level 1's tests
    cut(text, [1, 2, 3])  -> text (every level of the file)
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def _level(node: ast.stmt) -> int | None:
    """n of a `@pytest.mark.level(n)` decorator on `node` (None: no such decorator)."""
    for dec in getattr(node, "decorator_list", ()):
        if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "level"
                and dec.args and isinstance(dec.args[0], ast.Constant) and isinstance(dec.args[0].value, int)):
            return dec.args[0].value
    return None


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _uses(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def levels_in(text: str) -> set[int]:
    """The levels the file's tests are marked with."""
    return {lv for node in ast.parse(text).body if (lv := _level(node)) is not None}


def cut(text: str, levels: Iterable[int]) -> str:
    """`text` (a test_visible.py) with only the tests of `levels` and what they use."""
    tree = ast.parse(text)
    wanted = set(levels)
    if levels_in(text) <= wanted:
        return text
    body = tree.body
    keep = [False] * len(body)
    needed: set[str] = set()
    for i, node in enumerate(body):
        lv = _level(node)
        if lv is not None:
            keep[i] = lv in wanted
        elif not _defines(node):  # the docstring, imports, a bare call
            keep[i] = True
        if keep[i]:
            needed |= _uses(node)
    changed = True
    while changed:  # a helper a kept helper uses, and so on
        changed = False
        for i, node in enumerate(body):
            if not keep[i] and _level(node) is None and _defines(node) & needed:
                keep[i], changed = True, True
                needed |= _uses(node)
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    start = 0  # each statement owns the lines since the previous one ended (its comments)
    for node, kept in zip(body, keep, strict=True):
        end = node.end_lineno or node.lineno
        if kept:
            out.extend(lines[start:end])
        start = end
    out.extend(lines[start:])
    return "".join(out)
