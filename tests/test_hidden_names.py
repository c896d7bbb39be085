"""Nothing hidden readable during a mock exam: no hidden test's name or edge text on screen or on
disk, in any mode (plain, --verbose, --json, JUnit, the Exercism runner), until the session ends.
Practising one kata, a submit also says what each missed hidden test checks (its edge text), and
still never its name, input or message.

The adder fixture's visible tests are test_add and test_mul; its hidden suite also has test_sub
(level 1), test_neg and test_div_by_zero (level 2), each with an edge text. The learner's `sub`
spins, so the harness has a timeout to log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HIDDEN = ("test_sub", "test_neg", "test_div_by_zero", "subtracts to a negative", "negates",
          "division by zero raises")
LEARNER = ("def add(a, b):\n    return a + b\n\n"
           "def sub(a, b):\n    while True:\n        pass\n\n"
           "def mul(a, b):\n    return a * b\n\n"
           "def neg(a):\n    return -a\n\n"
           "def div(a, b):\n    return a / b\n")


def kata(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kata", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def leaks(text: str) -> list[str]:
    return [name for name in HIDDEN if name in text]


def test_no_hidden_name_reaches_the_screen_or_the_disk_during_a_session(fixture_workbook, isolated_state,
                                                                          tmp_path):
    env = {**os.environ, "KATA_WORKBOOK": str(fixture_workbook), "KATA_STATE_DIR": str(isolated_state),
           "KATA_PLAIN": "1", "COLUMNS": "80"}
    env.pop("KATA_NOW", None)
    started = kata(env, "start", "mini")  # an exam: counts only, as the real round shows
    assert started.returncode == 0, started.stderr
    (isolated_state / "workspace" / "adder.py").write_text(LEARNER)
    out = tmp_path / "out"
    runs = {
        "check": kata(env, "check"),
        "submit": kata(env, "submit"),
        "verbose submit": kata(env, "--verbose", "submit"),
        "json submit": kata(env, "submit", "--json"),
        "junit submit": kata(env, "submit", "--junit-xml", str(out / "plain.xml")),
        "rich junit submit": kata(env, "submit", "--junit-xml", str(out / "rich.xml"), "--junit-rich"),
        "status": kata(env, "status"),
        "history": kata(env, "history"),
        "runner": kata(env, "runner", "adder", str(isolated_state / "workspace"), str(out / "runner")),
        "solution": kata(env, "solution", "adder"),
    }
    for what, run in runs.items():
        assert not leaks(run.stdout + run.stderr), (what, leaks(run.stdout + run.stderr), run.stdout, run.stderr)
    # the verbose log is there, and names the test that timed out by its place only
    assert "kata: timeout: hidden test 2" in runs["verbose submit"].stderr, runs["verbose submit"].stderr
    # the runner refuses with one line, and writes nothing
    assert runs["runner"].returncode == 2
    assert runs["runner"].stderr.strip().count("\n") == 0 and "`kata finish` it first" in runs["runner"].stderr
    assert not (out / "runner").exists()
    assert (out / "plain.xml").is_file() and (out / "rich.xml").is_file()
    files = [p for p in [*isolated_state.rglob("*"), *out.rglob("*")] if p.is_file()]
    assert any(p.suffix == ".xml" for p in files) and any(p.name == "kata.db" for p in files)
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert not leaks(text), (path, leaks(text))
    # once the session is over, the same commands may name them: the check above could fail
    assert kata(env, "finish", "--yes").returncode == 0
    after = kata(env, "runner", "adder", str(isolated_state / "workspace"), str(out / "runner"))
    assert after.returncode == 0, after.stderr
    assert "Sub" in Path(out / "runner" / "results.json").read_text()


def test_practising_one_kata_a_submit_names_what_each_missed_test_checks_and_nothing_else(
        fixture_workbook, isolated_state):
    env = {**os.environ, "KATA_WORKBOOK": str(fixture_workbook), "KATA_STATE_DIR": str(isolated_state),
           "KATA_PLAIN": "1", "COLUMNS": "80"}
    env.pop("KATA_NOW", None)
    assert kata(env, "start", "adder", "--reveal", "all").returncode == 0
    (isolated_state / "workspace" / "adder.py").write_text(LEARNER.replace("while True:\n        pass", "return 0"))
    said = kata(env, "submit")
    assert "Missed (1), by what each hidden test checks:" in said.stdout, said.stdout
    assert "L1 subtracts to a negative" in said.stdout
    assert "test_sub" not in said.stdout + said.stderr and "sub(2, 5)" not in said.stdout  # no name, no call
    import json

    rows = json.loads(kata(env, "submit", "--json").stdout)["results"][0]["tests"]
    assert [t.get("edge") for t in rows if t["status"] != "pass"] == ["subtracts to a negative"]
    assert all("message" not in t and not t["name"].startswith("test_") for t in rows)
