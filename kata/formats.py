"""The classroom's formats: Exercism's results.json (v3) and JUnit XML for CI annotations.

Both are views of a graded SuiteResult and of the test files it ran; nothing here grades.

* `exercism_results(kata, result)`: the v3 shape Exercism's test runners write (docs/FORMATS.md):
  top level `version` (3), `status` (pass | fail | error), `message` (only for error), `tests`;
  each test `name` (a human name, not a node id), `status`, `message`, `output` (at most 500
  characters, then a notice), `test_code` (the test function's source) and `task_id` (the level).
* `write_junit(graded, path)`: one <testsuite> per kata, each <testcase> with `file` and `line`, so
  CI systems annotate the line of the test that failed.

Example:
    exercism_results(kata, result)["tests"][0]
      -> {'name': 'Add', 'status': 'pass', 'message': None, 'output': None,
          'test_code': 'def test_add(impl): ...', 'task_id': 1}
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from typing import TYPE_CHECKING

from kata.catalog import Kata

if TYPE_CHECKING:  # grading imports pytest-free modules only; keep formats as light
    from kata.grading import SuiteResult

EXERCISM_OUTPUT_CAP = 500
TRUNCATED = "\n[output truncated: the runner keeps the first 500 characters]"


# --- where a test lives --------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _functions(path: str) -> dict[str, tuple[int, str]]:
    """test function name -> (line of its `def`, its source without decorators)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    lines = text.splitlines()
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            end = node.end_lineno or node.lineno
            found[node.name] = (node.lineno, "\n".join(lines[node.lineno - 1:end]))
    return found


def locate(root: Path, node_id: str) -> tuple[str, int | None, str | None]:
    """(file relative to the workbook, line of the test's def, its source) for a pytest node id."""
    file, _, rest = node_id.partition("::")
    func = rest.split("::")[-1].split("[", 1)[0]
    line, code = _functions(str(root / file)).get(func, (None, None))
    return file, line, code


def human_name(node_id: str) -> str:
    """'graders/adder/test_adder.py::test_div_by_zero[1-0]' -> 'Div by zero [1-0]'."""
    rest = node_id.partition("::")[2] or node_id
    func, _, params = rest.split("::")[-1].partition("[")
    words = func.removeprefix("test_").removeprefix("test").replace("_", " ").strip() or func
    name = words[0].upper() + words[1:]
    return f"{name} [{params}" if params else name


# --- Exercism ---------------------------------------------------------------------------


def _cap(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= EXERCISM_OUTPUT_CAP else text[:EXERCISM_OUTPUT_CAP] + TRUNCATED


def exercism_results(kata: Kata, result: SuiteResult) -> dict:
    """The results.json of Exercism's test-runner interface, version 3."""
    tests = []
    for t in result.tests:
        _file, _line, code = locate(kata.root, t.name)
        tests.append({
            "name": human_name(t.name),
            "status": t.status,
            "message": t.message if t.status != "pass" else None,
            "output": _cap(t.output),
            "test_code": code or "",
            "task_id": t.task_id,
        })
    ran = any(t["status"] != "error" for t in tests)
    if not tests or (result.status == "error" and not ran):
        return {"version": 3, "status": "error",
                "message": result.message or "no test could run: see the first test's message",
                "tests": tests}
    status = "pass" if tests and all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 3, "status": status, "message": None, "tests": tests}


# --- JUnit ------------------------------------------------------------------------------


def write_junit(graded: list[tuple[Kata, SuiteResult]], path: Path, names: list[str] | None = None) -> Path:
    """JUnit XML with one <testsuite> per kata (named by its slug, or by `names`) and file/line
    per case."""
    import xml.etree.ElementTree as ET

    suites = ET.Element("testsuites")
    for i, (kata, result) in enumerate(graded):
        failures = sum(t.status == "fail" for t in result.tests)
        errors = sum(t.status == "error" for t in result.tests)
        suite = ET.SubElement(suites, "testsuite", name=names[i] if names else kata.slug,
                              tests=str(len(result.tests)),
                              failures=str(failures), errors=str(errors), skipped="0",
                              time=f"{result.duration:.3f}")
        for t in result.tests:
            file, line, _code = locate(kata.root, t.name)
            attrs: dict[str, str] = {"classname": f"{kata.slug}.{Path(file).stem}",
                                     "name": t.name.partition("::")[2] or file,
                     "time": f"{t.duration:.3f}"}
            if line is not None:  # a test found in its file (a redacted one is not)
                attrs.update(file=file, line=str(line))
            case = ET.SubElement(suite, "testcase", attrib=attrs)
            props = ET.SubElement(case, "properties")
            for key, value in (("level", t.task_id), ("points", t.points), ("edge", t.edge)):
                if value is not None:
                    ET.SubElement(props, "property", name=key, value=str(value))
            if t.status in ("fail", "error"):
                tag = "failure" if t.status == "fail" else "error"
                node = ET.SubElement(case, tag, message=(t.message or "")[:500])
                node.text = t.detail or t.message or ""
        if result.message:
            ET.SubElement(suite, "system-err").text = result.message
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    return path


def redacted(result: SuiteResult) -> SuiteResult:
    """What a live session may show of a hidden-suite result: each test's level and pass/fail,
    named 'hidden test N'; no messages, edge texts, output or file names."""
    from dataclasses import replace

    tests = [replace(t, name=f"hidden::hidden test {i}", message=None, detail=None, output=None,
                     edge=None) for i, t in enumerate(result.tests, 1)]
    return replace(result, tests=tests, message=None)
