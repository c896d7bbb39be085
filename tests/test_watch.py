"""`kata watch`, driven headless: it runs the visible tests at start; saves re-run them and are
snapshotted; keys act, and are dropped while it grades; a level that opens refreshes the screen;
the deadline auto-submits live."""

from __future__ import annotations

import shutil
import threading
import time

from kata.catalog import Workbook
from kata.watch import Event, Watch
from tests.test_cli import kata


def _save_later(path, text, delay=0.8):
    def go():
        time.sleep(delay)
        path.write_text(text)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def test_watch_reruns_the_visible_tests_on_every_save_and_snapshots_it(
        fixture_workbook, isolated_state, capsys):
    kata("start", "adder", "--yes", "--reveal", "all")
    target = isolated_state / "workspace" / "adder.py"
    reference = (fixture_workbook / "solutions" / "adder.py").read_text()
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True, stop_after=1)
    saver = _save_later(target, reference)
    w.run()
    saver.join()
    out = capsys.readouterr().out
    assert "watching 1 file(s)" in out
    assert "adder saved: visible 2/2 pass" in out
    snaps = kata("snapshots", "adder").output
    assert "check" in snaps and "2/2 visible" in snaps


def test_watch_shows_the_first_failure_and_keys_submit_hint_and_quit(
        fixture_workbook, isolated_state, capsys):
    kata("start", "adder", "--yes")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True, stop_after=1)
    saver = _save_later(isolated_state / "workspace" / "adder.py",
                        "def add(a, b):\n    return a - b\n")
    w.run()
    saver.join()
    assert "first failure: test_add:" in capsys.readouterr().out
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    for key in ("h", "s", "n", "q"):
        w.dispatch(Event("key", key))
        w.drain()
    out = capsys.readouterr().out
    assert "Hint 1 of 2 for level 1" in out
    # the level's points, and the question's (the table beside it shows the question's total)
    assert "submitted adder: 10/10 points on level 1; 10 of the question's 30 points so far; level 2 is open" in out
    assert w.stop.is_set()


def test_watch_runs_the_visible_tests_at_start(fixture_workbook, isolated_state, capsys):
    kata("start", "adder", "--yes", "--reveal", "all")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)

    def quit_once_graded():
        deadline = time.monotonic() + 60
        while "adder" not in w.last and time.monotonic() < deadline:
            time.sleep(0.05)
        w.events.put(Event("key", "q"))

    threading.Thread(target=quit_once_graded, daemon=True).start()
    w.run()  # no save at all
    assert w.last["adder"].passed == 0 and len(w.last["adder"].tests) == 2
    assert "visible tests: adder 0/2" in capsys.readouterr().out


def test_watch_drops_keys_typed_while_it_grades_and_says_it_is_grading(
        fixture_workbook, isolated_state):
    from rich.console import Console

    kata("start", "adder", "--yes")
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=False)
    w.dispatch(Event("key", "s"))
    w.dispatch(Event("key", "s"))  # typed while the first submit grades: dropped
    w.dispatch(Event("key", "h"))  # dropped too
    w.dispatch(Event("tick"))  # the clock keeps ticking meanwhile
    console = Console(width=80, no_color=True, record=True, file=open("/dev/null", "w"))
    console.print(w.render())
    screen = console.export_text()
    assert "grading adder (hidden suite)..." in screen and "left" in screen
    assert screen.splitlines()[1].startswith("grading adder (hidden suite)...")  # under the clock, whole
    assert "keys paused while grading" in screen
    w.drain()
    snaps = kata("snapshots", "adder").output
    assert snaps.count("submit") == 1, snaps
    assert "hint" not in w.message


