"""Every code block of the README and of the documents its longer text lives in (DOCS: the guide,
grading, the engine's tour, development), run on the route it names, and the output it quotes
checked.

Each block's first line names its route (ROUTES); a block with no route fails here, so a new block
is run too. The routes:

- pipx: the quick start's first block, verbatim, in a fresh clone (`pipx install` is played by a
  shim that does what pipx does: a venv of the tool's own, only its `kata` put on PATH; pipx itself
  is not on every machine's package index), then `kata init` outside the clone, as the README says;
  and what it says of this route: Python itself does not see kata, the tool's own venv's does.
- clone: the clone block, verbatim, in a fresh clone (a fresh venv, `pip install -e .`).
- ci: the test command, which .ci/run runs verbatim (tests/test_readme.py checks that).
- session: a walkthrough's `$ kata ...` transcripts (the README's first session, the guide's
  session start to finish), each document's replayed in a workbook of its own, each command at
  the time its clock line quotes; every quoted line must be in what the command prints, in order,
  and lines quoted together must be printed together (`...` skips lines).
- alternatives: each line a command of its own, in a fresh workbook.
- python: the snippet, printing what its comment says.
- engine: each line, in a workbook whose workspace holds the kata solutions the line names; and
  the figures the prose around it quotes, from the commands that print them (FIGURES).
- layout: a listing, not commands: every path it names exists.

The fresh clone holds what is committed (CI runs on a clean checkout). About 2 minutes in all,
most of it the 100,000-request engine run and two installs (about 5 on a busy 2-core machine).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_readme import DOCS

ROUTES = {
    "python3 -m pip wheel --no-deps -w dist . && pipx install": "pipx",
    "python3 -m venv .venv && .venv/bin/pip install -e . &&": "clone",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test,mutants]'": "ci",
    "$ kata start warm-up --yes": "session",
    "$ kata check": "session",
    "$ kata submit": "session",
    "$ kata finish": "session",
    "kata hunt lru-kv-cache --yes": "alternatives",
    "from kata.engine import LLM": "python",
    "kata engine run ": "engine",
    "kata/cli.py ": "layout",
}
T0 = 1_800_000_000  # the session's start (the test clock)


def blocks() -> list[tuple[str, str, str]]:
    """(document, route, text) of every fenced block of the README and DOCS, in order."""
    found = []
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        for body in re.findall(r"^```[\w]*\n(.*?)^```", text, re.S | re.M):
            routes = [r for head, r in ROUTES.items() if body.startswith(head)]
            found.append((doc, routes[0] if len(routes) == 1 else "", body))
    return found


def of_route(route: str, doc: str | None = None) -> list[str]:
    """The blocks of a route, of every document or of one."""
    return [body for d, r, body in blocks() if r == route and doc in (None, d)]


def doc_of(route: str) -> str:
    """The one document that holds a route's blocks."""
    (doc,) = {d for d, r, _ in blocks() if r == route}
    return doc


def command_lines(body: str) -> list[str]:
    """The block's commands, comments dropped."""
    return [line.split("  #")[0].strip() for line in body.splitlines() if line.strip()]


def _env(**extra: str) -> dict[str, str]:
    """A user's environment: none of the test run's switches, no venv of ours on PATH."""
    ours = str(Path(sys.prefix) / "bin")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KATA_", "PYTEST_", "VIRTUAL_ENV", "COV_")) and k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    env.update(extra)
    return env


def _run(cmd, cwd, env, timeout=600, shell=False):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          shell=shell, executable="/bin/bash" if shell else None)


def _ok(out) -> str:
    assert out.returncode == 0, f"{out.args}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_every_block_of_the_readme_and_its_documents_has_a_route():
    found = blocks()
    assert [f"{d}: {body.splitlines()[0]}" for d, r, body in found if not r] == [], \
        "give the new block a route in ROUTES"
    assert {r for _, r, _ in found} == set(ROUTES.values())  # and every route still has its block
    for route in ("pipx", "clone", "ci"):  # the installs are the README's own
        assert doc_of(route) == "README.md", route


