"""A submission that returns, from every method, an object that poses as a trusted kind (its class
names itself after pytest's approx module, and answers `.item()` as a numpy scalar would) and says
it equals anything, graded end to end: it scores what the plain stub scores (nothing: a stub fails
every test), give or take the few points a test that only wants no exception would give."""

from __future__ import annotations

import re
from pathlib import Path

from kata.catalog import Workbook
from kata.grading import grade

FORGED = '''

class _Forged:
    """Says it is pytest's approx (or a numpy scalar) and that it equals anything."""

    __module__ = "__MODULE__"

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def item(self):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return True


_FORGED = [_Forged]  # out of the module's namespace: the import check (below) would see it
del _Forged
'''


def forged_stub(stub: Path, dest: Path, module: str) -> Path:
    """The stub with every `raise NotImplementedError` answering a forged object instead (and
    every __init__ returning quietly)."""
    lines, method = [], ""
    for line in stub.read_text().splitlines():
        found = re.match(r"\s*def (\w+)\(", line)
        method = found.group(1) if found else method
        if line.strip() == "raise NotImplementedError":
            indent = line[: len(line) - len(line.lstrip())]
            line = indent + ("return None" if method == "__init__" else "return _FORGED[0]()")
        lines.append(line)
    out = dest / stub.name
    out.write_text("\n".join(lines) + FORGED.replace("__MODULE__", module))
    return out


def test_an_object_posing_as_approx_scores_what_the_stub_scores(tmp_path):
    kata = Workbook.find(Path(__file__).resolve().parents[1]).kata("lru-kv-cache")
    result = grade(kata, forged_stub(kata.stub, tmp_path, "_pytest.python_api"))
    passed = [t.name.split("::")[-1] for t in result.tests if t.status == "pass"]
    assert not result.tampered, result.tampered  # nothing to catch: the comparisons hold alone
    assert result.points_earned <= 3, (result.points_earned, passed)  # it earned 28 when trusted


def test_a_class_that_equals_anything_is_seen_at_import_whatever_module_it_names(tmp_path):
    kata = Workbook.find(Path(__file__).resolve().parents[1]).kata("lru-kv-cache")
    for module in ("lru_kv_cache", "builtins", "_pytest.python_api"):
        path = forged_stub(kata.stub, tmp_path, module)
        path.write_text(path.read_text() + "\n_Forged = _FORGED[0]\n")  # back in plain sight
        result = grade(kata, path)
        assert result.tampered and "compares equal to anything" in result.tampered, (module, result.tampered)
        assert result.points_earned == 0
