"""The first hour of a new user, at 80 columns: one test per stumble found trying it in a real
terminal (numbered as they were found), then every command's lines on a pseudo-terminal 80 columns
wide and piped with COLUMNS=80 and NO_COLOR: no prose line wider than the screen, no word broken,
every code line whole. (`kata watch`'s event loop is tested in test_watch.py.)"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kata import output, views
from tests.terminal import run_on_terminal, screen_text, stock_env, too_wide, unbroken
from tests.test_cli import kata

T0 = 1_800_000_000.0


@pytest.fixture
def cols80(monkeypatch):
    """Piped, as `kata ... | cat` with COLUMNS=80 and NO_COLOR (and no test switch)."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("KATA_PLAIN")
    views.reset_console()


def _submitted_and_finished(workspace_code=None):
    kata("start", "adder", "--yes", "--reveal", "all")
    if workspace_code is not None:
        (output_dir() / "adder.py").write_text(workspace_code)
    kata("submit", code=None)
    kata("finish")


def output_dir():
    import os
    from pathlib import Path

    return Path(os.environ["KATA_STATE_DIR"]) / "workspace"


# --- 1. the pager: only on a terminal, only when taller, colour shown as colour -------------


@pytest.mark.parametrize("env, expected", [
    ({}, (["less"], "FRX", True)),  # git's default for an unset LESS
    ({"LESS": "-R"}, (["less"], "-R", True)),
    ({"LESS": "-S"}, (["less"], "-S", False)),  # the user's LESS shows no colour: plain text
    ({"LESS": "--RAW-CONTROL-CHARS"}, (["less"], "--RAW-CONTROL-CHARS", True)),
    ({"LESS": "--quit-if-one-screen"}, (["less"], "--quit-if-one-screen", False)),
    ({"LESS": "", "PAGER": "less -r"}, (["less", "-r"], "", True)),
    ({"PAGER": "more"}, (["more"], None, False)),
    ({"PAGER": "cat"}, None),
    ({"PAGER": ""}, None),
])
def test_the_pager_honours_pager_and_less(env, expected, monkeypatch):
    from kata import output

    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    found = output.pager_command(env)
    if expected is None:
        assert found is None
        return
    argv, less, colour = expected
    assert found[0] == argv and found[2] is colour
    assert found[1].get("LESS") == less


def test_review_that_fits_the_screen_is_not_paged_and_shows_no_escape_codes(fixture_workbook):
    _submitted_and_finished()
    code, raw = run_on_terminal(["review"], stock_env(), cols=80, rows=30, timeout=30)
    assert code == 0 and "Review of session 1" in raw
    assert "ESC[" not in raw and "\x1b[1m" in raw  # bold sent as bold, not spelled out


@pytest.mark.skipif(shutil.which("less") is None, reason="needs less")
def test_review_taller_than_the_screen_goes_through_less_with_colour(fixture_workbook):
    _submitted_and_finished()
    code, raw = run_on_terminal(["review", "--all"], stock_env(), cols=80, rows=8, keys=b"q",
                                timeout=30)
    assert code == 0 and "Review of session 1" in screen_text(raw)
    assert "ESC[" not in raw  # less -R: colour, never `ESC[1m` on the screen


def test_a_tall_output_goes_to_the_users_pager_only_on_a_terminal(fixture_workbook, tmp_path):
    seen = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c \"import sys; open('{seen}', 'w').write(sys.stdin.read())\""
    code, raw = run_on_terminal(["show", "adder"], stock_env(PAGER=pager), rows=5, timeout=30)
    assert code == 0 and "Adder" in seen.read_text()  # the user's pager, with plain text
    assert "\x1b[" not in seen.read_text()  # a pager other than less gets no escape codes
    seen.unlink()
    assert "Adder" in kata("show", "adder").output and not seen.exists()  # piped: never paged
    code, raw = run_on_terminal(["-h"], stock_env(PAGER=pager), rows=10, timeout=30)
    assert code == 0 and seen.read_text().startswith("Usage: kata")  # the help, 45 lines