# --- the two install routes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    from tests.conftest import end_keepers

    folder = tmp_path_factory.mktemp("readme") / "kata"
    _ok(_run(["git", "clone", "-q", str(REPO), str(folder)], cwd=folder.parent, env=_env()))
    yield folder
    end_keepers(folder)  # the clone route's `kata start` left its deadline keeper running


PIPX_SHIM = """#!/bin/sh
# what `pipx install PACKAGE` does: a venv of the package's own, its app alone on PATH
set -e
[ "$1" = install ] || { echo "pipx (shim): only install" >&2; exit 2; }
venv="$PIPX_HOME/venvs/kata-workbook"
python3 -m venv "$venv"
"$venv/bin/pip" install -q "$2"
mkdir -p "$PIPX_BIN_DIR"
ln -sf "$venv/bin/kata" "$PIPX_BIN_DIR/kata"
"""


def test_the_pipx_route_installs_makes_a_workbook_and_starts(clone, tmp_path):
    (install_block,) = of_route("pipx")
    install, start = install_block.strip().splitlines()
    home = tmp_path / "home"
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "pipx").write_text(PIPX_SHIM)
    (shim / "pipx").chmod(0o755)
    pipx_bin = home / ".local" / "bin"
    env = _env(HOME=str(home), PIPX_HOME=str(home / ".local" / "pipx"), PIPX_BIN_DIR=str(pipx_bin),
               XDG_STATE_HOME=str(home / "state"), XDG_CACHE_HOME=str(home / "cache"))
    env["PATH"] = os.pathsep.join([str(pipx_bin), str(shim), env["PATH"]])
    _ok(_run(install, cwd=clone, env=env, shell=True))
    anywhere = tmp_path / "projects"
    anywhere.mkdir()
    said = _ok(_run(start, cwd=anywhere, env=env, shell=True))
    assert "Made a workbook in" in said and "Session 1 started: llm-infra-oa" in said, said
    assert (anywhere / "my-prep" / "workspace" / "token_batcher.py").is_file()
    # what the README says of this route: Python itself does not see kata; the tool's venv does
    bare = _run(["python3", "-m", "kata", "--version"], cwd=anywhere, env=env)
    assert bare.returncode != 0 and "No module named kata" in bare.stderr
    own = home / ".local" / "pipx" / "venvs" / "kata-workbook" / "bin" / "python"
    assert _ok(_run([str(own), "-m", "kata", "--version"], cwd=anywhere, env=env)).startswith("kata")


def test_the_clone_route_installs_and_starts(clone):
    (block,) = of_route("clone")
    said = _ok(_run(block.strip(), cwd=clone, env=_env(), shell=True))
    assert "Session 1 started: llm-infra-oa" in said, said
    assert (clone / "workspace" / "token_batcher.py").is_file()


# --- the walkthrough, replayed ----------------------------------------------------------------


def _workbook(tmp_path: Path) -> Path:
    _ok(_run([sys.executable, "-m", "kata", "init", "wb"], cwd=tmp_path, env=_env()))
    return tmp_path / "wb"


def _transcript(body: str) -> list[tuple[str, list[str]]]:
    """[(command, the lines quoted after it)] of a `$ kata ...` block."""
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line.rstrip())
    for _, quoted in steps:  # a blank line between two commands is the transcript's, not theirs
        while quoted and not quoted[-1]:
            quoted.pop()
    return steps


def _quoted_in(quoted: list[str], printed: list[str]) -> str | None:
    """None if every run of quoted lines (runs split at `...`) is printed as it is, in order;
    else the first run that is not."""
    runs: list[list[str]] = [[]]
    for line in quoted:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    at = 0
    for run in (r for r in runs if r):
        for i in range(at, len(printed) - len(run) + 1):
            if printed[i:i + len(run)] == run:
                at = i + len(run)
                break
        else:
            return "\n".join(run)
    return None


