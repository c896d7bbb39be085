"""One presenter: what a submission may show during a session is decided once (kata.present),
and the command line's text and JSON and the room show the same of it."""

from __future__ import annotations

import json
import shutil
import warnings

import pytest

from kata import session
from kata.catalog import Workbook
from kata.present import may_show
from kata.results import FAIL, PASS, SuiteResult
from kata.results import TestResult as Verdict  # (not a test class)
from tests.test_cli import kata

T0 = 1_800_000_000.0


def _result() -> SuiteResult:
    tests = [Verdict(name="graders/x/test_a.py::test_one", status=PASS, message=None, task_id=1,
                        points=1.0, edge="the easy case"),
             Verdict(name="graders/x/test_a.py::test_two", status=FAIL, message="Called f(2)...",
                        task_id=1, points=1.0, edge="a tie at the limit", detail="trace", output="out")]
    return SuiteResult(status=FAIL, message="importing x.py raised SyntaxError at line 3", tests=tests)


def test_a_live_session_shows_levels_and_pass_fail_and_a_practice_one_the_missed_edges():
    shown = may_show(_result(), live=True, practice=False)
    assert [t.name for t in shown.tests] == ["hidden::hidden test 1", "hidden::hidden test 2"]
    assert all(t.message is None and t.detail is None and t.output is None and t.edge is None for t in shown.tests)
    assert shown.message == "importing x.py raised SyntaxError at line 3"  # about the learner's file
    practice = may_show(_result(), live=True, practice=True)
    assert [t.edge for t in practice.tests] == [None, "a tie at the limit"]  # the missed one's only
    assert may_show(_result(), live=False, practice=False).tests[1].message == "Called f(2)..."


def test_the_command_line_and_the_room_show_the_same_of_a_submission(fixture_workbook, isolated_state,
                                                                      monkeypatch):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        from kata.web.app import create_app
    monkeypatch.setenv("KATA_NOW", str(T0))
    kata("start", "adder", "--reveal", "all", "--yes")  # level 2 graded: its mul is wrong
    src = (fixture_workbook / "solutions" / "adder.py").read_text()
    (isolated_state / "workspace" / "adder.py").write_text(src.replace("return a * b", "return a + b"))
    monkeypatch.setenv("KATA_NOW", str(T0 + 60))
    (row,) = json.loads(kata("submit", "--json", code=1).stdout)["results"]
    text = kata("submit", code=1).output
    wb = Workbook.find()
    token, base = "t0ken", "http://127.0.0.1:8123"
    with TestClient(create_app(wb, token, 8123), base_url=base) as c:
        page = c.post("/api/submit/adder", headers={"X-Kata-Token": token, "Origin": base}, json={}).json()
    session.close_stores()
    cli = [(t["name"], t["status"], t["task_id"], t.get("edge")) for t in row["tests"]]
    room = [(t["name"], t["status"], t["level"], t["edge"]) for t in page["tests"]]
    assert cli == room and all(name.startswith("hidden test ") for name, *_ in cli)
    missed = [edge for *_, edge in cli if edge]
    assert missed and [m["edge"] for m in page["missed"]] == missed  # a practice session: by property
    assert all(edge in " ".join(text.split()) for edge in missed)
    assert "test_mul" not in json.dumps(row) + json.dumps(page) + text
    shutil.rmtree(isolated_state / ".kata" / "junit", ignore_errors=True)
