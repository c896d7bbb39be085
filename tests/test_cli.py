"""The command line end to end, through CliRunner, on the fixture workbook."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kata.cli import app
from tests.conftest import REPO

runner = CliRunner()


def kata(*args, code=0):
    """Run the CLI; `code=None` accepts any exit code."""
    result = runner.invoke(app, list(args))
    assert code is None or result.exit_code == code, result.output
    return result


@pytest.fixture
def wb(fixture_workbook):
    return fixture_workbook


def workspace_file(state):
    return state / "workspace" / "adder.py"


def test_full_session_with_the_reference_gets_full_marks(wb, isolated_state):
    out = kata("start", "mini").output
    assert "Session 1 started" in out and "workspace/adder.py" in out
    shutil.copy(wb / "solutions" / "adder.py", workspace_file(isolated_state))
    assert "2/2 pass" in kata("check", "adder").output
    sub = kata("submit", "adder").output
    assert "30/30" in sub and "Details open after the session" in sub
    assert "subtracts to a negative" not in sub  # no edge descriptions while live
    status = json.loads(kata("status", "--json").output)
    assert status["questions"][0]["hidden"] == [30.0, 30.0]
    kata("finish")
    rev = kata("review", "--all").output
    assert "30/30 points" in rev and "subtracts to a negative" in rev
    data = json.loads(kata("review", "1", "--json").output)
    assert data["points_earned"] == 30 and data["questions"][0]["submissions"] == 1
    hist = json.loads(kata("history", "--json").output)["sessions"]
    assert hist[0]["points_earned"] == 30 and hist[0]["status"] == "finished"
    # every --json output is one object that starts with its shape's version (docs/FORMATS.md)
    for args in (["list"], ["show", "adder"], ["status"], ["review", "1"], ["history"], ["progress"],
                 ["snapshots", "adder"], ["check", "adder"], ["submit", "adder"], ["validate", "adder"]):
        data = json.loads(kata(*args, "--json", code=None).output)
        assert isinstance(data, dict) and next(iter(data)) == "version" and data["version"] == 2, args


def test_stub_scores_zero_with_per_level_output(wb, isolated_state):
    kata("start", "adder", "--reveal", "all")
    check = kata("check", code=1).output
    assert "0/2 pass" in check and "NotImplementedError" in check
    sub = kata("submit", code=1).output
    assert "0/2" in sub and "0/3" in sub and "0/30" in sub
    data = json.loads(kata("submit", "--json", code=1).output)["results"][0]
    assert data["status"] == "fail" and data["points_earned"] == 0
    assert [lv["passed"] for lv in data["levels"]] == [0, 0]
    # practising one kata: a missed test's edge text, never its name or message
    assert data["tests"][0]["edge"] == "adds two numbers" and "message" not in data["tests"][0]
    kata("finish")
    rev = kata("review", "--all").output
    assert "0/30 points" in rev and "FAIL L2 test_div_by_zero (division by zero raises)" in rev


def test_review_and_solution_are_refused_while_live(wb):
    kata("start", "adder")
    assert "still live" in kata("review", code=2).output
    assert "is live" in kata("solution", "adder", code=2).output
    assert "still live" in kata("start", "mini", code=2).output
    assert "Abandoned session 1" in kata("start", "mini", "--abandon").output
    assert "is live" in kata("solution", "adder", code=2).output  # mini holds adder too
    kata("finish")
    assert "def add" in kata("solution", "adder").output


def test_start_over_learner_file_says_where_it_was_archived(wb, isolated_state):
    kata("start", "adder")
    workspace_file(isolated_state).write_text("mine\n")
    kata("finish")
    out = kata("start", "adder").output
    # the state folder is elsewhere (KATA_STATE_DIR): its paths are named in full
    assert f"archived to {isolated_state.resolve() / '.kata' / 'archive'}/" in out
    archived = list((isolated_state / ".kata" / "archive").rglob("adder.py"))
    assert [p.read_text() for p in archived] == ["mine\n"]


def test_hints_are_revealed_one_at_a_time(wb):
    assert "Hint 1 of 2 for level 1: Use +." in kata("hint", "adder").output
    assert "Hint 2 of 2 for level 1: Use -." in kata("hint", "adder").output
    assert "Hint 1 of 1 for level 2: Use *." in kata("hint", "adder").output
    assert "All 3 hints" in kata("hint", "adder").output


def test_user_errors_are_one_line_with_exit_2(wb):
    for args, text in [
        (["start", "nope"], "'nope' is neither an exam nor a kata"),
        (["show", "nope"], "unknown kata 'nope'"),
        (["submit"], "no live session"),
        (["check", "adder"], "run `kata start adder` first"),
        (["review", "7"], "no session 7"),
        (["finish"], "no live session to finish"),
        (["validate"], "give a kata SLUG or --all"),
        (["start", "adder", "--minutes", "0"], "--minutes must be a positive"),
    ]:
        result = kata(*args, code=2)
        assert text in result.output, (args, result.output)
        assert "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1, result.output


def test_bad_kata_toml_is_one_line(wb):
    path = wb / "katas" / "adder" / "kata.toml"
    path.write_text(path.read_text() + "\nsurprise = 1\n")
    result = kata("list", code=2)
    assert "kata.toml: levels[2]: unknown key 'surprise'" in result.output


def test_list_and_show(wb):
    data = json.loads(kata("list", "--json").output)
    assert data["katas"][0]["slug"] == "adder" and data["exams"][0]["name"] == "mini"
    assert "Adder" in kata("show", "adder").output


def test_validate_json_on_the_fixture(wb):
    from kata.zoo import make_patch

    (wb / "tests" / "bugs" / "adder").mkdir(parents=True)
    ref = (wb / "solutions" / "adder.py").read_text()
    bug = ref.replace("return -a", "return a")
    (wb / "tests" / "bugs" / "adder" / "neg_forgets_sign.patch").write_text(
        make_patch(ref, bug, "adder", "neg_forgets_sign",
                   {"Bug": "neg returns a", "Level": "2", "Breaks": "neg(a) is -a"}))
    bug = ref.replace("return a - b", "return b - a")  # a level-1 bug, so level-1 hunts can be drawn
    (wb / "tests" / "bugs" / "adder" / "sub_reversed.patch").write_text(
        make_patch(ref, bug, "adder", "sub_reversed",
                   {"Bug": "sub computes b - a", "Level": "1", "Breaks": "sub(a, b) is a - b"}))
    data = json.loads(kata("validate", "adder", "--json").output)
    checks = {c["name"]: c["ok"] for c in data["katas"][0]["checks"]}
    assert data["ok"], data
    assert checks == {"schema": True, "strict": True, "api": True, "zoo-headers": True, "markers": True,
                      "reference": True, "stub": True, "hunts": True, "deterministic": True,
                      "bug-zoo": True}
    (wb / "tests" / "bugs" / "adder" / "sub_reversed.patch").unlink()
    (wb / "tests" / "bugs" / "adder" / "neg_forgets_sign.patch").write_text(
        make_patch(ref, ref.replace("return -a", "return a"), "adder", "neg_forgets_sign",
                   {"Bug": "neg returns a", "Level": "2"}))
    data = json.loads(kata("validate", "adder", "--json", code=1).output)
    failed = {c["name"]: c["detail"] for c in data["katas"][0]["checks"] if not c["ok"]}
    assert set(failed) == {"zoo-headers", "hunts"}, failed
    assert "neg_forgets_sign.patch: no Breaks: line" in failed["zoo-headers"]
    assert "no zoo bug of level 1" in failed["hunts"]


def test_help_does_not_import_heavy_modules():
    code = ("import sys, kata.cli; heavy = [m for m in ('pytest', 'hypothesis', 'numpy', 'rich.console') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_python_dash_m_kata_works():
    out = subprocess.run([sys.executable, "-m", "kata", "--help"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0 and "Usage: kata" in out.stdout


def test_a_clone_runs_python_cli_py_as_kata(isolated_state):
    """The clone's top-level cli.py is the same command line as `python -m kata` (and `kata`)."""
    import os

    def run(*args):
        done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                              env=dict(os.environ), timeout=120)
        return done.returncode, done.stdout, done.stderr

    for args in (["--version"], ["list", "--json"], ["--help"]):
        via_root = run("cli.py", *args)
        assert via_root[0] == 0, via_root
        assert via_root == run("-m", "kata", *args), args
    assert json.loads(run("cli.py", "list", "--json")[1])["katas"]


