"""The classroom's formats: Exercism's results.json (v3) and JUnit XML for CI importers.

Both are views of a graded SuiteResult and of the test files it ran; nothing here grades.

* `exercism_results(kata, result)`: the v3 shape Exercism's test runners write (docs/FORMATS.md):
  top level `version` (3), `status` (pass | fail | error), `message` (only for error), `tests`;
  each test `name` (a human name, not a node id), `status`, `message`, `output` (at most 500
  characters, a notice that the rest was cut included), `test_code` (the test function's body,
  dedented, without its decorators and `def` line, as Exercism's interface asks) and `task_id`
  (the level).
* `write_junit(graded, path)`: the one JUnit writer (check, submit, grade-batch, and the copy of
  the latest run in .kata/junit/). One <testsuite> per kata; by default only what the Jenkins xunit
  plugin's junit-10.xsd allows: each test's `file:line`, level, points and edge are lines of its
  <system-out>. `rich=True` adds `file` and `line` attributes and per-test <properties>, which
  GitHub annotation actions read but that schema rejects.

Example:
    exercism_results(kata, result)["tests"][0]
      -> {'name': 'Add', 'status': 'pass', 'message': None, 'output': None,
          'test_code': 'got = impl.add(2, 2)\\nassert same(got, 4), f"Called add(2, 2). Returned {got!r}, expected 4."',
          'task_id': 1}
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kata.catalog import Kata
from kata.results import ERROR, FAIL, PASS

if TYPE_CHECKING:  # grading imports pytest-free modules only; keep formats as light
    from kata.results import SuiteResult, TestResult

EXERCISM_OUTPUT_CAP = 500  # the whole `output`, the notice included
TRUNCATED = "\n[output truncated to 500 characters]"


# --- where a test lives --------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _functions(path: str) -> dict[str, tuple[int, str]]:
    """test function name -> (line of its `def`, its body dedented, without decorators and the
    `def` line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    lines = text.splitlines()
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            first = node.body[0]
            end = node.end_lineno or first.lineno
            head = lines[first.lineno - 1].encode()  # col_offset counts UTF-8 bytes
            if head[:first.col_offset].strip():  # `def test_x(): body`
                body = [head[first.col_offset:].decode(errors="replace"), *lines[first.lineno:end]]
            else:  # from the comments that open the body, if any, to its last line
                start = first.lineno
                while start - 1 > node.lineno and lines[start - 2].strip()[:1] in ("#", ""):
                    start -= 1
                body = lines[start - 1:end]
            found[node.name] = (node.lineno, textwrap.dedent("\n".join(body)).strip("\n"))
    return found


def locate(root: Path, node_id: str) -> tuple[str, int | None, str | None]:
    """(file relative to the workbook, line of the test's def, its body) for a pytest node id."""
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
    if len(text) <= EXERCISM_OUTPUT_CAP:
        return text
    return text[:EXERCISM_OUTPUT_CAP - len(TRUNCATED)] + TRUNCATED


def exercism_results(kata: Kata, result: SuiteResult) -> dict:
    """The results.json of Exercism's test-runner interface, version 3."""
    tests = []
    for t in result.tests:
        _file, _line, code = locate(kata.root, t.name)
        tests.append({
            "name": human_name(t.name),
            "status": t.status,
            "message": t.message if t.status != PASS else None,
            "output": _cap(t.output),
            "test_code": code or "",
            "task_id": t.task_id,
        })
    ran = any(t["status"] != ERROR for t in tests)
    if not tests or (result.status == ERROR and not ran):
        return {"version": 3, "status": ERROR,
                "message": result.message or "no test could run: see the first test's message",
                "tests": tests}
    status = PASS if tests and all(t["status"] == PASS for t in tests) else FAIL
    return {"version": 3, "status": status, "message": None, "tests": tests}


# --- JUnit ------------------------------------------------------------------------------


# XML 1.0 has no way to write these (a test may print an escape sequence or a NUL)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _case_lines(file: str, line: int | None, t: TestResult) -> str:
    """The head of a test case's <system-out>: where the test is, then its level, points and edge."""
    lines = [f"{file}:{line}"] if line is not None else []  # a redacted test has no place
    lines += [f"{key}: {value}" for key, value in (("level", t.task_id), ("points", f"{t.points:g}"),
                                                   ("edge", t.edge)) if value is not None]
    return "\n".join(lines)


def write_junit(graded: Sequence[tuple[Kata, SuiteResult]], path: Path, names: Sequence[str] | None = None,
                rich: bool = False) -> Path:
    """JUnit XML with one <testsuite> per kata (named by its slug, or by `names`).

    By default the file is valid under the Jenkins xunit plugin's junit-10.xsd (what Jenkins,
    GitLab and most importers accept): each <testcase> has name, classname (the suite's name and
    the test file's stem) and time; its <system-out> starts with `file:line`, `level: N`,
    `points: P` and `edge: ...` lines, then what the test printed; a suite's <properties> hold the
    points earned and possible. `rich`: also `file` and `line` attributes and a <properties> per
    test case (level, points, edge), the form GitHub annotation actions read; that schema rejects it.
    """
    import xml.etree.ElementTree as ET

    suites = ET.Element("testsuites", name="kata")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_time = 0.0
    for i, (kata, result) in enumerate(graded):
        name = _xml(names[i] if names else kata.slug)
        failures = sum(t.status == FAIL for t in result.tests)
        errors = sum(t.status == ERROR for t in result.tests)
        totals["tests"] += len(result.tests)
        totals["failures"] += failures
        totals["errors"] += errors
        total_time += result.duration
        suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(result.tests)),
                              failures=str(failures), errors=str(errors), skipped="0",
                              time=f"{result.duration:.3f}")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="points_earned", value=f"{result.points_earned:g}")
        ET.SubElement(props, "property", name="points_possible", value=str(result.points_possible))
        for t in result.tests:
            file, line, _code = locate(kata.root, t.name)
            attrs: dict[str, str] = {"name": _xml(t.name.partition("::")[2] or file),
                                     "classname": _xml(f"{name}.{Path(file).stem}"),
                                     "time": f"{t.duration:.3f}"}
            if rich and line is not None:  # a test found in its file (a redacted one is not)
                attrs.update(file=_xml(file), line=str(line))
            case = ET.SubElement(suite, "testcase", attrib=attrs)
            if rich:
                case_props = ET.SubElement(case, "properties")
                for key, value in (("level", t.task_id), ("points", f"{t.points:g}"), ("edge", t.edge)):
                    if value is not None:
                        ET.SubElement(case_props, "property", name=key, value=_xml(str(value)))
            if t.status in (FAIL, ERROR):
                tag = "failure" if t.status == FAIL else "error"
                node = ET.SubElement(case, tag, message=_xml((t.message or "")[:500]))
                node.text = _xml(t.detail or t.message or "")
            out = _case_lines(file, line, t) + (f"\n\n{t.output}" if t.output else "")
            if out:
                ET.SubElement(case, "system-out").text = _xml(out)
        if result.message:
            ET.SubElement(suite, "system-err").text = _xml(result.message)
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", f"{total_time:.3f}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    return path