def test_the_pager_counts_the_rows_long_lines_wrap_onto(monkeypatch):
    # a failure report's 200-character source line takes three rows at 80 columns: ten such
    # lines fill a 30-row screen although they are ten lines
    from kata import output

    shown = []
    monkeypatch.setattr(output, "pager_command", lambda environ: shown.append("pager") or None)
    assert output.screen_rows("ab\ncdefg\n", 4) == 3
    assert output.screen_rows("\x1b[1m" + "x" * 80 + "\x1b[0m\n", 80) == 1  # escape codes take no room
    output.page(("y" * 200 + "\n") * 10, 30, 80)
    assert shown == ["pager"]
    output.page(("y" * 200 + "\n") * 10, 30, 1000)
    assert shown == ["pager"]  # on a wide screen the same ten lines fit: printed


def test_what_was_printed_before_an_error_is_still_shown(monkeypatch):
    import io

    from rich.console import Console

    screen = io.StringIO()
    output._consoles[False] = Console(file=screen, force_terminal=True, width=80, height=30)
    monkeypatch.setattr(output, "on_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdout", screen)
    with pytest.raises(RuntimeError), output.paged():
        output.say("the part that printed")
        raise RuntimeError("then a failure")
    assert screen.getvalue() == "the part that printed\n"


# --- 2. progress: from the harness's counts, never past the total, on stderr ---------------


def test_progress_knows_the_total_first_and_never_passes_it(fixture_workbook):
    from kata.catalog import Workbook
    from kata.grading import grade

    kata_ = Workbook.find().kata("adder")
    calls = []
    grade(kata_, kata_.solution, on_progress=lambda done, total, level: calls.append((done, total, level)))
    assert calls[0][0] == 0 and calls[0][2] is None  # the total, before any result
    totals = {total for _, total, _ in calls}
    assert len(totals) == 1 and all(done <= total for done, total, _ in calls)
    assert calls[-1][0] == calls[-1][1]  # canaries are never counted


def test_progress_goes_to_stderr(fixture_workbook):
    kata("start", "adder", "--yes")
    result = kata("submit", code=1)
    assert "grading adder (hidden suite)" in result.stderr
    assert "grading" not in result.stdout


def test_keys_typed_while_a_bar_shows_are_not_echoed_onto_it(monkeypatch):
    import os
    import pty
    import termios

    master, slave = pty.openpty()
    try:
        monkeypatch.setattr(sys, "stdin", os.fdopen(slave, "r", closefd=False))
        with output.keys_unechoed():
            assert not termios.tcgetattr(slave)[3] & termios.ECHO
        assert termios.tcgetattr(slave)[3] & termios.ECHO  # restored
    finally:
        os.close(master)
        os.close(slave)


# --- 3. start over a live session is refused before the briefing; 7. finish asks ----------


def test_start_over_a_live_session_is_refused_before_the_briefing(fixture_workbook):
    kata("start", "adder", "--yes")
    result = kata("start", "mini", code=2)
    assert "still live" in result.stderr and "Rules:" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_start_on_a_terminal_asks_and_a_stray_enter_starts_nothing(fixture_workbook):
    code, raw = run_on_terminal(["start", "adder"], stock_env(), keys=b"\n", timeout=30)
    assert "Start the clock now? [y/N]" in raw and "Not started" in raw
    assert "No live session" in kata("status").output


def test_finish_on_a_terminal_asks_and_yes_skips_the_question(fixture_workbook):
    kata("start", "adder", "--yes")
    code, raw = run_on_terminal(["finish"], stock_env(), keys=b"\n", timeout=30)
    assert "It cannot be resumed. [y/N]" in raw and "Not finished" in raw
    assert "Session 1 (adder)" in kata("status").output
    code, raw = run_on_terminal(["finish", "--yes"], stock_env(), timeout=30)
    assert code == 0 and "finished" in raw and "[y/N]" not in raw


