"""The words a learner reads: each says what it shows, and what it says is true of the session."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios

import pytest
from rich.cells import cell_len

from kata import views
from tests.conftest import FIXTURES, REPO, end_keepers
from tests.terminal import stock_env
from tests.test_cli import kata


@pytest.fixture(scope="module")
def adder_to_full_marks(tmp_path_factory):
    """One practice session of the fixture's `adder` (two levels, opened one at a time), graded
    twice with the reference: level 1 alone (10 of 30 points), then both (30/30); then finished.
    What `submit` (each time), `finish` and `progress` printed."""
    root = tmp_path_factory.mktemp("adder")
    shutil.copytree(FIXTURES / "workbook", root / "wb")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_STATE_DIR", str(root / "state"))
        mp.setenv("KATA_WORKBOOK", str(root / "wb"))
        mp.setenv("KATA_PLAIN", "1")
        for name in ("KATA_NOW", "COLUMNS"):
            mp.delenv(name, raising=False)
        views.reset_console()
        try:
            kata("start", "adder", "--yes")
            shutil.copyfile(root / "wb" / "solutions" / "adder.py", root / "state" / "workspace" / "adder.py")
            said = {"submit 1": kata("submit").stdout, "submit 2": kata("submit").stdout,
                    "finish": kata("finish", "--yes").stdout, "progress": kata("progress").stdout}
        finally:
            views.reset_console()
            end_keepers(root)
    return said


# --- 1. progress: the marks of the sessions, never a count that is wrong ---------------------


def test_progress_labels_its_marks_with_the_number_of_sessions(adder_to_full_marks):
    shown = adder_to_full_marks["progress"]
    assert "sessions: 9" not in shown  # one session at full marks: a 9 that read as nine sessions
    assert "marks of 1 session: 9" in shown, shown
    assert "marks: one per session, oldest first (0 = under 10%, 9 = 90% or more)" in shown, shown


# --- 2. finish after a full score says so ----------------------------------------------------


def test_finish_after_a_full_score_says_every_hidden_test_passed(adder_to_full_marks):
    shown = adder_to_full_marks["finish"]
    assert "what you missed" not in shown
    assert "Every hidden test passed: 30/30 points. `kata review 1` shows the session." in shown, shown


# --- 3. review: levels never opened are named, with their points ------------------------------


def test_review_names_the_levels_never_opened_and_the_points_left(isolated_state):
    """A project exam (levels open one at a time) with level 1 passed, level 2 opened and never
    graded, levels 3-4 never opened: 25/100, and its closing line says so."""
    kata("start", "llm-infra-ica-1", "--yes")
    shutil.copyfile(REPO / "solutions" / "kv-block-store.py", isolated_state / "workspace" / "kv_block_store.py")
    kata("submit")
    kata("finish", "--yes")
    shown = kata("review").stdout
    assert "25/100 points" in shown
    last = shown.strip().splitlines()[-1].strip()
    assert last == ("every hidden test of level 1 passed; level 2 not in the counted submission: "
                    "25 points left; levels 3-4 never opened: 50 points left"), shown
    assert "every hidden test passed" not in shown


# --- 4. the full-score submit keeps the question's share ---------------------------------------


def test_the_full_score_submit_says_its_share_of_the_question_as_earlier_ones_do(adder_to_full_marks):
    assert "Recorded for session 1: 10 of the question's 30 points so far." in adder_to_full_marks["submit 1"]
    assert "Recorded for session 1: 30 of the question's 30 points." in adder_to_full_marks["submit 2"], \
        adder_to_full_marks["submit 2"]


# --- 5. piped output wraps at 80 columns (or COLUMNS), with no trailing spaces -----------------


def piped(*args: str, **env: str) -> str:
    """`kata ARGS | cat` typed at a terminal 186 columns wide, in the folder that holds the state
    (so the workspace's paths are short): stdout a pipe, stdin the terminal, a stock shell's
    environment (no test switches) plus `env`. What reached the pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 186, 0, 0))
    here = os.path.dirname(os.environ["KATA_STATE_DIR"])
    try:
        done = subprocess.run([sys.executable, "-m", "kata", *args], stdin=slave, capture_output=True,
                              env=stock_env(KATA_WORKBOOK=str(REPO), PYTHONPATH=str(REPO), **env),
                              cwd=here, timeout=120, text=True)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    return done.stdout


def misfits(shown: str, width: int) -> list[str]:
    """The lines wider than `width` cells or ending in a space."""
    return [line for line in shown.splitlines() if cell_len(line) > width or line.endswith(" ")]


def test_piped_output_wraps_at_80_columns_without_trailing_spaces(isolated_state):
    briefing = piped("start", "--yes")
    assert "Rules:" in briefing and not misfits(briefing, 80), misfits(briefing, 80)
    prompt = piped("show", "lru-kv-cache")
    assert "KVBlockCache" in prompt and not misfits(prompt, 80), misfits(prompt, 80)
    piped("finish", "--yes")
    review = piped("review")
    assert "Q4." in review and not misfits(review, 80), misfits(review, 80)


def test_piped_output_wraps_at_columns_when_it_is_set(isolated_state):
    briefing = piped("start", "--yes", COLUMNS="64")
    assert "Rules:" in briefing and not misfits(briefing, 64), misfits(briefing, 64)
    prompt = piped("show", "kv-block-allocator", COLUMNS="64")  # its code lines fit in 64 columns
    assert "Level 1" in prompt and not misfits(prompt, 64), misfits(prompt, 64)


# --- 6. one error voice: Click's usage errors read as kata's own -------------------------------


@pytest.mark.parametrize("args, line", [
    (["start", "--foo"], "error: no such option: --foo (try `kata start -h`)"),
    (["list", "--jsn"], "error: no such option: --jsn. Did you mean --json? (try `kata list -h`)"),
    (["restore", "adder"], "error: missing argument 'N' (try `kata restore -h`)"),
    (["sumbit"], "error: no such command 'sumbit'. Did you mean 'submit'? (try `kata -h`)"),
])
def test_clicks_usage_errors_are_in_katas_error_voice(fixture_workbook, args, line):
    result = kata(*args, code=2)
    assert result.stdout == "" and result.stderr.strip().splitlines() == [line], result.stderr
