"""Output that fits an 80-column screen, and the clock on top of every in-session command."""

from __future__ import annotations

import re
import shutil

import pytest

from kata import views
from tests.test_cli import kata

T0 = 1_800_000_000.0


@pytest.fixture
def cols80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    views.reset_console()


def test_check_on_a_stub_fits_a_screen(cols80, isolated_state):
    kata("start", "lru-kv-cache", "--yes", "--reveal", "all")
    out = kata("check", "lru-kv-cache", code=1).output
    lines = out.splitlines()
    assert len(lines) <= 80, len(lines)
    # wider: only a traceback's `file:line`, kept whole so an editor can jump to it
    wide = [line for line in lines if len(line) > 80]
    assert all(f"{isolated_state}/workspace/lru_kv_cache.py:" in line for line in wide), wide
    assert "level 1: 0/4 pass" in out
    # every test fails with the stub's NotImplementedError: said once, with one traceback
    assert "every test fails the same way: NotImplementedError" in out
    assert out.count("raise NotImplementedError") == 1


def test_check_shows_the_first_failures_in_full_then_how_to_see_the_rest(cols80, isolated_state):
    from kata.catalog import Workbook

    kata("start", "lru-kv-cache", "--yes", "--reveal", "all")
    ref = Workbook.find().kata("lru-kv-cache").solution.read_text()
    (isolated_state / "workspace" / "lru_kv_cache.py").write_text(  # evicts at equality: 4 tests fail
        ref.replace("while self._used > self._capacity", "while self._used >= self._capacity"))
    out = kata("check", code=1).output
    assert out.count("\n  FAIL ") == 2 and "2 more: `kata check --failed` shows them all" in out
    failed = kata("check", "--failed", code=1).output
    assert failed.count("\n  FAIL ") == 4 and "more:" not in failed and "PASS" not in failed


def test_a_syntax_error_is_shown_once(cols80, isolated_state):
    kata("start", "lru-kv-cache", "--yes", "--reveal", "all")
    (isolated_state / "workspace" / "lru_kv_cache.py").write_text("def broken(:\n")
    out = kata("check", code=1).output
    assert out.count("SyntaxError") == 1 and "every test fails the same way" in out
    assert len(out.splitlines()) <= 10


def test_tracebacks_name_the_learners_file(isolated_state):
    kata("start", "lru-kv-cache", "--yes")
    out = kata("check", code=1).output
    assert "workspace/lru_kv_cache.py:" in out and "submission" not in out


def test_list_shows_every_slug_whole_at_80_columns(cols80):
    from kata.catalog import Workbook

    out = kata("list").output
    wb = Workbook.find()
    for slug in wb.slugs():
        assert f" {slug} " in out, slug
    assert max(len(line) for line in out.splitlines()) <= 80
    # short headers, and no exam titles (kata start shows them): most rows fit one line
    rows = len(wb.slugs()) + len(wb.exams())
    assert len(out.splitlines()) <= 3 * rows // 2 + 8, len(out.splitlines())


def test_every_in_session_command_starts_with_the_clock(fixture_workbook, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "oa", "--yes")
    for command in (["show", "adder"], ["check", "adder"], ["submit", "adder"], ["hint", "adder"],
                    ["status"]):
        out = kata(*command, code=None).output
        assert out.splitlines()[0].startswith("Session 1 (oa"), (command, out)
        assert "6:00 left" in out.splitlines()[0]
    assert "Q1 adder" in kata("hint", "adder").output.splitlines()[0]


@pytest.mark.parametrize("left, warning", [(601, None), (600, "under 10 minutes left"),
                                           (299, "under 5 minutes left"),
                                           (59, "under 1 minute left: submit what you have")])
def test_warnings_in_the_last_minutes(isolated_state, monkeypatch, left, warning):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "lru-kv-cache", "--yes", "--minutes", "20")
    monkeypatch.setenv("KATA_NOW", str(T0 + 1200 - left))
    first = kata("status").output.splitlines()[0]
    if warning is None:
        assert "left (" not in first, first
    else:
        assert first.endswith(f"({warning})"), first