def test_a_long_question_wraps_at_spaces_and_the_answer_follows_its_last_line(monkeypatch, capsys):
    from kata.commands.learner_session import confirm

    monkeypatch.setenv("COLUMNS", "80")
    output.reset()
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "y")
    question = "End session 1 (streaming-token-counter) with 33:59 left? It cannot be resumed."
    assert confirm(question) is True
    shown = capsys.readouterr().out.splitlines() + asked
    assert all(len(line) <= 80 for line in shown), shown
    assert " ".join(" ".join(shown).split()) == question + " [y/N]"
    assert len(shown) == 2 and asked == ["[y/N] "]  # 86 characters at 80 columns: two lines
    output.reset()


# --- 4. a deleted workspace file points to kata restore ------------------------------------


def test_a_deleted_file_points_to_restore_not_start(fixture_workbook):
    kata("start", "adder", "--yes")
    kata("check", code=1)  # a snapshot
    (output_dir() / "adder.py").unlink()
    result = kata("check", code=2)
    assert "`kata restore adder 1`" in result.stderr and "kata start" not in result.stderr


# --- 6. the auto-submit after a deadline says what it is doing -----------------------------


def test_the_auto_submit_says_so_before_it_grades(fixture_workbook, monkeypatch):
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "adder", "--yes")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", output_dir() / "adder.py")
    monkeypatch.setenv("KATA_NOW", str(T0 + 10))
    kata("check")  # a snapshot saved before the deadline
    monkeypatch.setenv("KATA_NOW", str(T0 + 3600))
    result = kata("status")
    err = result.stderr
    assert err.index("The clock ran out: auto-submitting adder") < err.index("grading adder") \
        < err.index("adder: auto-submitted")


# --- 8. every usage error is one `error:` line on stderr, exit 2 -----------------------------


@pytest.mark.parametrize("args, text", [
    (["sumbit"], "no such command 'sumbit'. Did you mean 'submit'?"),
    (["list", "--jsn"], "no such option: --jsn. Did you mean --json?"),
    (["start", "--minutes", "x"], "invalid value for '--minutes'"),
    (["restore", "adder"], "missing argument"),
    (["show", "addr"], "unknown kata 'addr'. Did you mean 'adder'?"),
])
def test_usage_errors_are_one_error_line_on_stderr(fixture_workbook, args, text):
    result = kata(*args, code=2)
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and text in line and "Traceback" not in line


def test_a_mistyped_name_suggests_instead_of_printing_the_catalogue():
    result = kata("start", "token-batchr", code=2)
    assert "Did you mean 'token-batcher'?" in result.stderr and "lru-kv-cache" not in result.stderr


def test_the_start_of_a_name_suggests_the_only_kata_it_begins():
    from kata.catalog import did_you_mean

    assert did_you_mean("streaming", ["lru-kv-cache", "streaming-token-counter"]) == \
        " Did you mean 'streaming-token-counter'?"
    assert did_you_mean("token", ["token-batcher", "token-cost-ledger"]) == ""  # two begin so: neither


def test_kata_alone_shows_the_help_on_stdout_and_succeeds():
    result = kata()
    assert result.stdout.startswith("Usage:") and "start" in result.stdout and not result.stderr


def test_the_command_list_reads_whole_at_80_columns(cols80):
    """Each command's line in `kata -h` is a whole phrase: none cut short in "...", none wider."""
    shown = kata("-h").stdout
    commands = shown.split("Commands:")[1].splitlines()
    assert len([c for c in commands if c.strip()]) >= 25
    assert not too_wide(shown) and not [c for c in commands if c.rstrip().endswith("...")], commands


def test_dash_h_is_help_and_hint_defaults_to_the_sessions_kata(fixture_workbook):
    assert kata("-h").output == kata("--help").output
    assert "Usage:" in kata("hint", "-h").output
    kata("start", "mini", "--yes")
    assert "Hint 1 of 2 for level 1" in kata("hint").output


# --- 9. wrapping at spaces, never inside a word; code lines whole --------------------------


