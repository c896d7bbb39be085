"""The pytest plugin: the derandomized profile reaches conftest-time settings, and sweep mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kata.catalog import load_kata
from kata.grading import Limits, caught_bugs
from tests.conftest import FIXTURES


def _pytest(folder, *args):
    return subprocess.run([sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=folder)


def test_settings_built_in_a_conftest_are_derandomized_in_a_workbook(tmp_path):
    (tmp_path / "katas").mkdir()
    (tmp_path / "graders").mkdir()
    (tmp_path / "conftest.py").write_text("from hypothesis import settings\nEARLY = settings(max_examples=5)\n")
    (tmp_path / "test_h.py").write_text(
        "from conftest import EARLY\n\ndef test_profile():\n"
        "    assert EARLY.derandomize and EARLY.database is None\n"
    )
    run = _pytest(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


UNRELATED_TEST = """
import pytest
from hypothesis import given, settings, strategies as st

def test_hypothesis_keeps_its_defaults():
    # hypothesis' own profile: "default", or "ci" where a CI variable is set
    name = settings.get_current_profile_name()
    assert name in ("default", "ci")
    assert settings().derandomize is settings.get_profile(name).derandomize
    assert (settings().database is None) is (settings.get_profile(name).database is None)

def test_no_impl_fixture(request):
    with pytest.raises(pytest.FixtureLookupError):
        request.getfixturevalue("impl")
"""


def test_an_unrelated_project_in_the_same_environment_is_left_alone(tmp_path):
    """Installing kata changes no other project: no profile, no `impl` fixture, no markers."""
    (tmp_path / "test_other.py").write_text(UNRELATED_TEST)
    run = _pytest(tmp_path)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr
    # kata's markers are unknown there: --strict-markers rejects them
    (tmp_path / "test_marked.py").write_text("import pytest\n\n@pytest.mark.level(1)\ndef test_m():\n    pass\n")
    strict = _pytest(tmp_path, "--strict-markers")
    assert strict.returncode != 0 and "'level' not found in `markers`" in strict.stdout, strict.stdout


def test_a_project_in_a_folder_below_a_workbook_is_left_alone(tmp_path):
    """A temporary folder inside a checkout (TMPDIR there, say) is not part of the workbook."""
    (tmp_path / "katas").mkdir()
    (tmp_path / "graders").mkdir()
    other = tmp_path / "tmp" / "other"
    other.mkdir(parents=True)
    (other / "test_other.py").write_text(UNRELATED_TEST)
    run = _pytest(other)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr
    inside = tmp_path / "graders" / "g"
    inside.mkdir()
    (inside / "test_g.py").write_text("from hypothesis import settings\n\n"
                                      "def test_profile():\n    assert settings().derandomize\n")
    assert _pytest(inside).returncode == 0


def test_a_kata_option_activates_the_plugin_outside_a_workbook(tmp_path):
    (tmp_path / "test_other.py").write_text(
        "from hypothesis import settings\n\ndef test_profile():\n    assert settings().derandomize\n")
    run = _pytest(tmp_path, "--kata-impl-module", "unused")
    assert run.returncode == 0, run.stdout + run.stderr


def test_sweep_grades_a_whole_bug_zoo_in_one_process(fixture_workbook):
    adder = load_kata(fixture_workbook, "adder")
    hostile = FIXTURES / "hostile"
    bugs = [adder.solution, hostile / "os_exit.py", hostile / "py_loop.py", hostile / "syntax_error.py",
            hostile / "print_50mb.py"]
    verdict = caught_bugs(adder, bugs, Limits(test_timeout=2, hard_test_grace=2, wall_timeout=120))
    by_name = {Path(p).stem: caught for p, caught in verdict.items()}
    assert by_name == {"adder": False, "os_exit": True, "py_loop": True, "syntax_error": True,
                       "print_50mb": True}


def test_each_session_in_one_process_imports_the_implementation_afresh(tmp_path):
    # mutation testing runs several pytest sessions in one process (forking per mutant); a memo
    # table the first session filled must not be there in the next
    impl = tmp_path / "memo.py"
    impl.write_text("SEEN = []\n")
    (tmp_path / "test_memo.py").write_text(
        "def test_fresh(impl):\n    assert impl.SEEN == []\n    impl.SEEN.append(1)\n")
    driver = (
        "import sys, pytest\n"
        f"args = [{str(tmp_path)!r}, '-q', '-p', 'no:cacheprovider', '--kata-impl', {str(impl)!r}]\n"
        "codes = [pytest.main(args) for _ in range(2)]\n"
        "sys.exit(max(int(c) for c in codes))\n"
    )
    run = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("1 passed") == 2, run.stdout
