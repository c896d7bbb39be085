"""docs/ARCHITECTURE.md stays true to the code: every module file under kata/ has its line there.

A module is named by its path from the repository root, e.g. `kata/engine/policy.py` (a package
by its `__init__.py`): a line names it when, after any leading `|`, spaces and one backtick, the
line begins with that path. Each module needs exactly one such line, and no line may name a file
that is not there. The files are listed when the test runs, so a module added later needs its line.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
LINE = re.compile(r"\|?\s*`?(kata/[\w/]*?\w+\.py)\b")  # the path a line begins with


def modules() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "kata").rglob("*.py")
                  if "__pycache__" not in p.parts)


def named() -> Counter[str]:
    """path -> how many lines of the document begin with it."""
    found = (LINE.match(line) for line in DOC.read_text().splitlines())
    return Counter(m.group(1) for m in found if m)


def test_every_module_under_kata_has_one_line_in_the_architecture():
    lines = named()
    missing = [m for m in modules() if lines[m] == 0]
    twice = [m for m in modules() if lines[m] > 1]
    assert not missing, f"docs/ARCHITECTURE.md has no line for {missing}"
    assert not twice, f"docs/ARCHITECTURE.md has more than one line for {twice}"


def test_the_architecture_names_no_module_that_is_gone():
    mentioned = set(re.findall(r"\bkata/[\w/]*?\w+\.py\b", DOC.read_text()))
    gone = sorted(mentioned - set(modules()))
    assert not gone, f"docs/ARCHITECTURE.md names files that are not there: {gone}"


def test_the_match_reads_table_rows_and_indented_lines():
    examples = ["| `kata/engine/policy.py` | the contract |", "  kata/cli.py   the command line",
                "`kata/judges/cli.py` sits", "see kata/results.py for verdicts", "| `kata/` | the tool |"]
    found = [m.group(1) if (m := LINE.match(e)) else None for e in examples]
    assert found == ["kata/engine/policy.py", "kata/cli.py", "kata/judges/cli.py", None, None]