@settings(max_examples=150, deadline=None, derandomize=True)
@given(words=st.lists(st.text(alphabet="ab-/:.", min_size=1, max_size=30), max_size=40),
       width=st.integers(10, 100), indent=st.integers(0, 8))
def test_wrap_never_breaks_a_word_and_fits_every_line_that_can_fit(words, width, indent):
    from rich.text import Text

    lines = [line.plain for line in output.wrap(Text(" ".join(words)), width, indent)]
    assert " ".join(lines).split() == words  # every word whole, in order
    for i, line in enumerate(lines):
        assert len(line) <= width or len(line.split()) == 1, (line, width)
        if i:
            assert line.startswith(" " * indent) and not line[indent:].startswith(" ")


def _token_batcher_hints():
    from kata.catalog import Workbook

    return [text for level, text in Workbook.find().kata("token-batcher").hints if level == 1]


def test_hints_on_a_terminal_wrap_at_spaces(monkeypatch):
    kata("start", "token-batcher", "--yes")
    code, raw = run_on_terminal(["hint", "token-batcher"], stock_env(), timeout=30)
    shown = screen_text(raw)
    assert code == 0 and not too_wide(shown), shown
    assert not unbroken(_token_batcher_hints()[0], shown), shown


def test_hints_piped_with_columns_80_wrap_at_spaces(cols80):
    kata("start", "token-batcher", "--yes")
    hints = _token_batcher_hints()
    shown = "".join(kata("hint", "token-batcher").output for _ in hints)
    assert not too_wide(shown) and not unbroken(" ".join(hints), shown)


def test_error_lines_wrap_at_spaces_and_keep_a_slug_whole(cols80):
    kata("start", "streaming-token-counter", "--yes", "--minutes", "30")
    shown = kata("start", "streaming-token-counter", code=2).stderr
    assert shown.startswith("error: ") and not too_wide(shown), shown
    assert "(streaming-token-counter)" in shown.split()
    code, raw = run_on_terminal(["start", "streaming-token-counter"], stock_env(), timeout=30)
    on_screen = screen_text(raw)
    assert code == 2 and on_screen.startswith("error: ") and not too_wide(on_screen), on_screen
    # the two runs may be a second apart on a busy machine: compare the words, not the clock
    assert not unbroken(*(re.sub(r"\d+:\d\d left", "M:SS left", text) for text in (shown, on_screen)))


def test_engine_errors_wrap_at_spaces_like_every_error(cols80, tmp_path):
    from tests.conftest import REPO

    stub = tmp_path / "serving_plan.py"
    shutil.copyfile(REPO / "katas" / "serving-plan" / "serving_plan.py", stub)
    shown = kata("engine", "plan", str(stub), "--level", "1", code=2).stderr
    assert shown.startswith("error:") and "NotImplementedError):" in shown.split(), shown
    assert not too_wide(shown), shown


def test_a_traceback_keeps_file_and_line_whole(cols80, capsys):
    from types import SimpleNamespace

    from kata.grading import TestResult

    where = "katas/streaming-token-counter/test_visible.py:123: in test_prompt_example_level3"
    detail = f"{where}_of_a_long_name\n    got = impl.count(chunks)\nE   AssertionError: 3 != 4"
    t = TestResult("test_visible.py::test_x", "fail", "3 != 4", detail, task_id=3)
    views.failures(SimpleNamespace(tests=[t]), "failed", 2, "kata check", edge=False,
                   detail_lines=None)
    lines = capsys.readouterr().out.splitlines()
    # path:line whole on its line, for an editor to jump to; the test's name under it
    at = lines.index("      katas/streaming-token-counter/test_visible.py:123:")
    assert lines[at + 1] == "          in test_prompt_example_level3_of_a_long_name", lines