def test_snapshots_and_restore_archive_the_current_file_first(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    target = isolated_state / "workspace" / "adder.py"
    kata("check", code=1)  # snapshot 1: the stub
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", target)
    kata("submit")  # snapshot 2: the reference
    target.write_text("# half-finished work\n")
    listing = kata("snapshots", "adder").output
    assert "1  " in listing and "check" in listing and "submit" in listing and "10/10 pts" in listing
    out = kata("restore", "adder", "2").output
    assert "Restored snapshot 2 of adder" in out and f"previous file is in {isolated_state.resolve()}/.kata/archive/" in out
    assert target.read_text() == (fixture_workbook / "solutions" / "adder.py").read_text()
    archived = list((isolated_state / ".kata" / "archive").rglob("adder.py"))
    assert any(a.read_text() == "# half-finished work\n" for a in archived)
    assert "no snapshot 9 of adder: `kata snapshots adder` lists 1..2" in kata("restore", "adder", "9", code=2).output


def test_show_keeps_inline_code_visible_without_colour(cols80, isolated_state):
    out = kata("show", "lru-kv-cache").output
    assert "`KVBlockCache`" in out or "`lru_kv_cache.py`" in out  # the backticks stay


def test_inline_code_that_runs_over_a_line_break_stays_one_span_without_colour(monkeypatch, capsys):
    from kata import views

    monkeypatch.setenv("KATA_PLAIN", "1")
    views.print_markdown("A cut `prefill_tokens =\n(verdict - start) // cost` and then `x_y`.\n")
    out = " ".join(capsys.readouterr().out.split())
    assert "`prefill_tokens = (verdict - start) // cost`" in out and "`x_y`" in out
    assert "\\" not in out


def test_solution_shows_every_line_uncropped(cols80, isolated_state):
    from kata.catalog import Workbook

    code = Workbook.find().kata("lru-kv-cache").solution.read_text()
    out = kata("solution", "lru-kv-cache").output
    for line in code.splitlines():
        assert line.strip() in out, line


def test_show_prints_every_code_block_line_verbatim(cols80, isolated_state):
    import re

    from kata.catalog import Workbook

    for kata_ in Workbook.find().katas():
        out = kata("show", kata_.slug).output
        for block in re.findall(r"```.*?\n(.*?)```", kata_.prompt.read_text(), re.S):
            for line in block.splitlines():
                assert line in out, (kata_.slug, line)


def test_show_in_colour_never_rewraps_a_code_block(monkeypatch):
    """On a colour terminal, a code line wider than the screen is printed whole, not reflowed."""
    import io

    from rich.console import Console

    monkeypatch.delenv("KATA_PLAIN", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    buf = io.StringIO()
    from kata import output

    output._consoles[False] = Console(file=buf, width=40, force_terminal=True, color_system=None)
    long_line = "cache.put('c', [3, 4])        # -> ['b']   'a' is skipped; keys ['c', 'a']"
    views.print_markdown("Intro with `code`.\n\n```python\n" + long_line + "\n```\n\nAfter.\n")
    views.reset_console()
    assert long_line in buf.getvalue()


def test_engine_tables_never_split_a_number(cols80):
    from rich.console import Console

    from kata.engine.report import _metrics_table
    from kata.judges.cli import _fmt

    class M:
        ttft_p50, ttft_p90, ttft_p99 = 67.783, 135.941, 148.574

    assert _fmt(M, ("ttft_p50", "ttft_p90", "ttft_p99"), "sig") == "67.8/136/149"
    assert _fmt(M, ("ttft_p50",), "{:.3f}") == "67.783"
    from kata.engine.metrics import Metrics

    metrics = Metrics(**{f.name: 1234.5678 for f in __import__("dataclasses").fields(Metrics)
                         if f.type in ("float", "int", float, int)})
    console = Console(width=60, record=True, file=open("/dev/null", "w"))
    console.print(_metrics_table({"reference": metrics, "yours": metrics}))
    rows = [ln for ln in console.export_text().splitlines() if ln.startswith("│")]
    assert len(rows) == 13 and all("1,235/1,235/1,235" in ln for ln in rows if "p50/p90/p99 s" in ln), rows


def test_review_lists_the_first_misses_then_all_with_failed(cols80, isolated_state):
    from kata.catalog import Workbook
    from kata.grading import grade

    kata("start", "lru-kv-cache", "--yes", "--reveal", "all")
    lru = Workbook.find().kata("lru-kv-cache")
    work = isolated_state / "workspace" / "lru_kv_cache.py"
    # evicts at equality, and level 3's get_or_put is not written: dozens of misses, each of its
    # own, and 18 that share one NotImplementedError
    text = lru.solution.read_text().replace("while self._used > self._capacity", "while self._used >= self._capacity")
    head, _, _ = text.partition("    def get_or_put(")
    work.write_text(head + "    def get_or_put(self, key, factory):\n        raise NotImplementedError\n")
    kata("submit", code=1)
    kata("finish")
    summary = kata("review").output
    assert summary.count("\n  FAIL ") + summary.count("\n  ERROR ") == 10
    assert "more: `kata review --failed` shows them all" in summary
    assert re.search(r"\n  \d+ tests fail the same way: NotImplementedError\n", summary), summary
    assert summary.index("fail the same way") > summary.rindex("\n  FAIL ")  # after the ones of their own
    failed = kata("review", "--failed").output
    misses = sum(t.status != "pass" for t in grade(lru, work).tests)
    assert failed.count("\n  FAIL ") + failed.count("\n  ERROR ") == misses and "PASS" not in failed
    everything = kata("review", "--all").output
    assert len(everything.splitlines()) > len(failed.splitlines()) // 2
    assert len(summary.splitlines()) <= 60


def test_progress_charts_the_best_score_and_the_fastest_levels(fixture_workbook, isolated_state, monkeypatch):
    import json

    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "adder", "--yes")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    monkeypatch.setenv("KATA_NOW", str(T0 + 30))
    kata("submit")
    monkeypatch.setenv("KATA_NOW", str(T0 + 90))
    kata("submit")
    kata("finish")
    out = kata("progress").output
    assert out.startswith("Best score per kata on its hidden suite:\nadder ")
    assert "adder" in out and "30/30" in out and "fastest: L1 30s, L2 1m30s" in out
    (row,) = json.loads(kata("progress", "--json").output)["katas"]
    assert row["best"] == 30 and row["sessions"] == [{"session": 1, "points_earned": 30}]
    assert row["fastest_level_s"] == {"1": 30.0, "2": 90.0}


def test_unknown_names_suggest_the_closest(fixture_workbook):
    assert "Did you mean 'adder'?" in kata("show", "addr", code=2).output
    assert "Did you mean 'mini'?" in kata("start", "minni", code=2).output
    assert "Did you mean 'check'?" in kata("chek", code=2).output


def test_shell_completion_offers_slugs_and_exams(fixture_workbook):
    from kata.commands.base import complete_slug, complete_target

    assert complete_slug("ad") == ["adder"] and complete_slug("zz") == []
    assert set(complete_target("")) == {"adder", "mini", "oa"}
    assert "--install-completion" in kata("--help").output


def test_a_moment_shows_as_one_clock_time():
    from kata.views import clock

    assert clock(125.976) == clock(126.0) == "2:06"  # review's "made at" and "submitted at" agree
    assert clock(3725) == "1:02:05" and clock(-3) == "0:00"


def test_history_keeps_names_dates_and_scores_whole_at_80_columns(cols80):
    kata("start", "streaming-token-counter", "--yes")
    kata("finish", "--yes")
    out = kata("history").output
    assert " streaming-token-counter " in out and "finished" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert len(out.splitlines()) == 3  # the header, its rule, one row: nothing wrapped


def test_say_keeps_an_inline_command_on_one_line():
    """A short code span (a command, an assignment) is wrapped as one unit; a span too long for a
    line is still cut at its spaces, never inside a word."""
    from rich.text import Text

    from kata.output import wrap

    message = 'Pin it in workspace/test_hunt_x.py, or if the code is correct write `HUNT_VERDICT = "correct"` there.'
    lines = [line.plain for line in wrap(Text(message), 60)]
    assert any('`HUNT_VERDICT = "correct"`' in line for line in lines), lines
    long_span = "see `" + " ".join(["word"] * 30) + "` here"
    lines = [line.plain for line in wrap(Text(long_span), 40)]
    assert all(len(line) <= 40 for line in lines) and " ".join(lines).split() == long_span.split()


def test_every_line_of_a_several_line_message_sits_under_its_first(cols80, capsys):
    from kata.results import TestResult

    t = TestResult("t.py::test_raises", "fail", message="Regex pattern did not match.\n"
                   "Expected regex: 'chunk'\nActual message: \"can't concat str to bytes\"", task_id=1)
    views._test_line(t, edge=False, message=True, detail_lines=0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == ["      Regex pattern did not match.", "      Expected regex: 'chunk'",
                         "      Actual message: \"can't concat str to bytes\""]
    t.message = "assert ['b', 'a'] == ['b']\n\n  Left contains one more item: 'a'\n  Use -v to get more diff"
    views._test_line(t, edge=False, message=True, detail_lines=0)
    assert "Use -v" not in capsys.readouterr().out  # pytest's advice: the learner runs kata
