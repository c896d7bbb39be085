"""The first hour, third pass: words a new user read wrong, fixed where they are made."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from kata.views import duration
from tests.test_cli import kata

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_800_000_000.0


def test_a_length_of_time_reads_as_one_never_as_hours():
    assert [duration(s) for s in (0, 13, 60, 90, 1200, 5400, 3661)] == \
        ["0 s", "13 s", "1 min", "1 min 30 s", "20 min", "1 h 30 min", "1 h 1 min 1 s"]


def test_a_one_minute_briefing_says_minutes_and_seconds(isolated_state, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    said = kata("start", "llm-infra-oa", "--minutes", "1", "--yes").output
    assert "(1 min)" in said and "(1:00)" not in said
    assert "level 1, about 17 s" in said and "about 0:17" not in said  # its share of the minute


def test_a_practice_submit_during_a_session_says_why_it_is_practice(isolated_state, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "ngram-loop-detector", "--yes")
    kata("finish", "--yes")
    kata("start", "warm-up", "--yes")
    shutil.copyfile(ROOT / "solutions" / "ngram-loop-detector.py",
                    isolated_state / "workspace" / "ngram_loop_detector.py")
    said = kata("submit", "ngram-loop-detector").output
    assert "Practice (session 2 does not hold it)" in said and "no live session" not in said


def test_kata_list_marks_the_default_exam(isolated_state):
    said = kata("list").output
    assert "llm-infra-oa *" in said
    assert "* the default: `kata start` with no name starts llm-infra-oa." in said


def test_a_new_hunt_says_where_the_old_pin_file_went(isolated_state, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    pin = isolated_state / "workspace" / "test_hunt_lru_kv_cache.py"
    pin.write_text("def test_mine(impl):\n    assert impl\n")
    kata("finish", "--yes")
    said = kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes").output
    assert "pin the bug in workspace/test_hunt_lru_kv_cache.py" in said.replace(str(isolated_state) + "/", "")
    assert "your previous test_hunt_lru_kv_cache.py was archived to" in " ".join(said.split())
    archived = list((isolated_state / ".kata" / "archive").rglob("test_hunt_lru_kv_cache.py"))
    assert [p.read_text() for p in archived] == ["def test_mine(impl):\n    assert impl\n"]


def test_a_damaged_store_is_one_line_whatever_sqlite_says(isolated_state):
    import sqlite3

    from kata.store import Store

    error = Store.__new__(Store)
    error.path = isolated_state / "kata.db"
    said = str(Store._unreadable(error, sqlite3.DatabaseError("file is not a database\nat page 1")))
    assert "\n" not in said and "(file is not a database at page 1)" in said


def test_ctrl_c_at_a_question_ends_the_line_before_the_error(isolated_state, monkeypatch, capsys):
    import pytest

    from kata.commands.learner_session import confirm

    def interrupted(prompt):
        print(prompt, end="")
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    with pytest.raises(KeyboardInterrupt):
        confirm("End session 1?")
    captured = capsys.readouterr()
    assert captured.out.endswith("[y/N] ") and captured.err == "\n"  # the error line starts anew


def test_ctrl_c_quits_watch_without_an_error(fixture_workbook, isolated_state, monkeypatch):
    from kata.watch import Watch

    kata("start", "adder", "--yes")

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Watch, "run", interrupted)
    said = kata("watch", "--plain").output  # exit code 0
    assert "Stopped watching; the session goes on" in said and "error" not in said


def test_status_drops_a_visible_count_made_before_a_level_opened(fixture_workbook, isolated_state):
    import json

    kata("start", "adder", "--yes")  # levels open one at a time
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    kata("check", "adder")
    assert json.loads(kata("status", "--json").stdout)["questions"][0]["visible"] is not None
    kata("submit", "adder")  # level 2 opens: the last check ran level 1's tests only
    (row,) = json.loads(kata("status", "--json").stdout)["questions"]
    assert row["levels_open"] == [1, 2] and row["visible"] is None
    assert "not checked" in kata("status").output


def test_progress_taller_than_the_screen_goes_to_the_pager(tmp_path):
    import sys

    from tests.terminal import run_on_terminal, stock_env

    seen = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open('{seen}', 'w').write(sys.stdin.read())\""
    env = stock_env(PAGER=pager, KATA_STATE_DIR=str(tmp_path / "state"))
    code, _ = run_on_terminal(["progress"], env, rows=10, timeout=60)
    assert code == 0 and "lru-kv-cache" in seen.read_text()  # a row per kata: paged, not scrolled away


def test_a_hunts_status_keeps_its_pin_verdict_whole_at_80_columns(isolated_state, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    lines = kata("status").output.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert any(line.strip() == "pin: not submitted" for line in lines), lines


def test_kata_engine_help_lists_each_command_whole_at_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    said = kata("engine", "-h").output
    commands = said.split("Commands:")[1]
    assert "..." not in commands and all(len(line) <= 80 for line in said.splitlines())
    assert "run      Run a trace; print its metrics and KV use." in said


def test_starting_a_kata_again_can_go_on_with_your_file_archived_either_way(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    mine = isolated_state / "workspace" / "adder.py"
    work = "def add(a, b):\n    return a + b  # mine\n"
    mine.write_text(work)
    kata("finish", "--yes")
    said = kata("start", "adder", "--yes", "--keep-file").output
    assert mine.read_text() == work  # went on with it
    assert "your previous adder.py was archived to" in " ".join(said.split())
    kata("finish", "--yes")
    said = kata("start", "adder", "--yes").output  # without --keep-file: a fresh stub, the work archived
    assert mine.read_text() != work
    assert "`--keep-file` goes on with it instead" in " ".join(said.split())  # --yes said no: how to say yes
    assert sum(p.read_text() == work for p in (isolated_state / ".kata" / "archive").rglob("adder.py")) == 2


def test_folders_of_a_killed_run_are_swept_by_the_next(tmp_path, monkeypatch):
    import subprocess
    import sys
    import tempfile

    from kata import manifest, validate

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(gone.stdout)  # a process that has ended
    left = [tmp_path / f"kata-{kind}-{dead}-{rest}" for kind, rest in
            (("grade", "abc"), ("zoo", "lru-kv-cache-x1y2"), ("mutants", "adder-z9"))]
    for folder in left:
        folder.mkdir()
    mine = tmp_path / f"kata-zoo-{os.getpid()}-adder-q"
    mine.mkdir()
    assert sorted(manifest.sweep_stale_folders()) == sorted(left) and mine.is_dir()
    assert "kata-zoo-{os.getpid()}-" in Path(validate.__file__).read_text()  # named to be swept


def test_progress_says_how_many_points_a_partial_grading_was_out_of(fixture_workbook, isolated_state):
    kata("start", "oa", "--yes")  # level 1 of the adder: 10 of its 30 points
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    kata("submit", "adder")
    assert "hidden 10/10 pts" in kata("status").output
    line = next(ln for ln in kata("progress").output.splitlines() if ln.startswith("adder"))
    assert "10/30 (of 10 graded)" in line, line


def test_the_clock_line_is_paged_with_the_report_it_heads(fixture_workbook, tmp_path):
    import sys

    from tests.terminal import run_on_terminal, stock_env

    seen = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open('{seen}', 'w').write(sys.stdin.read())\""
    env = stock_env(PAGER=pager, KATA_WORKBOOK=str(fixture_workbook), KATA_STATE_DIR=str(tmp_path / "s"))
    code, _ = run_on_terminal(["start", "adder", "--yes"], env, rows=30, timeout=60)
    assert code == 0
    code, _ = run_on_terminal(["check", "adder", "--all"], env, rows=4, timeout=60)  # taller than 4 rows
    assert seen.read_text().startswith("Session 1 (adder): ")  # the pager shows it on top


def test_a_failure_report_at_80_columns_never_breaks_a_path_or_a_line_of_code(isolated_state, monkeypatch):
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    kata("start", "token-batcher", "--yes")
    wrong = (ROOT / "solutions" / "token-batcher.py").read_text().replace(
        "len(members) * longest, useful)", "len(members) * longest + 1, useful)")
    assert "longest + 1" in wrong
    (isolated_state / "workspace" / "token_batcher.py").write_text(wrong)
    lines = kata("check", "token-batcher", "--failed", code=1).output.splitlines()
    # every line fits, but a path wider than the screen (this test's state folder) on a line of
    # its own, whole, to be copied
    assert all(cell_len(ln) <= 80 or " " not in ln.strip() for ln in lines), lines
    code = [ln for ln in lines if ln.lstrip().startswith("assert batches_of(plan) == expected")]
    assert code and all(ln.endswith("…") and cell_len(ln) == 80 for ln in code), code  # cut, not wrapped
    diff = [i for i, ln in enumerate(lines) if "At index 0 diff:" in ln]
    assert diff and lines[diff[0] + 1].lstrip().startswith("E     'c'], 2,"), lines  # wrapped under E
    # the message is printed once, above the report; not again as `E   AssertionError: ...`
    assert not any(ln.lstrip().startswith("E   AssertionError: Called plan_batches") for ln in lines)


def test_a_report_line_is_cut_wrapped_or_kept_by_what_it_is():
    from kata.output import report_lines

    def fit(line, width):
        return [t.plain for t in report_lines(line, width)]

    assert fit("E   assert [1, 2] == [1, 3]", 18) == ["E   assert [1, 2]", "E   == [1, 3]"]
    assert fit("    value = compute(alpha, beta)", 20) == ["    value = compute…"]
    assert fit("  katas/a-long-name/test_visible.py:12: in test_x", 20) == \
        ["  katas/a-long-name/test_visible.py:12:", "      in test_x"]  # the path whole, its name under it
    assert fit("short", 20) == ["short"]


def test_a_long_engine_run_shows_its_progress_on_a_terminal():
    from tests.terminal import ANSI, run_on_terminal, stock_env

    code, raw = run_on_terminal(["engine", "run", "--no-compute", "--num-requests", "6000",
                                 "--rate", "50", "--hardware", "H100"], stock_env(), timeout=240)
    assert code == 0, raw[-2000:]
    # the bar, redrawn as the run goes: requests finished of the trace, and the time it has taken
    seen = ANSI.sub("", raw)
    counts = [int(n.replace(",", "")) for n in
              re.findall(r"reference\W+([\d,]+)/6,000 requests finished 0:\d\d:\d\d", seen)]
    assert len(set(counts)) >= 2 and counts == sorted(counts) and counts[-1] <= 6000, seen[:2000]
    assert "wall time: reference" in seen  # then the report


def test_the_engine_reports_its_progress_as_it_runs():
    from kata.engine import EngineConfig, LLMEngine
    from kata.engine.outputs import PROGRESS_STEPS
    from kata.engine.workloads import make_workload

    trace = make_workload("chat", 300, seed=0, rate=20.0, max_model_len=4096)
    seen: list[tuple[int, int]] = []
    result = LLMEngine(EngineConfig(compute=False)).run(trace, on_progress=lambda d, t: seen.append((d, t)))
    assert {t for _, t in seen} == {300} and 0 < seen[-1][0] <= 300
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) == result.metrics.num_steps // PROGRESS_STEPS
    plain = LLMEngine(EngineConfig(compute=False)).run(trace)  # the same run, reported or not
    assert plain.metrics.to_dict() == result.metrics.to_dict()


def test_off_a_terminal_a_long_run_says_it_is_still_going(monkeypatch, capsys):
    from kata import output

    monkeypatch.setenv("KATA_PLAIN", "1")
    output.reset()
    now = [0.0]
    with output.long_run(clock=lambda: now[0]) as run:
        update = run.task("reference", total=100_000, unit="requests finished", announce="running...")
        update(10)
        now[0] = output.HEARTBEAT_S + 1
        update(41_203)
        update(41_300)  # not again until another HEARTBEAT_S has passed
    err = capsys.readouterr().err.splitlines()
    assert err == ["running...", "reference: 41,203/100,000 requests finished, 16 s so far..."]
    output.reset()


def test_a_grading_bar_shows_the_time_a_slow_last_test_is_taking():
    """79 of 80 tests done and the 80th slow: the bar's clock keeps moving (its elapsed column)."""
    import io

    from rich.console import Console
    from rich.progress import TimeElapsedColumn

    from kata import output

    output.reset()
    output._consoles[True] = Console(file=io.StringIO(), force_terminal=True, width=80)
    try:
        with output.long_run() as run:
            assert run._bar is not None
            assert any(isinstance(c, TimeElapsedColumn) for c in run._bar.columns)
            update = run.task("lru-kv-cache (auto-submit)", unit="tests")
            update(79, 80, "lru-kv-cache (auto-submit), level 3")
            task = run._bar.tasks[0]
            assert (task.completed, task.total, task.fields["count"]) == (79, 80, "79/80 tests")
    finally:
        output.reset()