@pytest.mark.parametrize("slug", ["token-batcher", "tp-placement"])
def test_show_keeps_every_code_line_whole_and_prose_within_80(slug):
    from kata.catalog import Workbook
    from kata.prompt import blocks

    kata("start", slug, "--yes", "--reveal", "all")
    text = Workbook.find().kata(slug).prompt.read_text()
    code_lines = {line.strip() for b in blocks(text) if b.kind == "code" for line in b.text.splitlines()}
    code, raw = run_on_terminal(["show", slug], stock_env(PAGER="cat"), timeout=30)
    shown = screen_text(raw)
    assert code == 0 and not too_wide(shown, allowed=code_lines), too_wide(shown, allowed=code_lines)
    lines = {line.strip() for line in shown.splitlines()}
    assert not [c for c in code_lines if c and c not in lines]


def test_check_and_review_on_a_terminal_fit_80_columns(fixture_workbook):
    kata("start", "adder", "--yes", "--reveal", "all")
    (output_dir() / "adder.py").write_text("def add(a, b):\n    return a - b\n")
    code, raw = run_on_terminal(["check"], stock_env(PAGER="cat"), timeout=60)
    assert code == 1 and not too_wide(screen_text(raw)), screen_text(raw)
    kata("submit", code=1)
    kata("finish")
    code, raw = run_on_terminal(["review", "--all"], stock_env(PAGER="cat"), timeout=30)
    shown = screen_text(raw)
    assert code == 0 and not too_wide(shown), shown
    edges = json.loads(kata("review", "--json").output)["questions"][0]["result"]["tests"]
    assert not unbroken(" ".join(t.get("edge") or "" for t in edges), shown)


def _every_slug():
    from kata.catalog import Workbook

    return Workbook.find().slugs()


@pytest.mark.parametrize("slug", _every_slug())
def test_show_piped_with_columns_80_keeps_code_whole_and_words_unbroken(cols80, slug):
    import re

    from kata.catalog import Workbook
    from kata.prompt import blocks

    text = Workbook.find().kata(slug).prompt.read_text()
    code_lines = {line.strip() for b in blocks(text) if b.kind == "code" for line in b.text.splitlines()}
    prose = " ".join(b.text for b in blocks(text) if b.kind == "prose")
    shown = kata("show", slug).output
    assert not too_wide(shown, allowed=code_lines), too_wide(shown, allowed=code_lines)
    assert not [c for c in code_lines if c and c not in {ln.strip() for ln in shown.splitlines()}]
    syntax = re.compile(r"^[-#|>:]+$")  # markdown's own marks (headings, rules, table rows)
    assert not [w for w in unbroken(prose, shown) if not syntax.match(w)]


def test_check_and_review_piped_with_columns_80_fit(cols80, fixture_workbook):
    kata("start", "adder", "--yes", "--reveal", "all")
    (output_dir() / "adder.py").write_text("def add(a, b):\n    return a - b\n")
    assert not too_wide(kata("check", code=1).output)
    kata("submit", code=1)
    kata("finish")
    shown = kata("review", "--all").output
    edges = json.loads(kata("review", "--json").output)["questions"][0]["result"]["tests"]
    assert not too_wide(shown) and not unbroken(" ".join(t.get("edge") or "" for t in edges), shown)


# --- 10. submit and check agree on what no slug means --------------------------------------


def test_submit_without_a_slug_takes_every_question_as_check_does(monkeypatch):
    from kata import session

    kata("start", "llm-infra-oa", "--yes")  # four questions
    asked = {}

    def record(command):
        def fake(wb, katas, progress=None):
            asked[command] = [k.slug for k in katas]
            return []
        return fake

    monkeypatch.setattr(session, "check", record("check"))
    monkeypatch.setattr(session, "submit", record("submit"))
    kata("check")
    kata("submit")
    assert len(asked["check"]) == 4 and asked["submit"] == asked["check"]


# --- 11. the smaller ones ------------------------------------------------------------------


def test_hints_of_levels_an_exam_never_opens_are_not_counted(fixture_workbook):
    kata("start", "oa", "--yes")  # level 1 of adder only: 2 of its 3 hints
    assert "Hint 1 of 2 for level 1: Use +." in kata("hint").output
    kata("hint")
    out = kata("hint").output
    assert "belong to levels not open yet" not in out and "All 2 hints" in out