def _when(quoted: list[str], last: int) -> int:
    """The test clock for a command: from the time left its quoted clock line shows."""
    for line in quoted:
        left = re.search(r"(?:\): | with )(\d+):(\d\d) left", line)
        if left:
            return T0 + 20 * 60 - (int(left.group(1)) * 60 + int(left.group(2)))
    return last + 60


# each document's walkthrough: the commands it runs, in order (its own workbook and session)
WALKTHROUGHS = {
    "README.md": ["start", "check", "submit", "finish", "review"],
    "docs/GUIDE.md": ["start", "check", "submit", "status", "finish", "review", "review"],
}


def test_the_walkthroughs_are_where_they_are_replayed():
    assert {d for d, r, _ in blocks() if r == "session"} == set(WALKTHROUGHS)


@pytest.mark.parametrize("doc", list(WALKTHROUGHS))
def test_the_walkthrough_prints_what_the_document_quotes(tmp_path, doc):
    from tests.terminal import run_on_terminal, screen_text, stock_env

    wb = _workbook(tmp_path)
    steps = [step for body in of_route("session", doc) for step in _transcript(body)]
    assert [cmd.split()[:2] for cmd, _ in steps] == [["kata", name] for name in WALKTHROUGHS[doc]]
    now = T0
    for command, quoted in steps:
        args = command.split()[1:]
        now = T0 if args[0] == "start" else _when(quoted, now)
        if args[0] == "submit":  # the walkthrough's "write your code": the reference, here
            shutil.copyfile(REPO / "solutions" / "lru-kv-cache.py", wb / "workspace" / "lru_kv_cache.py")
        if args[0] == "finish":  # it asks, on a terminal: the transcript answers y
            env = stock_env(PYTHONPATH=str(REPO), KATA_NOW=str(now))
            env.pop("KATA_STATE_DIR", None)
            env.pop("KATA_WORKBOOK", None)
            code, raw = run_on_terminal(args, env, cols=80, keys=b"y\r", cwd=wb, timeout=120)
            printed = screen_text(raw)
        else:
            out = _run([sys.executable, "-m", "tests.kata_test_clock", *args], cwd=wb,
                       env=_env(PYTHONPATH=str(REPO), KATA_NOW=str(now), COLUMNS="80"))
            code, printed = out.returncode, out.stdout
        lines = [ln.rstrip() for ln in printed.splitlines()]
        assert code == (1 if args[0] == "check" else 0), printed[-3000:]
        missing = _quoted_in(quoted, lines)
        assert missing is None, f"`{command}` does not print, as {doc} quotes:\n{missing}\n" \
                                f"--- it printed:\n" + "\n".join(lines)


def test_each_alternative_runs_in_a_fresh_workbook(tmp_path):
    (block,) = of_route("alternatives")
    for i, command in enumerate(command_lines(block)):
        (tmp_path / str(i)).mkdir()
        wb = _workbook(tmp_path / str(i))
        said = _ok(_run([sys.executable, "-m", "kata", *command.split()[1:]], cwd=wb, env=_env()))
        assert "Session 1 started" in said, said


def test_the_python_snippet_prints_what_its_comment_says(tmp_path):
    (block,) = of_route("python")
    wanted = re.search(r"#\s*(.+)$", block.strip().splitlines()[-1]).group(1)
    said = _ok(_run([sys.executable, "-c", block], cwd=tmp_path, env=_env()))
    assert said.strip() == wanted


# --- the engine's commands and the figures its prose quotes --------------------------------------