def test_a_timer_longer_than_a_day_or_endless_is_one_line_of_error(isolated_state):
    for minutes in ("inf", "1e9", "1441"):
        for command in (("start", "warm-up"), ("hunt", "lru-kv-cache")):
            said = kata(*command, "--minutes", minutes, "--yes", code=2).output
            assert "error: --minutes" in said and "longer than a day: give at most 1440" in said, said
            assert "Traceback" not in said
    assert "24 h on the clock" in kata("start", "warm-up", "--minutes", "1440", "--yes").output


def test_a_long_failure_message_keeps_its_end_where_it_says_what_went_wrong_first():
    """A solution(queries) failure ends with the wrong answer (kata.checks.run_queries): the
    toolkit keeps the call short, and a message capped anyway keeps its end (and says where it
    cut), instead of stopping mid-string."""
    import importlib.util
    import types

    import pytest

    from kata.checks import run_queries
    from kata.pytest_plugin import MESSAGE_CAP, capped

    spec = importlib.util.spec_from_file_location(
        "kv_oracle", ROOT / "graders" / "kv-block-store" / "kv_block_store_oracle.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    queries = oracle.seeded_plain(3, 2000, 1)
    answers = oracle.oracle(queries)
    wrong = types.SimpleNamespace(solution=lambda qs: answers[:-1] + ["nope"])
    with pytest.raises(BaseException) as raised:
        run_queries(wrong, queries, answers)
    message = str(raised.value)
    ending = f"answered 'nope', expected {answers[-1]!r}."
    assert message.endswith(ending) and "Query 2000 of 2000" in message and len(message) <= MESSAGE_CAP
    long = message.replace("Called solution(", "Called solution(" + "x" * (2 * MESSAGE_CAP), 1)
    shown = capped(long)
    assert len(shown) <= MESSAGE_CAP and " … " in shown
    assert shown.startswith(long[:200]) and shown.endswith(ending)


def test_a_capped_message_is_not_printed_again_in_its_report():
    from kata.pytest_plugin import capped
    from kata.views import without_message

    long = "Called solution([...]). Returned " + "x" * 900 + ". First wrong answer: query 3."
    report = ["graders/kv/test_l1.py:9: in test_long_call", "    run(impl, queries)",
              f"E   AssertionError: {long}"]
    assert without_message(report, capped(long)) == report[:2]
    assert without_message(report, "something else") == report
    assert without_message(["E   ValueError: boom"], "boom") == []


def test_missed_edges_are_listed_once_each_and_wrap_under_their_text(isolated_state, monkeypatch):
    from kata.catalog import load_kata
    from kata.grading import grade

    monkeypatch.setenv("COLUMNS", "80")
    kata("start", "lru-kv-cache", "--yes")
    wrong = (ROOT / "solutions" / "lru-kv-cache.py").read_text()
    (isolated_state / "workspace" / "lru_kv_cache.py").write_text(wrong.replace(
        "not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1", "capacity < 1"))
    said = kata("submit", code=1).output.splitlines()
    start = next(i for i, ln in enumerate(said) if ln.startswith("Missed ("))
    rows = said[start + 1:next(i for i, ln in enumerate(said) if ln.startswith("Recorded"))]
    texts = [ln for ln in rows if ln.startswith("  L")]
    assert len(texts) == len(set(texts)), rows  # a parametrised test's cases: one row
    assert any(ln.endswith("tests)") for ln in rows), rows
    assert all(ln.startswith("  L") or ln.startswith("     ") for ln in rows), rows  # continuations indented
    graded = grade(load_kata(ROOT, "lru-kv-cache"), isolated_state / "workspace" / "lru_kv_cache.py")
    assert said[start] == f"Missed ({sum(t.status != 'pass' for t in graded.tests)}), by what each hidden test checks:"


def test_errors_name_what_was_typed(isolated_state):
    said = " ".join(kata("engine", "run", "--tp", "3", code=2).output.split())
    assert "error: --tp 3 must be an int >= 1 that divides" in said and "EngineConfig" not in said
    said = " ".join(kata("hunt", "lru-kv-cache", "--bug", "nosuch", "--yes", code=2).output.split())
    assert "no such zoo patch" in said and "Its bugs: aliases_caller_list, " in said and "bool_capacity" in said


def test_every_file_a_prompt_cites_is_in_a_workbook_kata_init_makes(tmp_path):
    import ast

    from kata.catalog import CONTENT
    from kata.init import init_workbook

    setup = ast.parse((ROOT / "setup.py").read_text())
    shipped = next(ast.literal_eval(n.value) for n in setup.body if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", "") == "CONTENT")
    assert shipped == CONTENT  # a wheel ships what `kata init` copies
    wb = init_workbook(tmp_path / "wb")
    cited = {(prompt.parent.name, m) for prompt in (ROOT / "katas").glob("*/PROMPT.md")
             for m in re.findall(r"\b((?:docs|katas|exams)/[\w./-]+\.\w+)", prompt.read_text())}
    assert ("serving-plan", "docs/ENGINE.md") in cited
    assert [c for c in cited if not (wb / c[1]).is_file()] == []
    assert not any("kata/engine/" in p.read_text() for p in (ROOT / "katas").glob("*/PROMPT.md"))


def test_engine_tables_keep_each_row_on_one_line_at_80_columns(isolated_state, monkeypatch):
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    said = kata("engine", "compare").output.splitlines()
    assert all(cell_len(ln) <= 80 for ln in said), said
    rows = [ln for ln in said if ln.startswith("│")]
    assert len(rows) == 13, rows  # one line per metric: no figure wrapped onto a second
    ttft = next(ln for ln in rows if "TTFT p50/p90/p99 s" in ln)
    assert len(re.findall(r"\d/[\d.]+/[\d.]+", ttft)) == 3, ttft
    said = kata("engine", "run", "--no-compute", "--hardware", "A10G", "--num-requests", "200", "--rate",
                "30", "--interceptor", str(ROOT / "solutions" / "safety-interceptor.py")).output.splitlines()
    assert len([ln for ln in said if ln.startswith("│")]) == 3, said


def test_a_number_keeps_its_unit_on_its_line():
    from rich.text import Text

    from kata.output import wrap

    for width in range(16, 40):
        lines = [t.plain for t in wrap(Text("Q4. LoRA memory math (lora-memory-math): level 1, about "
                                            "1 h 30 min, then 15 min more and 40 points"), width)]
        assert not any(re.search(r"\d$", ln) for ln in lines[:-1]), (width, lines)  # never "15" / "min"
        assert not any(re.match(r"(min|h|s|points)\b", ln) for ln in lines[1:]), (width, lines)


def test_kata_list_taller_than_the_screen_goes_to_the_pager(tmp_path):
    import sys

    from tests.terminal import run_on_terminal, stock_env

    seen = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open('{seen}', 'w').write(sys.stdin.read())\""
    env = stock_env(PAGER=pager, KATA_STATE_DIR=str(tmp_path / "state"))
    code, _ = run_on_terminal(["list"], env, rows=30, timeout=60)
    shown = seen.read_text()
    assert code == 0 and shown.lstrip().startswith("Katas") and "llm-infra-oa *" in shown


def test_a_moment_of_a_session_never_reads_as_hours_or_a_time_of_day():
    from kata.views import elapsed

    assert [elapsed(s) for s in (0, 42, 67, 137, 3725, 5400)] == \
        ["0s", "42s", "1m07s", "2m17s", "1h02m05s", "1h30m00s"]


def test_the_keep_your_file_question_comes_after_the_briefing(fixture_workbook, tmp_path):
    from tests.terminal import run_on_terminal, screen_text, stock_env

    env = stock_env(KATA_WORKBOOK=str(fixture_workbook), KATA_STATE_DIR=str(tmp_path / "s"))
    assert run_on_terminal(["start", "adder", "--yes"], env, timeout=60)[0] == 0
    assert run_on_terminal(["finish", "--yes"], env, timeout=60)[0] == 0
    (tmp_path / "s" / "workspace" / "adder.py").write_text("def add(a, b):\n    return a + b  # mine\n")
    code, raw = run_on_terminal(["start", "adder"], env, keys=b"y\ry\r", timeout=60)
    seen = screen_text(raw)
    assert code == 0 and seen.index("Adder (") < seen.index("Go on with your") < seen.index("Start the clock now?")
    assert (tmp_path / "s" / "workspace" / "adder.py").read_text().endswith("# mine\n")  # y: went on with it


def test_progress_keeps_its_session_marks_beside_their_label(isolated_state, monkeypatch, capsys):
    from kata import output
    from kata.output import NBSP, say

    monkeypatch.setenv("COLUMNS", "40")
    output.reset()
    say(f"lru-kv-cache  ####..  38.12/100  sessions:{NBSP}▃▅▇", indent=4)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].strip() == "sessions: ▃▅▇" and NBSP not in "".join(lines), lines
    output.reset()


def test_two_kv_charts_drawn_to_one_end_share_their_time_axis():
    from kata.engine.report import kv_chart

    short = [(0.0, 1.0), (10.0, 1.0)]
    long = [(0.0, 1.0), (10.0, 1.0), (20.0, 1.0)]
    a, b = kv_chart(short, width=20, until=20.0), kv_chart(long, width=20, until=20.0)
    assert len(a) == len(b) == 20 and b == "█" * 20
    assert a == "█" * 11 + " " * 9  # the short run ends halfway along the same axis
    assert kv_chart(long, width=3) == "███"  # without `until`: by sample, as before


def test_a_briefing_and_an_engine_report_taller_than_the_screen_go_to_the_pager(tmp_path):
    import sys

    from tests.terminal import run_on_terminal, screen_text, stock_env

    seen = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open('{seen}', 'a').write(sys.stdin.read())\""
    env = stock_env(PAGER=pager, KATA_STATE_DIR=str(tmp_path / "state"))
    code, raw = run_on_terminal(["start", "onsite"], env, rows=30, keys=b"n\r", timeout=60)
    assert code == 0 and "Start the clock now?" in screen_text(raw)
    assert seen.read_text().startswith("LLM inference infrastructure: the onsite loop")  # whole, before the question
    seen.unlink()
    code, _ = run_on_terminal(["engine", "compare"], env, rows=30, timeout=120)
    shown = seen.read_text()
    assert code == 0 and shown.startswith("chat, 300 requests at 20/s") and "static batching" in shown


def test_a_syntax_error_names_its_line_once(isolated_state):
    kata("start", "lru-kv-cache", "--yes")
    (isolated_state / "workspace" / "lru_kv_cache.py").write_text("def f(:\n    pass\n")
    said = " ".join(kata("check", code=1).output.split())
    assert "raised SyntaxError at line 1: invalid syntax" in said or "raised SyntaxError at line 1: " in said
    assert "line 1)" not in said, said  # not "(lru_kv_cache.py, line 1)" again