def test_review_during_a_live_session_says_which_session_it_shows(fixture_workbook):
    _submitted_and_finished()
    kata("start", "adder", "--yes")
    out = kata("review").output
    assert "Session 2 (adder) is live" in out and "This is session 1" in out


def test_progress_marks_a_zero_score_and_explains_the_sparkline(fixture_workbook):
    _submitted_and_finished()  # the stub: 0 points
    out = kata("progress").output
    assert "marks of 1 session: 0" in out and "marks: one per session, oldest first" in out
    assert views.SPARKS[0].strip()  # in colour, a zero is a mark too, never a blank


def test_failure_reports_drop_pytests_advice_to_rerun_with_v(capsys):
    from types import SimpleNamespace

    from kata.grading import TestResult

    detail = ("test_visible.py:9: in test_keys\n    assert got == want\n"
              "E   AssertionError: assert [1, 2] == [2, 1]\n"
              "E     At index 0 diff: 1 != 2\nE     Use -v to get more diff")
    t = TestResult("test_visible.py::test_keys", "fail", "assert [1, 2] == [2, 1]", detail, task_id=1)
    views.failures(SimpleNamespace(tests=[t, TestResult("x::y", "pass")]), "failed", 2, "kata check",
                   edge=False, detail_lines=None)
    out = capsys.readouterr().out
    assert "At index 0 diff" in out and "Use -v" not in out


# --- 12. the prompt split by markdown tokens, code highlighted by its language -------------


def test_a_heading_inside_a_code_block_is_code_not_a_level():
    from kata.prompt import Prompt

    text = ("Intro\n\n## Level 1: one\n\n```markdown\n## Level 2: not a heading\n```\n\n"
            "## Level 2: two\n\nBody\n")
    p = Prompt.parse(text)
    assert p.levels == [1, 2] and "## Level 2: not a heading" in p.render([1])
    assert "Body" not in p.render([1])


def test_code_blocks_are_highlighted_by_their_language(monkeypatch):
    import io
    import re

    from rich.console import Console

    from kata import output

    monkeypatch.delenv("KATA_PLAIN")
    monkeypatch.delenv("NO_COLOR", raising=False)  # a terminal that shows colour
    output._consoles[False] = Console(file=(buf := io.StringIO()), width=80, force_terminal=True,
                                      color_system="truecolor", no_color=False)
    views.print_markdown("```text\nfor x in range(3): pass\n```\n\n```python\nfor x in y: pass\n```\n")
    text_block, python_block = [line for line in buf.getvalue().split("\n") if "pass" in line]
    styles = [set(re.findall(r"\x1b\[[0-9;]*m", b)) - {"\x1b[0m"} for b in (text_block, python_block)]
    assert len(styles[0]) == 1 and len(styles[1]) > 2  # text: one style; python: keywords and names



def test_a_kata_outside_the_live_session_is_not_sent_to_kata_start(isolated_state):
    kata("start", "lru-kv-cache", "--yes")
    out = kata("submit", "token-batcher", code=2).output
    assert "not in session 1 (lru-kv-cache)" in " ".join(out.split())
    assert "`kata start token-batcher`" not in out.split("practise it after")[0]


# --- 13. every prompt's code lines fit 80 columns (`kata show` prints them whole) ---------


def test_every_prompt_code_line_fits_80_columns():
    """Fenced and indented code blocks alike (an indented block is shown with its indent)."""
    from markdown_it import MarkdownIt

    from tests.conftest import REPO

    prompts = sorted((REPO / "katas").glob("*/PROMPT.md"))
    assert prompts
    offenders = []
    for path in prompts:
        for block in MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8")):
            if block.type not in ("fence", "code_block") or block.map is None:
                continue
            first = block.map[0] + (2 if block.type == "fence" else 1)
            indent = 4 if block.type == "code_block" else 0
            offenders += [f"{path.relative_to(REPO)}:{first + i}" for i, line in
                          enumerate(block.content.splitlines()) if indent + len(line) > 80]
    assert not offenders, "code lines over 80 characters: " + ", ".join(offenders)