# (what the engine's tour says, the command that prints it, what that command's output must hold); a
# "{zoo SLUG NAME}" in a command is that zoo entry's patched reference, written to the workspace
FIGURES = [
    ("under pressure it preempts 439 times to the reference's 324",
     "kata engine run --batcher {zoo token-batcher admission_skips_blocked_head}",
     r"memory pressure.*?preemptions │ 324 │ 439 │"),
    ("181 of the longest sequences on its one H100 but keeps only 22.50% of requests within the SLO "
     "(p99 TTFT 1.736 s); the reference's two GPUs keep 100.00%",
     "kata engine plan {zoo serving-plan plan_one_replica} --level 1",
     r"(?=.*\b181\b)(?=.*22\.50%)(?=.*1\.736)(?=.*100\.00%)"),
    ("answered in\n35.90 ms instead of 172.17 ms on a shared cache, and in 172.17 ms either way",
     "kata engine run --no-compute --hardware A10G --num-requests 200 --rate 30 --interceptor "
     "workspace/safety_interceptor.py",
     r"shared cache 35\.90 vs 172\.17 ms.*salted keys 172\.17 vs 172\.17 ms"),
    ("cancelling 29 flagged requests early also brings the served\nrequests' median TTFT from 12.0 s to 9.2 s",
     "kata engine run --no-compute --hardware A10G --num-requests 200 --rate 30 --interceptor "
     "workspace/safety_interceptor.py",
     r"the served ones │ (?:119[5-9]|120[0-4])\d\.\d .*with: max\(token, verdict\) │ "
     r"(?:91[5-9]|92[0-4])\d\.\d .*refused 29 "),
    ("continuous batching gives 6.7x the output throughput of static batching",
     "kata engine compare", r"continuous, paged: 6\.7x the output throughput of static batching"),
]


def _engine(wb: Path, command: str, codes=(0,)) -> str:
    from kata.zoo import apply_patch

    def zoo(match):
        slug, name = match.group(1), match.group(2)
        fixed = apply_patch((REPO / "solutions" / f"{slug}.py").read_text(),
                            (REPO / "tests" / "bugs" / slug / f"{name}.patch").read_text(), name)
        path = wb / "workspace" / f"{name}.py"
        path.write_text(fixed)
        return f"workspace/{name}.py"

    command = re.sub(r"\{zoo (\S+) (\S+)\}", zoo, command)
    out = _run([sys.executable, "-m", "kata", *command.split()[1:]], cwd=wb,
               env=_env(COLUMNS="80"), timeout=900)
    assert out.returncode in codes, f"{command}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_every_engine_command_runs_and_the_figures_around_them_are_what_they_print(tmp_path):
    wb = _workbook(tmp_path)
    (wb / "workspace").mkdir(exist_ok=True)
    (block,) = of_route("engine")
    for command in command_lines(block):
        for mine in re.findall(r"workspace/(\w+)\.py", command):  # a learner's finished kata
            shutil.copyfile(REPO / "solutions" / f"{mine.replace('_', '-')}.py", wb / "workspace" / f"{mine}.py")
        said = _engine(wb, command)
        assert said.strip(), command
    doc = doc_of("engine")  # the figures are quoted around the engine's commands
    said_there = " ".join((REPO / doc).read_text(encoding="utf-8").split())
    for claim, command, printed in FIGURES:
        assert " ".join(claim.split()) in said_there, f"{doc} no longer says: {claim}"
        for mine in re.findall(r"workspace/(\w+)\.py", command):  # the reference as the learner's file
            shutil.copyfile(REPO / "solutions" / f"{mine.replace('_', '-')}.py", wb / "workspace" / f"{mine}.py")
        said = _engine(wb, command, codes=(0, 1))  # a zoo plan fails its checks: exit 1
        assert re.search(printed, " ".join(said.split())), \
            f"`{command}` does not print what {doc} says ({claim}):\n{said}"


def test_every_path_the_layout_names_exists():
    (block,) = of_route("layout")
    named = [line.split()[0] for line in block.splitlines() if line and not line.startswith(" ")]
    assert len(named) >= 8, named
    for path in named:
        bare = path.split("<")[0].rstrip("/")
        assert (list(REPO.glob(bare)) if "*" in bare else (REPO / bare).exists()), path
