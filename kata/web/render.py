"""HTML for the practice room from what the command line prints as text: a prompt's markdown (code
blocks highlighted, tables), a source file, and a visible test's call, expected and actual value.

Everything here returns strings; nothing reads the store or the clock.

    >>> case_of("t::test_add", "Called add(2, 2). Returned 0, expected 4.")["call"]
    'add(2, 2)'
"""

from __future__ import annotations

import ast
import html
import re
from functools import lru_cache
from pathlib import Path


def _highlight(code: str, lang: str, _attrs=None) -> str:
    """A fenced block's code as HTML spans coloured by its language; '' lets markdown-it escape it
    plainly (no language, or one the highlighter does not know)."""
    if not lang:
        return ""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        lexer = get_lexer_by_name(lang)
    except Exception:  # noqa: BLE001 - a language the highlighter does not know: plain text
        return ""
    return highlight(code, lexer, HtmlFormatter(nowrap=True, noclasses=True, style="friendly"))


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    # raw HTML in a prompt is shown as text, never passed through to the page
    return MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")


def markdown_html(text: str) -> str:
    """A prompt's markdown as HTML: what `kata show` prints, for the page."""
    return _markdown().render(text)


def source_html(code: str) -> str:
    """A whole Python file as highlighted HTML, in a <pre>."""
    body = _highlight(code, "python") or html.escape(code)
    return f'<pre class="source"><code>{body}</code></pre>'


# --- a visible test's call, expected and actual value -----------------------------------------

_CALLED = re.compile(r"Called (?P<call>.+?)\. (?:Returned|Raised) (?P<actual>.+?), expected (?P<expected>.+?)\.?\s*$",
                     re.DOTALL)
_ASSERT = re.compile(r"^(?:AssertionError: )?assert (?P<actual>.+?) == (?P<expected>.+)$")
_WHERE_CALL = re.compile(r"^\s*\+\s+where .+? = <function (?P<fn>\w+) at 0x[0-9a-f]+>(?P<args>\(.*\))\s*$")
_SOURCE_ASSERT = re.compile(r"^\s+assert (?P<left>.+?) == (?P<right>.+?)(?:, .*)?$")


def case_of(name: str, message: str | None, detail: str | None = None,
            source: dict[str, tuple[str, str]] | None = None) -> dict:
    """What the page shows of one visible test: its call, expected and actual value where they can
    be read: the test's message "Called f(x). Returned y, expected z.", or pytest's "assert y ==
    z" with the line that made the call; else the test file's first `assert call == expected` in
    the test, with, as the actual value, the expected one for a test that passed, or the first
    line of its message (an exception, say) for one that did not."""
    func = name.split("::")[-1]
    out: dict[str, str | None] = {"call": None, "expected": None, "actual": None}
    first = (message or "").strip()
    m = _CALLED.search(first)
    if m:
        return {k: m.group(k).strip() for k in ("call", "expected", "actual")}
    lines = first.splitlines()
    m = _ASSERT.match(lines[0]) if lines else None
    if m:
        out.update(actual=m.group("actual"), expected=m.group("expected"))
        for ln in lines[1:]:
            w = _WHERE_CALL.match(ln)
            if w:
                out["call"] = w.group("fn") + w.group("args")
                break
        for ln in (detail or "").splitlines():  # the source line pytest shows: the call as written
            s = _SOURCE_ASSERT.match(ln)
            if s and not ln.lstrip().startswith("E"):
                out["call"] = _plain_call(s.group("left"))
                break
        return out
    if source and func in source:  # passed: the value expected; else what happened instead
        call, expected = source[func]
        actual = expected if message is None else (lines[0] if lines else None)
        return {"call": call, "expected": expected, "actual": actual}
    return out


def _plain_call(expr: str) -> str:
    """`impl.add(1, 2)` -> `add(1, 2)`: the module's name is the test's, not the learner's."""
    return re.sub(r"\bimpl\.", "", expr.strip())


def first_asserts(path: Path) -> dict[str, tuple[str, str]]:
    """test function -> (call, expected) of its first `assert X == Y` (a name X bound by an
    assignment just before stands for that assignment's value); {} for a file that cannot be read."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            pair = _first_assert(node)
            if pair:
                found[node.name] = pair
    return found


def _first_assert(fn: ast.FunctionDef) -> tuple[str, str] | None:
    bound: dict[str, ast.expr] = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
        if (isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1
                and isinstance(stmt.test.ops[0], ast.Eq)):
            left, right = stmt.test.left, stmt.test.comparators[0]
            if isinstance(left, ast.Name) and left.id in bound:
                left = bound[left.id]
            if isinstance(right, ast.Name) and right.id in bound:
                right = bound[right.id]
            if not isinstance(left, ast.Call):
                return None
            return _plain_call(ast.unparse(left)), _short(ast.unparse(right))
    return None


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
