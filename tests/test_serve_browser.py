"""The practice room in a real browser, end to end on the fixture workbook: start from the catalog,
type in the editor, Run, Submit (a level opens), a save from another editor, both sides kept over
unsaved edits, the last-minute warning, the deadline's auto-submit of the saved work, the review
and the progress page. Each screen is saved as a 1280x800 screenshot under the test's tmp_path and
copied to kata-serve-shots/ in the system's temporary folder, to be looked at.

It drives the system's chromium (Debian: `apt-get install chromium`) and skips where there is none.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from kata import session  # noqa: E402
from kata.catalog import Workbook  # noqa: E402

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium", "/usr/lib/chromium/chromium") if p and os.path.exists(p)), None)
SHOTS = Path(tempfile.gettempdir()) / "kata-serve-shots"
TOKEN = "browser-test-token"

LEVEL1_BUG = '''"""Adder."""


def add(a: int, b: int) -> int:
    return a - b


def sub(a: int, b: int) -> int:
    return a - b

'''
LEVEL1 = LEVEL1_BUG.replace("return a - b", "return a + b", 1)
LEVEL2 = LEVEL1 + '''

def mul(a: int, b: int) -> int:
    return a * b


def neg(a: int) -> int:
    return a


def div(a: int, b: int) -> float:
    return a / b
'''


@pytest.fixture
def room(fixture_workbook, isolated_state, monkeypatch):
    """The practice room served from a thread of this process (so KATA_NOW moves its clock)."""
    from kata.serve import bind
    from kata.web.app import create_app

    if CHROMIUM is None:
        pytest.skip("no chromium here (Debian: apt-get install chromium)")
    t0 = time.time() - 120  # the session starts two minutes "ago"; later steps run on the real time
    monkeypatch.setenv("KATA_NOW", str(t0))
    wb = Workbook.find()
    session.open_store(wb)
    sock = bind(0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(wb, TOKEN, port), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", t0
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()
    session.close_stores()


def real_time(monkeypatch) -> None:
    """The clock at the machine's time, so kata's snapshots and the file's saves keep their order."""
    monkeypatch.setenv("KATA_NOW", str(time.time()))


