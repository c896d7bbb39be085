"""The GitHub Classroom autograding template in AUTHORING.md, run on a student bundle: one check
per level, each passing on the reference and failing on the stub."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

from typer.testing import CliRunner

from kata.catalog import Workbook
from kata.cli import app
from tests.conftest import REPO


def template() -> dict:
    text = (REPO / "AUTHORING.md").read_text()
    block = re.search(r"```json\n(.*?)```", text.split("Autograding in GitHub Classroom", 1)[1], re.S)
    return json.loads(block.group(1))


def run_check(test: dict, cwd) -> int:
    argv = shlex.split(test["run"])
    assert argv[0] == "python"
    return subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=120).returncode


def test_the_classroom_template_grades_a_bundle_one_check_per_level(tmp_path):
    checks = template()["tests"]
    kata = Workbook.find().kata("lru-kv-cache")
    assert [c["points"] for c in checks] == [lv.points for lv in kata.levels]
    assert all(set(c) == {"name", "setup", "run", "input", "output", "comparison", "timeout", "points"}
               for c in checks)
    bundle = tmp_path / "bundle"
    assert CliRunner().invoke(app, ["bundle", "--student", str(bundle)]).exit_code == 0
    workspace = bundle / "workspace"
    workspace.mkdir()
    shutil.copyfile(bundle / "katas" / "lru-kv-cache" / "lru_kv_cache.py", workspace / "lru_kv_cache.py")
    assert [run_check(c, bundle) for c in checks] == [1, 1, 1]  # the stub fails every level
    shutil.copyfile(kata.solution, workspace / "lru_kv_cache.py")
    assert [run_check(c, bundle) for c in checks] == [0, 0, 0]
