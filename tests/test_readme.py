"""The README stays true, and short: CI runs its quick start's test command verbatim, its table of
exams and katas is what `kata list --json` says, its example score table shows the real suite's
figures, and every link in it and in the documents it points to resolves. The documents the
README's longer text lives in (DOCS) are held to the same checks as the README itself: the engine
figures are written into docs/ENGINE_TOUR.md from the kept benchmark run, and the session
walkthrough in docs/GUIDE.md quotes the same score table. tests/test_readme_routes.py runs their
code blocks."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

from tests.conftest import REPO

# The README and the documents its walkthrough, commands, grading, engine and development text
# live in: every fenced block of these is run or checked by tests/test_readme_routes.py.
DOCS = ("README.md", "docs/GUIDE.md", "docs/GRADING.md", "docs/ENGINE_TOUR.md", "docs/DEVELOPMENT.md")
MAX_README_LINES = 220  # a five-minute read: the rest belongs in DOCS

# `kata status` in the walkthrough: "  Q1. lru-kv-cache   L1-3   visible 0/9    hidden 100/100 pts"
STATUS_LINE = re.compile(r"  Q1\. lru-kv-cache +L1-3 +visible (\d+)/(\d+) +hidden ([\d.]+)/(\d+) pts$")


def read(doc: str) -> str:
    return (REPO / doc).read_text(encoding="utf-8")


def quick_start_commands() -> list[str]:
    text = read("README.md")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_quick_start_installs_starts_and_ci_runs_the_test_command():
    """Three blocks: install a wheel and make a workbook, start from a clone, run the tests."""
    commands = quick_start_commands()
    assert len(commands) == 3, commands
    install, clone, test = commands
    assert "pip wheel" in install and install.endswith("kata init my-prep && cd my-prep && kata start")
    assert clone.endswith("kata start") and test.endswith("pytest")
    assert "pip install -e '.[test,mutants]'" in test, "the test extra brings what the tests need (lxml)"
    assert test in (REPO / ".ci" / "run").read_text().splitlines()


def test_the_readme_is_short_and_links_every_document_its_text_moved_to():
    readme = read("README.md")
    assert len(readme.splitlines()) <= MAX_README_LINES, \
        f"README.md has {len(readme.splitlines())} lines: move the detail to one of {DOCS[1:]}"
    for doc in DOCS[1:]:
        assert f"]({doc})" in readme or f"]({doc}#" in readme, f"the README does not link {doc}"
    # the learner's workbook and self-grading with plain pytest, in the README itself
    flat = " ".join(readme.split())
    for said in ("`kata init DIR` makes a learner's workbook", "`kata init --instructor DIR`",
                 "`pytest workspace/`", "`pytest --kata-suite SLUG`", "docs/serve.png"):
        assert said in flat, said


# --- the exams and katas, as `kata list --json` has them --------------------------------------


def _table(section: str, head: str) -> list[list[str]]:
    """The rows (cells, backticks dropped) of the markdown table whose header starts `| head |`."""
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {head} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_exams_and_katas_table_is_what_kata_list_says():
    """Every exam (name, minutes, questions, title) and every kata (slug, title, levels,
    difficulty) in the README's table, and nothing else: adding a kata or an exam fails here
    until the table follows (copy the missing rows from the failure)."""
    out = subprocess.run([sys.executable, "-m", "kata", "--workbook", str(REPO), "list", "--json"],
                         cwd=REPO, env=os.environ.copy(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    exams = sorted([e["name"], str(e["minutes"]), str(len(e["katas"])), e["title"]] for e in listed["exams"])
    katas = [[k["slug"], k["title"], str(k["levels"]), k["difficulty"]] for k in listed["katas"]]
    section = read("README.md").split("## Exams and katas", 1)[1].split("\n## ", 1)[0]
    want_exams = "\n".join(f"| `{n}` | {m} | {q} | {t} |" for n, m, q, t in exams)
    want_katas = "\n".join(f"| `{s}` | {t} | {lv} | {d} |" for s, t, lv, d in katas)
    assert sorted(_table(section, "exam")) == exams, f"the exams, as kata list has them:\n{want_exams}"
    assert _table(section, "kata") == katas, f"the katas, as kata list has them:\n{want_katas}"


# --- figures ---------------------------------------------------------------------------------


def test_engine_figures_are_the_kept_benchmark_run():
    """The engine figures (docs/ENGINE_TOUR.md, linked from the README) are written from
    benchmarks/results/engine.json by benchmarks/readme_figures.py; editing one without the other
    fails here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_figures", REPO / "benchmarks" / "readme_figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    assert figures.DOC.relative_to(REPO).as_posix() in DOCS
    assert figures.main(["--check"]) == 0
    doc = figures.DOC.read_text(encoding="utf-8")
    start, end = figures.block(doc)
    assert "| paged decode attention / one bare read" in doc[start:end]
    assert all(figures.START not in read(d) for d in DOCS if REPO / d != figures.DOC), \
        "one figures block, the one the script writes"


def test_the_example_score_table_is_what_kata_submit_prints_for_the_reference():
    """The `kata submit` table for lru-kv-cache (in the README's first session and the guide's
    walkthrough) and the guide's `kata status` line are the real suite's figures: the reference
    graded on the hidden suite, drawn by the same table code; the stub graded on the visible
    tests. Adding or removing a hidden test fails here until the docs follow (copy the expected
    table from the failure)."""
    from rich.console import Console

    from kata.catalog import load_kata
    from kata.grading import grade
    from kata.views import level_table

    kata = load_kata(REPO, "lru-kv-cache")
    hidden = grade(kata, None)
    assert hidden.status == "pass", hidden.message
    console = Console(file=io.StringIO(), width=100, no_color=True, force_terminal=False, record=True)
    console.print(level_table(hidden, "lru-kv-cache: hidden suite"))
    want = [line.rstrip() for line in console.export_text().splitlines()]
    for doc in ("README.md", "docs/GUIDE.md"):
        lines = read(doc).splitlines()
        assert want[0] in lines, f"{doc} has no `kata submit` table:\n" + "\n".join(want)
        start = lines.index(want[0])
        assert lines[start:start + len(want)] == want, f"{doc}:\n" + "\n".join(want)

    visible = grade(kata, kata.stub, suite="visible")
    shown = [m.groups() for doc in DOCS for m in map(STATUS_LINE.match, read(doc).splitlines()) if m]
    assert shown, "the walkthrough's `kata status` line is gone"
    for groups in shown:
        assert groups == (str(visible.passed), str(len(visible.tests)), f"{hidden.points_earned:g}",
                          str(hidden.points_possible))


# --- links -----------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(text: str) -> set[str]:
    """GitHub's anchors for a markdown file's headings (fenced blocks skipped)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_every_relative_link_of_the_readme_and_its_documents_resolves():
    broken = []
    for doc in DOCS:
        text = re.sub(r"^```.*?^```", "", read(doc), flags=re.S | re.M)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            where = (REPO / doc).parent / path if path else REPO / doc
            if not where.exists():
                broken.append(f"{doc}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in _anchors(where.read_text(encoding="utf-8")):
                broken.append(f"{doc}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_anchors_are_githubs():
    assert _anchors("# Quick start\n## Install, in full\n## From Python and from `kata engine`\n") == {
        "quick-start", "install-in-full", "from-python-and-from-kata-engine"}
