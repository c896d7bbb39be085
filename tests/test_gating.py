"""Gated means gated: a learner's workbook (`kata init DIR`) holds, and every command shows, only
what a candidate may see: the open levels' prompt, examples and hints; never a later level's,
nor a reference or a hidden suite. An instructor's workbook holds the whole catalog."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kata import session
from kata.catalog import Workbook
from kata.init import init_workbook
from kata.prompt import Prompt
from kata.visible import cut
from tests.conftest import REPO
from tests.test_cli import kata

T0 = 1_800_000_000.0
SLUG, MODULE = "kv-block-store", "kv_block_store.py"


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def at(monkeypatch, minutes: float) -> None:
    monkeypatch.setenv("KATA_NOW", str(T0 + minutes * 60))


@pytest.fixture
def learner(tmp_path, monkeypatch):
    """A fresh learner's workbook, the current folder, on the test clock (no keeper)."""
    at(monkeypatch, 0)
    folder = init_workbook(tmp_path / "prep")
    monkeypatch.chdir(folder)
    yield folder
    session.close_stores()


def needles(wb: Workbook) -> dict[str, str]:
    """What must not leak at level 1 of kv-block-store, squeezed -> where it comes from: every
    line of 25+ characters (whitespace removed) of later levels' prompt sections, examples and
    hints, of solutions/ and of graders/; less what a candidate at level 1 may see anyway (the
    stub, level 1's prompt, examples and hints, the docs)."""
    kata = wb.kata(SLUG)
    prompt = kata.prompt.read_text(encoding="utf-8")
    visible = kata.visible_tests.read_text(encoding="utf-8")
    found: dict[str, str] = {}

    def add(text: str, where: str) -> None:
        for line in text.splitlines():
            s = squeeze(line)
            if len(s) >= 25:
                found.setdefault(s, where)

    for section in Prompt.parse(prompt).sections:
        if section.level is not None and section.level > 1:
            add(f"{section.heading}\n{section.body}", f"PROMPT.md level {section.level}")
    open_lines = set(cut(visible, [1]).splitlines())
    add("\n".join(line for line in visible.splitlines() if line not in open_lines), "test_visible.py")
    for level, hint in kata.hints:
        if level > 1:
            found.setdefault(squeeze(hint), f"hint of level {level}")
    for folder in ("solutions", "graders"):
        for path in sorted((wb.root / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".json"):
                add(path.read_text(encoding="utf-8"), str(path.relative_to(wb.root)))
    allowed = squeeze("\n".join([
        kata.stub.read_text(encoding="utf-8"), Prompt.parse(prompt).render([1]), cut(visible, [1]),
        *(h for lv, h in kata.hints if lv == 1),
        *(p.read_text(encoding="utf-8") for p in (wb.root / "docs").glob("*.md")),
    ]))
    return {s: where for s, where in found.items() if s not in allowed}


def strings(data) -> str:
    """Every string in a JSON value, one a line (so an escaped quote still matches)."""
    if isinstance(data, dict):
        return "\n".join(strings(v) for v in [*data.keys(), *data.values()])
    if isinstance(data, list):
        return "\n".join(strings(v) for v in data)
    return str(data)


def leaks(haystack: str, needles: dict[str, str]) -> list[str]:
    flat = squeeze(haystack)
    return [f"{where}: {s[:60]}" for s, where in needles.items() if s in flat]


def workbook_files(folder: Path) -> str:
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            if path.suffix == ".db":  # every text the store holds, read as SQLite returns it
                with sqlite3.connect(path) as db:
                    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                        out += [str(v) for row in db.execute(f"SELECT * FROM {table}") for v in row]
            else:
                out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_at_level_1_nothing_of_a_later_level_a_reference_or_a_hidden_suite_is_in_a_learners_workbook_or_output(
        learner, monkeypatch):
    wb = Workbook.find()
    assert wb.learner and wb.state_dir == learner and wb.root != learner
    bad = needles(wb)
    assert len(bad) > 500  # the check has teeth: the later levels, references and suites
    said: list[str] = []

    def run(*args, code=0):
        result = kata(*args, code=code)
        text = result.output
        if "--json" in args and result.exit_code == 0:
            text = strings(json.loads(result.stdout))
        said.append(text)
        return result

    run("start", "llm-infra-ica-1", "--yes")
    assert sorted(p.name for p in learner.iterdir()) == [
        ".gitignore", ".kata", "README.md", "docs", "workbook.toml", "workspace"]
    at(monkeypatch, 1)
    for args in (("show",), ("show", "--json"), ("status",), ("status", "--json"), ("check",),
                 ("check", "--json"), ("hint",), ("hint",), ("hint", "--json"), ("list", "--json"),
                 ("submit",), ("submit", "--json"), ("progress", "--json"), ("history", "--json")):
        run(*args, code=None)
    out = learner / "out"
    refused = run("runner", SLUG, "workspace", str(out), code=2)
    assert "is live" in refused.output and not out.exists()
    assert "is live" in run("solution", SLUG, code=2).output
    run("review", code=None)
    run("review", "--json", code=None)
    said.append(_room(wb))
    said.append(_plain_pytest(learner))
    found = leaks(workbook_files(learner), bad)
    assert not found, f"in the workbook's files: {found[:5]}"
    found = leaks("\n".join(said), bad)
    assert not found, f"in the output: {found[:5]}"

    # level 1 passes: level 2's examples arrive in the workspace's test file, level 3's do not
    tests = learner / "workspace" / f"test_{MODULE}"
    assert "level(2)" not in tests.read_text()
    shutil.copyfile(REPO / "solutions" / f"{SLUG}.py", learner / "workspace" / MODULE)
    at(monkeypatch, 10)
    said = " ".join(kata("submit").output.split())
    assert "Level 2 is open" in said and f"its examples are in workspace/test_{MODULE}" in said
    text = tests.read_text()
    assert "level(2)" in text and "level(3)" not in text
    assert text == cut(wb.kata(SLUG).visible_tests.read_text(), [1, 2])


def _room(wb: Workbook) -> str:
    """Every read and action of the practice room, as the page asks them."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        from kata.web.app import create_app
    token, base = "t0ken", "http://127.0.0.1:8123"
    said = []
    with TestClient(create_app(wb, token, 8123), base_url=base) as c:
        auth = {"X-Kata-Token": token, "Origin": base}
        for path in ("/api/state", "/api/catalog", f"/api/kata/{SLUG}", f"/api/file/{SLUG}/code",
                     f"/api/solution/{SLUG}", "/api/review", "/api/progress", "/api/plan/llm-infra-ica-1"):
            said.append(c.get(path, headers=auth).text)
        for path in (f"/api/check/{SLUG}", f"/api/hint/{SLUG}", f"/api/submit/{SLUG}"):
            said.append(c.post(path, headers=auth, json={}).text)
    return "\n".join(strings(json.loads(t)) if t.startswith("{") else t for t in said)


def _plain_pytest(folder: Path) -> str:
    """The two plain-pytest routes: the workspace's examples, and the hidden suite (refused)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_"))}
    # (the session's clock is T0, in the future: live on the real clock too)
    said = []
    mine = subprocess.run([sys.executable, "-m", "pytest", "-q", "workspace"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert "3 failed" in mine.stdout, mine.stdout[-2000:]  # the stub fails level 1's 3 examples
    said.append(mine.stdout + mine.stderr)
    hidden = subprocess.run([sys.executable, "-m", "pytest", "-q", "--kata-suite", SLUG],
                            cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert hidden.returncode == 4 and "is live" in hidden.stdout + hidden.stderr, hidden.stdout[-2000:]
    said.append(hidden.stdout + hidden.stderr)
    return "\n".join(said)


# --- outside a session, the reference, the workspace's test file -------------------------------


def test_outside_a_session_a_learner_sees_the_levels_opened_in_some_session(learner, monkeypatch):
    shown = json.loads(kata("show", SLUG, "--json").stdout)
    assert shown["levels"] == [1] and "--reveal all" in shown["markdown"]
    assert "Level 2" not in shown["markdown"]
    kata("start", SLUG, "--yes")
    shutil.copyfile(REPO / "solutions" / f"{SLUG}.py", learner / "workspace" / MODULE)
    at(monkeypatch, 5)
    kata("submit")
    kata("finish", "--yes")
    shown = json.loads(kata("show", SLUG, "--json").stdout)
    assert shown["levels"] == [1, 2] and "Level 2" in shown["markdown"] and "Level 3" not in shown["markdown"]
    checked = json.loads(kata("check", SLUG, "--json").stdout)["results"][0]
    assert sorted({t["task_id"] for t in checked["tests"]}) == [1, 2]  # the examples shown, no more


def test_the_reference_is_shown_once_earned_and_an_edited_test_file_is_archived(learner, monkeypatch):
    said = " ".join(kata("solution", SLUG, code=2).output.split())
    assert "once a session holding it has ended" in said and f"kata start {SLUG}" in said
    kata("start", SLUG, "--yes")
    tests = learner / "workspace" / f"test_{MODULE}"
    mine = tests.read_text() + "\n\ndef test_my_own(impl):\n    assert impl.solution([]) == []\n"
    tests.write_text(mine)
    shutil.copyfile(REPO / "solutions" / f"{SLUG}.py", learner / "workspace" / MODULE)
    at(monkeypatch, 5)
    assert "Level 2 is open" in kata("submit").output
    (kept,) = (learner / ".kata" / "archive").rglob(tests.name)  # the learner's edit, kept
    assert kept.read_text() == mine and "level(2)" in tests.read_text()
    assert "is live" in kata("solution", SLUG, code=2).output
    kata("finish", "--yes")
    assert "def solution" in kata("solution", SLUG).output


def test_plain_pytest_grades_on_the_hidden_suite_once_the_session_is_over(learner, monkeypatch):
    kata("start", SLUG, "--yes")
    at(monkeypatch, 5)
    kata("finish", "--yes")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_"))}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "--kata-suite", SLUG], cwd=learner,
                         env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1 and "1 failed" in ran.stdout, ran.stdout[-2000:]
    assert "NotImplementedError" in ran.stdout  # the stub in workspace/, graded by name


# --- instructors, and workbooks an earlier version made ---------------------------------------


def test_an_instructors_workbook_holds_the_catalog_and_a_learners_refuses_authoring(tmp_path, monkeypatch):
    folder = init_workbook(tmp_path / "teach", instructor=True)
    for name in ("katas", "graders", "solutions", "exams", "tests/bugs", "docs"):
        assert (folder / name).is_dir(), name
    monkeypatch.chdir(folder)
    wb = Workbook.find()
    assert not wb.learner and wb.root == folder and not wb.old_layout
    assert "def solution" in kata("solution", SLUG).output  # the references are the author's
    kata("new", "my-kata")
    assert (folder / "katas" / "my-kata" / "kata.toml").is_file()
    learner = init_workbook(tmp_path / "prep")
    monkeypatch.chdir(learner)
    for args in (("new", "x-kata"), ("validate", SLUG), ("bundle", "--student", "out")):
        said = " ".join(kata(*args, code=2).output.split())
        assert "kata init --instructor DIR" in said, said
    assert not (REPO / "katas" / "x-kata").exists()


def test_a_workbook_of_the_earlier_layout_works_says_how_to_move_and_moves_keeping_its_sessions(
        tmp_path, monkeypatch):
    from kata import init

    old = tmp_path / "old"
    for name in ("katas", "solutions", "graders", "exams", "tests/bugs", "docs"):
        shutil.copytree(REPO / name, old / name, ignore=init.IGNORE)
    (old / "README.md").write_text("# My kata workbook\n\nMade by `kata init`. Practise here: every "
                                   "`kata` command run in this folder\n")
    monkeypatch.chdir(old)
    monkeypatch.setenv("KATA_STATE_DIR", str(old))  # as it was: the state in the workbook
    at(monkeypatch, 0)
    kata("start", SLUG, "--yes")
    (old / "workspace" / MODULE).write_text("# my work\n")
    listed = kata("list")
    assert "kata init --upgrade ." in " ".join(listed.stderr.split())
    assert listed.stderr.count("\n") <= 2  # one line (wrapped at most once on a narrow screen)
    monkeypatch.delenv("KATA_STATE_DIR")
    moved = kata("init", "--upgrade", ".").output
    assert "learner's layout" in moved
    assert sorted(p.name for p in old.iterdir()) == [
        ".kata", "README.md", "docs", "workbook.toml", "workspace"]
    assert (old / "workspace" / MODULE).read_text() == "# my work\n"
    assert next((old / ".kata" / "archive").glob("*-catalog/graders/kv-block-store"))
    assert "upgrade" not in kata("list").stderr
    history = json.loads(kata("history", "--json").stdout)
    assert [s["session"] for s in history["sessions"]] == [1]
    assert "level(2)" not in (old / "workspace" / f"test_{MODULE}").read_text()
    said = " ".join(kata("init", "--upgrade", ".", code=2).output.split())
    assert "not a workbook made by an earlier" in said


def test_another_tools_workbook_toml_is_not_a_learners_workbook(tmp_path, monkeypatch):
    from kata.pytest_entry import wanted

    (tmp_path / "workbook.toml").write_text('[sheets]\nname = "budget"\n')  # not kata's
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    wb = Workbook.find()
    assert not wb.learner or wb.state_dir != tmp_path  # the installed catalog, not this folder
    assert not wanted([], tmp_path)  # pytest there stays without kata's plugin
    (tmp_path / "workbook.toml").write_text('layout = "learner"\n')
    assert Workbook.find().state_dir == tmp_path and wanted([], tmp_path)