def test_the_root_cli_py_is_an_entry_only():
    """Importing the clone's cli.py runs no command: it only names kata.cli's app."""
    code = ("import sys; sys.argv = ['cli.py', 'start']; import cli; "
            "print('kata.cli' in sys.modules, cli.app is sys.modules['kata.cli'].app)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True True", out.stdout + out.stderr


def test_python_dash_m_kata_never_imports_the_root_cli_module():
    code = ("import runpy, sys\nsys.argv = ['kata', '--help']\ntry:\n    runpy.run_module('kata', run_name='__main__')\n"
            "except SystemExit:\n    pass\nprint('ROOT-CLI' if 'cli' in sys.modules else 'NO-ROOT-CLI')")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip().endswith("NO-ROOT-CLI"), out.stdout + out.stderr


def _imports(package: str) -> dict[str, set[str]]:
    """module -> the modules of `package` it imports, at the top or inside functions (not the
    names an `if TYPE_CHECKING:` block imports for annotations only: they never run)."""
    import ast

    graph = {}
    for f in sorted((REPO / package).rglob("*.py")):
        name = ".".join(f.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        deps = set()
        tree = ast.parse(f.read_text())
        for block in [n for n in ast.walk(tree) if isinstance(n, ast.If)
                      and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"]:
            block.body = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


@pytest.mark.parametrize("package", ["kata"])
def test_no_import_cycle(package):
    graph = _imports(package)
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_doctor_moves_a_damaged_store_aside_and_keeps_the_workspace(wb, isolated_state):
    kata("start", "adder")
    ws = workspace_file(isolated_state)
    ws.write_text("# my work\n")
    db = isolated_state / ".kata" / "kata.db"
    assert "healthy" in kata("doctor").output
    for extra in ("-wal", "-shm"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    db.write_bytes(b"garbage" * 500)

    # From here each command is its own process, as it is for a user: SQLite shares a file's state
    # between the connections of one process, so an in-process run could see the old data.
    def run(*args, code=0):
        import os

        done = subprocess.run([sys.executable, "-m", "kata", *args], capture_output=True, text=True,
                              env=dict(os.environ), timeout=120)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done.stdout + done.stderr

    broken = run("status", code=2)
    assert "the store is damaged" in broken and "kata doctor" in broken
    assert len(broken.strip().splitlines()) == 1
    fixed = run("doctor")
    assert "was damaged: moved to" in fixed and "workspace/ files were not touched" in fixed
    assert ws.read_text() == "# my work\n"
    assert list((isolated_state / ".kata").glob("damaged-*/kata.db"))
    assert "No live session" in run("status")


def test_doctor_names_a_submission_row_edited_outside_kata(wb, isolated_state):
    import sqlite3

    kata("start", "adder")
    kata("submit", "adder", code=1)  # the stub: a row with no points
    assert "healthy" in kata("doctor").output
    db = isolated_state / ".kata" / "kata.db"
    con = sqlite3.connect(db)
    con.execute("UPDATE submissions SET points_earned = points_possible")  # 100/100, by hand
    con.commit()
    con.close()
    said = kata("doctor", code=1).output
    assert "1 row(s) were changed outside kata" in said and "submission 1 (adder, session 1)" in said
    assert "healthy" not in said
    (isolated_state / ".kata" / "store.key").write_text("00" * 32 + "\n")  # another key: every row
    assert "changed outside kata" in kata("doctor", code=1).output


def test_doctor_recovers_the_rows_it_can_read(wb, isolated_state):
    import sqlite3

    kata("start", "adder")
    kata("hint", "adder")
    db = isolated_state / ".kata" / "kata.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA user_version = 0")  # looks unmigrated: opening it fails on CREATE TABLE
    con.commit()
    con.close()
    fixed = kata("doctor").output
    assert "sessions: 1 row(s) recovered" in fixed and "hints: 1 row(s) recovered" in fixed
    assert "Session 1" in kata("status").output


def test_a_truncated_store_is_one_line_for_every_command(wb, isolated_state):
    import sqlite3

    kata("start", "adder")
    db = isolated_state / ".kata" / "kata.db"
    con = sqlite3.connect(db)
    con.executemany("INSERT INTO hints (session_id, slug, hint_index, revealed_at) VALUES (1, 'adder', ?, 0)",
                    [(i,) for i in range(3000)])
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    import os

    for command in (["status"], ["history"], ["hint", "adder"], ["list"]):
        # each in its own process, as for a user (see the doctor test above)
        done = subprocess.run([sys.executable, "-m", "kata", *command], capture_output=True,
                              text=True, env=dict(os.environ), timeout=120)
        lines = (done.stdout + done.stderr).strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "kata doctor" in lines[0], (command, lines)


def test_submit_outside_a_session_lists_what_failed_before_what_passed(wb, isolated_state):
    kata("start", "adder", "--yes", "--reveal", "all")
    kata("finish", "--yes")
    target = workspace_file(isolated_state)
    target.write_text((wb / "solutions" / "adder.py").read_text().replace("return a - b", "return b - a"))
    out = kata("submit", "adder", code=1).output
    lines = [ln.split()[0] for ln in out.splitlines() if ln.strip().startswith(("PASS", "FAIL"))]
    assert "FAIL" in lines and "PASS" in lines
    assert out.rstrip().endswith("kept as a snapshot (`kata snapshots adder`) and counts for no session.")
    assert lines.index("PASS") > max(i for i, s in enumerate(lines) if s == "FAIL"), lines


def _every_command(group, path=("kata",)):
    import typer.core

    for name, command in group.commands.items():
        if isinstance(command, typer.core.TyperGroup):
            yield from _every_command(command, path + (name,))
        else:
            yield " ".join(path + (name,)), command


def test_every_usage_line_names_arguments_as_python_tools_do():
    # `kata init DIRECTORY`, `kata review [SESSION]`, `kata gradebook merge FILES...`: capitals, a
    # required argument bare, an optional one in brackets; never Typer's `{directory}`
    import typer.main

    seen = {}
    for path, command in _every_command(typer.main.get_command(app)):
        usage = " ".join(command.collect_usage_pieces(command.make_context(path, ["-h"], resilient_parsing=True)))
        seen[path] = usage
        assert "{" not in usage and "[[" not in usage, f"{path}: {usage}"
        for piece in usage.split():
            if piece != "[OPTIONS]":
                assert piece.strip("[].") == piece.strip("[].").upper(), f"{path}: {usage}"
    assert seen["kata init"] == "[OPTIONS] DIRECTORY"
    assert seen["kata review"] == "[OPTIONS] [SESSION]"
    assert seen["kata runner"] == "[OPTIONS] SLUG INPUT_DIR OUTPUT_DIR"
    assert seen["kata gradebook merge"] == "[OPTIONS] FILES..."
    assert seen["kata engine plan"] == "[OPTIONS] PATH"
    assert " init [OPTIONS] DIRECTORY\n" in kata("init", "-h").output