def test_a_session_in_the_browser(room, isolated_state, monkeypatch, tmp_path):
    url, t0 = room
    target = isolated_state / "workspace" / "adder.py"
    shots = tmp_path / "shots"
    shots.mkdir()
    SHOTS.mkdir(exist_ok=True)

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        expect = sync_api.expect

        def shot(name: str) -> None:
            page.wait_for_timeout(250)
            page.screenshot(path=str(shots / f"{name}.png"))
            shutil.copyfile(shots / f"{name}.png", SHOTS / f"{name}.png")

        def editor():
            return page.locator(".editor-host:not([hidden]) .cm-content")

        def replace_text(text: str) -> None:
            editor().click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text(text)

        # no live session: the catalog; Start shows the briefing, then the clock starts
        page.goto(f"{url}/?token={TOKEN}")
        expect(page.locator("h1")).to_have_text("Katas and exams")
        shot("1-catalog")
        page.locator('tr:has(a[href="#/kata/adder"]) button').click()
        expect(page.locator("dialog.briefing")).to_contain_text("Adder (5:00)")
        page.get_by_role("button", name="Start the clock").click()
        expect(editor()).to_contain_text("raise NotImplementedError")
        expect(page.locator("#prompt")).to_contain_text("Level 1: add and subtract")
        expect(page.locator("#prompt")).not_to_contain_text("Level 2")
        assert session.live_session(Workbook.find()).name == "adder"

        # type a solution (Python indentation by the editor), save with Ctrl-S: it is on disk
        replace_text(LEVEL1_BUG)
        page.keyboard.type("def neg(a: int) -> int:\nreturn -a")
        page.keyboard.press("Escape")  # the completion list the typing opened
        expect(page.locator("#file-state")).to_have_text("unsaved edits")
        page.keyboard.press("Control+S")
        expect(page.locator("#file-state")).to_have_text("saved")
        assert target.read_text().endswith("def neg(a: int) -> int:\n    return -a")

        # Run: each visible test with its call, expected and actual value
        real_time(monkeypatch)
        page.locator("#run-btn").click()
        row = page.locator("table.cases tbody tr").first
        expect(row).to_contain_text("test_add")
        expect(row).to_contain_text("add(1, 2)")
        expect(row.locator("td").nth(4)).to_have_text("3")
        expect(row.locator("td").nth(5)).to_have_text("-1")
        expect(page.locator("#busy")).to_have_text("")
        shot("2-run")

        # Submit the bug: practising one kata, what each missed hidden test checks, never its input
        real_time(monkeypatch)
        page.locator("#submit-btn").click()
        expect(page.locator("ul.missed")).to_contain_text("L1 adds two numbers")
        expect(page.locator("#busy")).to_have_text("")

        # Submit (saving first): the level's points, and level 2 opens in the prompt
        replace_text(LEVEL1)
        real_time(monkeypatch)
        page.locator("#submit-btn").click()
        expect(page.locator(".opened")).to_contain_text("Level 2 is open")
        expect(page.locator(".result-body table.levels")).to_contain_text("10/10")
        expect(page.locator("#prompt")).to_contain_text("Level 2: multiply, negate, divide")
        expect(page.locator("#q-score")).to_have_text("hidden 10/30 pts")
        expect(page.locator("#busy")).to_have_text("")
        _, _, rows = session.status(Workbook.find())  # `kata status` says the same
        assert rows[0].hidden == (10.0, 30.0) and rows[0].levels_open == [1, 2]
        shot("3-submit")

        # a save in another editor shows up in the page
        target.write_text(LEVEL2)
        expect(editor()).to_contain_text("def div(a: int, b: int) -> float:")
        expect(page.locator("#notice")).to_contain_text("saved outside this page")
        shot("4-saved-elsewhere")

        # ... and over unsaved edits, both are kept until the learner chooses
        editor().click()
        page.keyboard.press("Control+End")
        page.keyboard.type("\n# mine")
        target.write_text(LEVEL2 + "\n# theirs\n")
        expect(page.locator(".notice.conflict")).to_contain_text("saved outside this page while you had unsaved edits")
        expect(editor()).to_contain_text("# mine")
        shot("5-both-kept")
        page.get_by_role("button", name="Save my edits (the disk version is archived)").click()
        expect(page.locator("#notice")).to_contain_text("the version from disk is kept in .kata/archive/")
        assert "# mine" in target.read_text() and "# theirs" not in target.read_text()
        archived = [f.read_text() for f in (isolated_state / ".kata" / "archive").rglob("adder.py")]
        assert any("# theirs" in text for text in archived)

        # the last minute: the warning
        monkeypatch.setenv("KATA_NOW", str(t0 + 250))
        expect(page.locator("#banner")).to_contain_text("under 1 minute left")
        expect(page.locator("#clock")).to_have_class("warn3")
        shot("6-last-minute")

        # the deadline passes: the page auto-submits the saved work and opens the review
        monkeypatch.setenv("KATA_NOW", str(t0 + 400))
        expect(page.locator("#page h1")).to_contain_text("Review of session 1", timeout=30_000)
        expect(page.locator(".ended")).to_contain_text("adder: auto-submitted the version saved at")
        card = page.locator(".card").first
        expect(card).to_contain_text("(auto-submitted at the deadline)")
        expect(card.locator("h3")).to_have_text("Missed: 1 hidden test")
        expect(card.locator("ul.tests").first).to_contain_text("test_neg")
        expect(card.locator("ul.tests").first).to_contain_text("(negates)")
        shot("7-review")
        row = next(r for r in session.history(Workbook.find()) if r.session.id == 1)
        assert row.session.status == "timed_out" and row.auto_submitted == ["adder"]

        page.goto(f"{url}/#/progress")
        expect(page.locator(".chart svg").first).to_be_visible()
        shot("8-progress")
        browser.close()
    assert not errors, errors