def test_watch_refreshes_the_visible_tests_when_a_level_opens(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")  # progressive: level 1 of 2 open
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    w.on_save(isolated_state / "workspace" / "adder.py")
    w.drain()
    assert len(w.last["adder"].tests) == 1  # level 1's visible test
    w.dispatch(Event("key", "s"))  # passes level 1: level 2 opens
    w.drain()
    assert len(w.last["adder"].tests) == 2 and w.last["adder"].passed == 2
    # the submit's outcome stays in view beside the refreshed count
    assert w.message == ("submitted adder: 10/10 points on level 1; 10 of the question's 30 points so far; "
                         "level 2 is open; visible tests: adder 2/2")


def test_watch_auto_submits_when_the_clock_runs_out(fixture_workbook, isolated_state, capsys):
    kata("start", "adder", "--yes", "--reveal", "all", "--minutes", "0.05")  # 3 seconds
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    started = time.monotonic()
    w.run()  # returns by itself once the session is over
    assert time.monotonic() - started < 30
    out = capsys.readouterr().out
    assert "the clock ran out; adder: auto-submitted" in out and "30/30 points" in out
    assert "the session is over" in out


def test_watch_says_what_counted_when_another_command_settled_the_session(
        fixture_workbook, isolated_state, capsys):
    """The deadline passes while a `kata status` in another terminal settles the session first:
    watch still says what was auto-submitted, and its last screen has no stale failure, no empty
    table and no key help."""
    kata("start", "adder", "--yes", "--reveal", "all", "--minutes", "0.05")  # 3 seconds
    src = (fixture_workbook / "solutions" / "adder.py").read_text()
    (isolated_state / "workspace" / "adder.py").write_text(src.replace("return a - b", "return b - a"))
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    time.sleep(3.5)
    kata("status")  # settles the session that ran out
    w.run()
    out = capsys.readouterr().out
    assert "adder: 22.5/30 points (auto-submitted at the deadline)" in out, out
    assert "the session is over" in out
    screen = "\n".join(str(part) for part in w.render().renderables)
    assert "the session is over" in screen and "first failure" not in screen and "keys:" not in screen


def test_watch_without_a_session_is_a_clear_error(fixture_workbook):
    assert "no live session to watch" in kata("watch", code=2).output


def test_the_screen_renders_at_80_columns(fixture_workbook, isolated_state, monkeypatch):
    from rich.console import Console

    kata("start", "adder", "--yes")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=False)
    (isolated_state / "workspace" / "adder.py").write_text("def add(a, b):\n    return 0\n")
    w.on_save(isolated_state / "workspace" / "adder.py")
    w.drain()
    console = Console(width=80, no_color=True, record=True, file=open("/dev/null", "w"))
    console.print(w.render())
    screen = console.export_text()
    assert "left" in screen and "adder" in screen and "first failure: test_add" in screen
    assert "keys: s submit" in screen
    assert max(len(line) for line in screen.splitlines()) <= 80


def test_watch_warns_in_the_last_minutes(fixture_workbook, isolated_state, monkeypatch, capsys):
    monkeypatch.setenv("KATA_NOW", "1800000000")
    kata("start", "adder", "--yes")  # 5 minutes: already under 10, and under 5 at once
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    w.emit("tick")
    assert "5:00 left, under 5 minutes left] tick" in capsys.readouterr().out
    monkeypatch.setenv("KATA_NOW", str(1800000000 + 250))
    assert "under 1 minute left: submit what you have" in w.clock_text()


def test_watch_says_when_the_workspace_file_is_deleted(fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    target = isolated_state / "workspace" / "adder.py"
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    w.on_save(target)
    w.drain()
    assert "adder" in w.last
    target.unlink()
    w.dispatch(Event("deleted", target))
    assert w.message == ("adder.py was deleted: `kata restore adder N` puts back saved version N "
                         "(`kata snapshots adder` lists them)")
    assert "adder" not in w.last  # no stale count for a file that is gone
    from rich.console import Console

    screen = Console(width=80, record=True)
    screen.print(w._table())
    assert "no file" in screen.export_text()
    # an editor that saves by renaming over the file deletes, then creates: nothing to say
    target.write_text("def add(a, b):\n    return a + b\n")
    w.message = ""
    w.dispatch(Event("deleted", target))
    assert w.message == ""


def test_watch_at_the_deadline_with_every_visible_test_passing_says_only_that_it_is_over(
        fixture_workbook, isolated_state, capsys):
    """Its last screen never says `s` submits (nothing can be submitted), and says once that
    the session is over."""
    kata("start", "adder", "--yes", "--reveal", "all", "--minutes", "0.05")  # 3 seconds
    shutil.copyfile(fixture_workbook / "solutions" / "adder.py", isolated_state / "workspace" / "adder.py")
    wb = Workbook.find()
    w = Watch(wb, [wb.kata("adder")], plain=True)
    w.run()
    screen = "\n".join(str(part) for part in w.render().renderables)
    assert "`s` submits" not in screen and "every visible test passes" not in screen, screen
    assert screen.count("the session is over") == 1, screen
