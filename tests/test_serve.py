"""`kata serve`, the practice room: every endpoint and every rule of who may do what, through the
application's test client on the fixture workbook; the command itself as a process (its address,
Ctrl-C); the extra missing; the wheel carrying the page's assets."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import urllib.request
import warnings
import zipfile
from pathlib import Path

import pytest

from kata.catalog import Workbook
from tests.conftest import REPO
from tests.test_cli import kata

pytest.importorskip("starlette")
pytest.importorskip("httpx")
with warnings.catch_warnings():  # starlette's test client names its preferred HTTP package
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from kata import session  # noqa: E402
from kata.web.app import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

TOKEN = "t0ken-for-tests"
PORT = 8123
BASE = f"http://127.0.0.1:{PORT}"
AUTH = {"X-Kata-Token": TOKEN}
T0 = 1_800_000_000.0
STATIC = REPO / "kata" / "web" / "static"


def at(monkeypatch, seconds: float) -> None:
    monkeypatch.setenv("KATA_NOW", str(T0 + seconds))


@pytest.fixture
def client(fixture_workbook, isolated_state, monkeypatch):
    at(monkeypatch, 0)
    wb = Workbook.find()
    session.open_store(wb)  # the store exists before any request, as `kata serve` opens it
    with TestClient(create_app(wb, TOKEN, PORT), base_url=BASE) as c:
        yield c
    session.close_stores()


def ws(state) -> Path:
    return state / "workspace" / "adder.py"


def reference(wb_root: Path) -> str:
    return (wb_root / "solutions" / "adder.py").read_text()


READS = ["/", "/static/app.js", "/static/editor.js", "/static/style.css", "/api/state", "/api/catalog",
         "/api/plan/adder", "/api/kata/adder", "/api/file/adder/code", "/api/solution/adder", "/api/review",
         "/api/review/1", "/api/progress"]
ACTIONS = ["/api/start", "/api/save/adder/code", "/api/keep/adder/code", "/api/check/adder",
           "/api/submit/adder", "/api/hint/adder", "/api/finish", "/api/settle"]


# --- who may ask -----------------------------------------------------------------------------


def test_every_request_without_the_token_is_refused(client):
    for path in READS + ["/api/kata/nope", "/static/nope.js", "/anything"]:
        assert client.get(path).status_code == 403, path
        assert client.get(path, headers={"X-Kata-Token": "wrong"}).status_code == 403, path
        assert client.get(path + "?token=wrong").status_code == 403, path
    for path in ACTIONS:
        assert client.post(path, json={"target": "adder"}).status_code == 403, path
        assert client.post(path, json={}, headers={"X-Kata-Token": "wrong"}).status_code == 403, path
    assert session.live_session(Workbook.find()) is None  # nothing was started


def test_an_action_needs_the_token_in_its_header_not_a_cookie_or_the_address(client):
    client.cookies.set(f"kata-token-{PORT}", TOKEN)
    assert client.get("/api/state").status_code == 200  # a read: the cookie is enough
    assert client.post("/api/start", json={"target": "adder"}).status_code == 403
    assert client.post(f"/api/start?token={TOKEN}", json={"target": "adder"}).status_code == 403
    assert session.live_session(Workbook.find()) is None
    assert client.post("/api/start", json={"target": "adder"}, headers=AUTH).status_code == 200


def test_a_foreign_host_or_origin_is_refused(client):
    for host in ("evil.example", f"evil.example:{PORT}", f"127.0.0.1.evil.example:{PORT}",
                 "127.0.0.1:9999", f"[::1]:{PORT}", ""):
        r = client.get("/api/state", headers={**AUTH, "Host": host})
        assert r.status_code == 403, host
        assert "127.0.0.1 and localhost" in r.text
    for host in (f"localhost:{PORT}", f"127.0.0.1:{PORT}", "localhost"):
        assert client.get("/api/state", headers={**AUTH, "Host": host}).status_code == 200, host
    r = client.post("/api/start", json={"target": "adder"}, headers={**AUTH, "Origin": "http://evil.example"})
    assert r.status_code == 403
    for origin in (f"http://localhost:{PORT + 1}", f"http://127.0.0.1:{PORT + 1}", "http://127.0.0.1",
                   f"https://127.0.0.1:{PORT}", "null", f"http://localhost:{PORT}"):  # not the page's own
        r = client.post("/api/start", json={"target": "adder"}, headers={**AUTH, "Origin": origin})
        assert r.status_code == 403 and "Origin is not this page's" in r.text, origin
    r = client.post("/api/start", json={"target": "adder"}, headers={**AUTH, "Origin": BASE})
    assert r.status_code == 200


def test_a_body_over_the_limit_is_413_and_nothing_is_kept(client, isolated_state):
    from kata.web.app import MAX_BODY

    session.start(Workbook.find(), "adder")
    archive = isolated_state / ".kata" / "archive"
    before = sorted(archive.rglob("*")) if archive.exists() else []
    huge = "x" * (MAX_BODY + 1)
    r = client.post("/api/keep/adder/code", json={"text": huge}, headers=AUTH)
    assert r.status_code == 413 and "MiB" in r.json()["error"]

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(3):
            yield b'{"text": "' + b"y" * (MAX_BODY // 2)
    r = client.post("/api/save/adder/code", content=chunks(), headers=AUTH)
    assert r.status_code == 413
    assert (sorted(archive.rglob("*")) if archive.exists() else []) == before
    assert "y" * 100 not in ws(isolated_state).read_text()
    r = client.post("/api/keep/adder/code", json={"text": "def add(a, b):\n    return 0\n"}, headers=AUTH)
    assert r.status_code == 200


def test_a_review_id_no_store_can_hold_is_404(client):
    for sid in ("9" * 25, str(2**63), "0"):
        r = client.get(f"/api/review/{sid}", headers=AUTH)
        assert r.status_code == 404 and "no session" in r.json()["error"], sid


def test_actions_are_posts_and_reads_are_gets(client):
    for path in ACTIONS:
        assert client.get(path, headers=AUTH).status_code == 405, path
    for path in ("/api/state", "/api/kata/adder"):
        assert client.post(path, headers=AUTH).status_code == 405, path


def test_no_path_reaches_outside_the_workbook(client, fixture_workbook):
    session.start(Workbook.find(), "adder")
    for path in ("/api/kata/nope", "/api/kata/..%2F..%2Fetc%2Fpasswd", "/api/kata/%2E%2E",
                 "/api/file/adder/solution", "/api/file/adder/..", "/api/file/adder/..%2F..%2Fsolutions%2Fadder.py",
                 "/api/file/nope/code", "/api/solution/..%2Fgraders", "/api/solution/nope",
                 "/static/..%2Fapp.py", "/static/../app.py", "/static/nope.js", "/static/", "/api/review/999",
                 "/api/plan/nope", "/api/plan/..%2Fexams%2Fmini", "/graders/adder/test_adder.py",
                 "/solutions/adder.py", "/api/review/-1", "/api/review/x", "/etc/passwd"):
        r = client.get(path, headers=AUTH)
        assert r.status_code == 404, (path, r.status_code, r.text[:200])
        assert "def test_" not in r.text and "return a + b" not in r.text
    for path in ("/api/save/adder/solution", "/api/save/nope/code", "/api/keep/adder/..",
                 "/api/check/nope", "/api/submit/..%2Fadder", "/api/hint/nope"):
        r = client.post(path, json={"text": "x", "base": None}, headers=AUTH)
        assert r.status_code == 404, (path, r.status_code)
    assert (fixture_workbook / "solutions" / "adder.py").read_text().count("return a + b") == 1


def _everything(state: Path) -> dict:
    """The store's rows and every file under the state folder: what a GET must not change."""
    db = sqlite3.connect(state / ".kata" / "kata.db")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    rows = {t: sorted(map(repr, db.execute(f"SELECT * FROM {t}").fetchall())) for t in tables}
    db.close()
    files = {str(p.relative_to(state)): p.read_bytes() for p in sorted(state.rglob("*"))
             if p.is_file() and ".kata/kata.db" not in p.as_posix()}
    return {"rows": rows, "files": files}


def test_a_get_changes_nothing(client, fixture_workbook, isolated_state, monkeypatch):
    wb = Workbook.find()
    session.start(wb, "adder")
    ws(isolated_state).write_text(reference(fixture_workbook))
    session.submit(wb, [wb.kata("adder")])  # level 1 passed: level 2 open
    at(monkeypatch, 30)
    before = _everything(isolated_state)
    for path in READS + ["/api/kata/adder", "/api/file/adder/code?role=x", "/api/plan/mini?minutes=3"]:
        client.get(path, headers=AUTH)
        client.head(path, headers=AUTH)
    assert _everything(isolated_state) == before
    # past the deadline: a GET says a settle is due, and leaves it to a POST
    at(monkeypatch, 400)
    assert client.get("/api/state", headers=AUTH).json()["pending_settle"] is True
    assert client.get("/api/state", headers=AUTH).json()["pending_settle"] is True
    assert not session.open_store(wb).submissions(session_id=1, suite="hidden")[-1].auto


# --- the page and its assets -----------------------------------------------------------------


def test_the_address_sets_a_cookie_and_the_page_loads_only_its_own_assets(client):
    r = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"]
    assert f"kata-token-{PORT}={TOKEN}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = client.get("/")  # the cookie is kept by the client
    assert page.status_code == 200 and f'content="{TOKEN}"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["x-frame-options"] == "DENY"
    for src in re.findall(r'(?:src|href)="([^"]+)"', page.text):
        assert src.startswith(("/static/", "#/", "data:")), src
        if src.startswith("/static/"):
            asset = client.get(src)
            assert asset.status_code == 200 and asset.content == (STATIC / src.split("/")[-1]).read_bytes()
    assert client.get("/static/editor.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/style.css").headers["content-type"].startswith("text/css")


def test_the_assets_fetch_nothing_from_elsewhere():
    for name in ("index.html", "app.js", "style.css", "editor.js"):
        text = (STATIC / name).read_text(encoding="utf-8")
        urls = set(re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s\"'`)]*", text))
        assert urls <= {"http://www.w3.org/2000/svg"}, (name, urls)
        assert "@import" not in text and "fetch(\"http" not in text
    assert "KataEditor" in (STATIC / "editor.js").read_text(encoding="utf-8")


def test_the_editor_bundle_is_built_from_pinned_sources():
    src = REPO / "kata" / "web" / "src"
    pkg = json.loads((src / "package.json").read_text())
    assert pkg["scripts"]["build"] == "node build.mjs"
    assert {"codemirror", "@codemirror/lang-python", "esbuild"} <= set(pkg["devDependencies"])
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in pkg["devDependencies"].values())
    assert "static/editor.js" in (src / "build.mjs").read_text().replace('"', "/").replace(", /", "/")
    assert (src / "package-lock.json").is_file() and "node_modules/" in (src / ".gitignore").read_text()


# --- the session's screen --------------------------------------------------------------------


def test_the_catalog_the_briefing_and_a_start(client, isolated_state):
    cat = client.get("/api/catalog", headers=AUTH).json()
    assert [k["slug"] for k in cat["katas"]] == ["adder"] and {e["name"] for e in cat["exams"]} == {"mini", "oa"}
    brief = client.get("/api/plan/oa", headers=AUTH).json()
    assert brief["title"] == "Mini assessment" and brief["questions"][0]["levels"] == [1]
    assert client.get("/api/plan/oa?minutes=x", headers=AUTH).status_code == 400
    assert session.live_session(Workbook.find()) is None  # a briefing starts nothing
    r = client.post("/api/start", json={"target": "adder"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["files"][0]["path"] == "workspace/adder.py"
    assert ws(isolated_state).is_file()
    again = client.post("/api/start", json={"target": "mini"}, headers=AUTH)
    assert again.status_code == 400 and "is still live" in again.json()["error"]
    assert client.post("/api/start", json={"target": 3}, headers=AUTH).status_code == 400
    assert client.post("/api/start", content="nope", headers=AUTH).status_code == 400


def test_state_agrees_with_kata_status(client, fixture_workbook, isolated_state, monkeypatch):
    kata("start", "adder", "--yes")
    ws(isolated_state).write_text(reference(fixture_workbook))
    kata("submit")
    at(monkeypatch, 61)
    page = client.get("/api/state", headers=AUTH).json()
    cli = json.loads(kata("status", "--json").output)
    assert page["session"]["id"] == cli["session"]["id"] == 1
    assert round(page["session"]["remaining_s"]) == cli["session"]["remaining_s"] == 239
    assert page["session"]["clock"] == "3:59" and page["session"]["warning"] == "under 5 minutes left"
    (q,) = page["questions"]
    (c,) = cli["questions"]
    for key in ("slug", "visible", "levels", "levels_open", "exists"):
        assert q[key] == (list(c[key]) if isinstance(c[key], tuple) else c[key]), key
    assert q["note"] is None and c["note"] is None  # a question of the default kind has no note
    assert q["hidden"] == c["hidden"] == [10.0, 30.0] and q["label"] == "L1-2"
    assert q["files"][0]["sha"] == client.get("/api/file/adder/code", headers=AUTH).json()["sha"]


def test_the_prompt_is_what_kata_show_shows(client, fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    for opened in (False, True):
        shown = json.loads(kata("show", "adder", "--json").output)
        page = client.get("/api/kata/adder", headers=AUTH).json()
        assert page["markdown"] == shown["markdown"] and page["levels"] == shown["levels"]
        assert ("Level 2: multiply" in page["html"]) is opened
        assert "<h2>Level 1: add and subtract</h2>" in page["html"] and "<code>add(a, b)</code>" in page["html"]
        assert page["solution"] is False and page["in_session"] is True
        ws(isolated_state).write_text(reference(fixture_workbook))
        kata("submit")


def test_a_prompt_renders_tables_and_highlighted_code_but_no_raw_html():
    from kata.web.render import markdown_html

    out = markdown_html("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```\n\n<script>x</script>\n")
    assert "<table>" in out and "<td>1</td>" in out
    assert "<span" in out and "def" in out and "<pre><code" in out
    assert "<script>" not in out and "&lt;script&gt;" in out


def test_run_shows_each_visible_test_with_its_call_expected_and_actual(client, isolated_state):
    kata("start", "adder", "--yes", "--reveal", "all")
    ws(isolated_state).write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    r = client.post("/api/check/adder", headers=AUTH).json()
    assert (r["passed"], r["total"]) == (1, 2) and r["file"] == "workspace/adder.py"
    cases = {c["name"]: c for c in r["cases"]}
    assert cases["test_add"] | {"detail": None, "message": None} == {
        "name": "test_add", "level": 1, "status": "fail", "call": "add(1, 2)", "expected": "3", "actual": "-1",
        "detail": None, "message": None}
    assert (cases["test_mul"]["call"], cases["test_mul"]["expected"], cases["test_mul"]["actual"]) == ("mul(2, 3)", "6", "6")
    assert r["levels"] == [{"level": 1, "passed": 0, "total": 1}, {"level": 2, "passed": 1, "total": 1}]
    snaps = json.loads(kata("snapshots", "adder", "--json").output)["snapshots"]
    assert len(snaps) == 1  # recorded as `kata check` records it


def test_a_visible_case_is_read_from_the_message_the_traceback_or_the_test_file(tmp_path):
    from kata.web.render import case_of, first_asserts

    called = case_of("t::test_x", "Called put('d', [3]). Returned ['a'], expected ['a', 'b'].")
    assert called == {"call": "put('d', [3])", "expected": "['a', 'b']", "actual": "['a']"}
    f = tmp_path / "test_v.py"
    f.write_text("def test_a(impl):\n    got = impl.f(1)\n    assert got == 2, 'no'\n\n"
                 "def test_b(impl):\n    assert impl.g(x=1) == [3]\n\ndef test_c(impl):\n    assert impl.ok()\n")
    src = first_asserts(f)
    assert src == {"test_a": ("f(1)", "2"), "test_b": ("g(x=1)", "[3]")}
    assert case_of("t::test_a", None, None, src) == {"call": "f(1)", "expected": "2", "actual": "2"}
    assert case_of("t::test_b", "NotImplementedError", None, src)["actual"] == "NotImplementedError"
    assert case_of("t::test_c", "boom", None, src) == {"call": None, "expected": None, "actual": None}


def test_submit_shows_what_kata_submit_shows_and_opens_the_next_level(client, fixture_workbook, isolated_state):
    kata("start", "adder", "--yes")
    ws(isolated_state).write_text(reference(fixture_workbook).replace("return a - b", "return b - a"))
    first = client.post("/api/submit/adder", headers=AUTH).json()
    assert first["opened"] == [] and first["levels"][0]["passed"] == 1 and first["levels"][0]["total"] == 2
    # a practice session: the missed test's edge text (kata.present's rule, as `kata submit --json`)
    assert first["tests"] == [{"name": "hidden test 1", "level": 1, "status": "pass", "edge": None, "message": None},
                              {"name": "hidden test 2", "level": 1, "status": "fail",
                               "edge": "subtracts to a negative", "message": None}]
    assert "Recorded for session 1" in first["recorded"] and not first["practice"]
    ws(isolated_state).write_text(reference(fixture_workbook))
    second = client.post("/api/submit/adder", headers=AUTH).json()
    assert second["opened"] == [2] and (second["points_earned"], second["points_possible"]) == (10, 10)
    assert "10 of the question's 30 points so far" in second["recorded"]
    cli = json.loads(kata("submit", "--json", code=0).output)["results"][0]
    assert cli["levels_graded"] == [1, 2] and cli["points_earned"] == 30
    state = client.get("/api/state", headers=AUTH).json()["questions"][0]
    assert state["hidden"] == json.loads(kata("status", "--json").output)["questions"][0]["hidden"] == [30.0, 30.0]


def test_no_hidden_test_shows_during_a_live_session(client, fixture_workbook, isolated_state):
    kata("start", "adder", "--yes", "--reveal", "all")
    ws(isolated_state).write_text(reference(fixture_workbook).replace("return a - b", "return b - a"))
    submitted = client.post("/api/submit/adder", headers=AUTH)
    bodies = [submitted.text, client.post("/api/check/adder", headers=AUTH).text]
    bodies += [client.get(p, headers=AUTH).text for p in READS]
    for text in bodies:
        for secret in ("test_sub", "Called sub(2, 5)", "test_div_by_zero", "graders/"):
            assert secret not in text, secret
    # practising one kata, a submit says what each missed test checks (as `kata submit` does): its
    # edge text, on the missed test and in `missed`; never on a passed one, in the check or the state
    assert submitted.json()["missed"] == [{"level": 1, "edge": "subtracts to a negative", "tests": 1}]
    assert [t["edge"] for t in submitted.json()["tests"] if t["status"] != "pass"] == ["subtracts to a negative"]
    assert all(t["edge"] is None for t in submitted.json()["tests"] if t["status"] == "pass")
    assert not any("subtracts to a negative" in text for text in bodies[1:])


def test_a_mock_exams_submit_in_the_room_names_no_edge(client, fixture_workbook, isolated_state):
    kata("start", "oa", "--yes")
    ws(isolated_state).write_text(reference(fixture_workbook).replace("return a - b", "return b - a"))
    submitted = client.post("/api/submit/adder", headers=AUTH)
    assert "missed" not in submitted.json() and "subtracts to a negative" not in submitted.text


def test_the_reference_is_refused_during_a_live_session_as_kata_solution_refuses_it(client, fixture_workbook):
    kata("start", "adder", "--yes")
    r = client.get("/api/solution/adder", headers=AUTH)
    assert r.status_code == 403 and "is live" in r.json()["error"]
    assert "return a + b" not in r.text
    assert kata("solution", "adder", code=2).exit_code == 2
    kata("finish", "--yes")
    ok = client.get("/api/solution/adder", headers=AUTH).json()
    assert ok["text"] == reference(fixture_workbook) and "<span" in ok["html"]


def test_the_review_opens_only_after_the_session_and_lists_the_missed_tests(client, fixture_workbook, isolated_state):
    kata("start", "adder", "--yes", "--reveal", "all")
    for path in ("/api/review", "/api/review/1"):  # as `kata review` says, with no session ended yet
        r = client.get(path, headers=AUTH)
        assert r.status_code == 403 and "still live" in r.json()["error"]
    ws(isolated_state).write_text(reference(fixture_workbook).replace("return -a", "return a"))
    client.post("/api/submit/adder", headers=AUTH)
    done = client.post("/api/finish", headers=AUTH).json()
    assert done["session"] == 1
    rev = client.get("/api/review/1", headers=AUTH).json()
    assert rev == client.get("/api/review", headers=AUTH).json()
    cli = json.loads(kata("review", "1", "--json").output)
    assert rev["points_earned"] == cli["points_earned"] and rev["points_possible"] == cli["points_possible"]
    (q,) = rev["questions"]
    assert q["missed"] == 1 and [t["name"] for t in q["tests"] if t["status"] != "pass"] == ["test_neg"]
    assert q["tests"][3]["edge"] == "negates" and "Called neg(5)" in q["tests"][3]["message"]
    assert q["counted"].startswith("counted: the best of 1 submission(s) before the cutoff")
    # a later session holding the same kata keeps this review closed while it runs
    kata("start", "adder", "--yes")
    r = client.get("/api/review/1", headers=AUTH)
    assert r.status_code == 403 and "session 2 is live" in r.json()["error"]


def test_hints_are_revealed_and_recorded(client):
    kata("start", "adder", "--yes")
    first = client.post("/api/hint/adder", headers=AUTH).json()
    assert first["hint"] == "Hint 1 of 2 for level 1: Use +."
    client.post("/api/hint/adder", headers=AUTH)
    third = client.post("/api/hint/adder", headers=AUTH).json()
    assert third["hint"] is None and len(third["hints"]) == 2  # level 2's hint waits for level 2
    assert client.get("/api/kata/adder", headers=AUTH).json()["hints"] == third["hints"]


def test_the_deadline_auto_submits_the_saved_work_on_a_post(client, fixture_workbook, isolated_state, monkeypatch):
    kata("start", "adder", "--yes", "--reveal", "all")
    target = ws(isolated_state)
    target.write_text(reference(fixture_workbook))
    os.utime(target, (T0 + 100, T0 + 100))
    at(monkeypatch, 400)
    state = client.get("/api/state", headers=AUTH).json()
    assert state["session"] is None and state["pending_settle"] is True
    assert state["last_ended"] == {"id": 1, "name": "adder", "status": "timed_out"}
    settled = client.post("/api/settle", headers=AUTH).json()["settled"]
    assert settled[0]["session"] == 1
    assert settled[0]["lines"][0] == "adder: auto-submitted the version saved at 1m40s: 30/30 points"
    assert client.get("/api/state", headers=AUTH).json()["pending_settle"] is False
    assert client.post("/api/settle", headers=AUTH).json() == {"settled": []}
    assert json.loads(kata("history", "--json").output)["sessions"][0]["points_earned"] == 30


def test_progress_draws_its_charts_from_what_kata_progress_prints(client, fixture_workbook, isolated_state, monkeypatch):
    empty = client.get("/api/progress", headers=AUTH).json()
    assert "No kata scored" in empty["charts"]["katas"] and "<svg" not in empty["charts"]["levels"]
    kata("start", "adder", "--yes")
    ws(isolated_state).write_text(reference(fixture_workbook))
    at(monkeypatch, 90)
    kata("submit")
    at(monkeypatch, 150)
    kata("submit")
    kata("finish", "--yes")
    d = client.get("/api/progress", headers=AUTH).json()
    cli = json.loads(kata("progress", "--json").output)["katas"][0]
    assert d["katas"][0]["best"] == cli["best"] == 30
    assert d["katas"][0]["fastest"] == {"L1": "1m30s", "L2": "2m30s"}
    assert d["charts"]["katas"].count("<svg") == 1 and "best 30/30" in d["charts"]["katas"]
    assert "L1 1.5m" in d["charts"]["levels"] and "L2 1.0m" in d["charts"]["levels"]
    assert "S1 adder" in d["charts"]["levels"]


def test_mock_assessments_are_drawn_side_by_side():
    from types import SimpleNamespace as NS

    from kata.web.charts import mock_scores

    exam = [NS(exam=NS(name="oa"), best=30.0, points_possible=40, sessions=1),
            NS(exam=NS(name="oa-2"), best=None, points_possible=40, sessions=0)]
    hist = [NS(session=NS(kind="exam", name="oa", id=3), points_earned=30.0, points_possible=40)]
    svg = mock_scores([exam], hist)
    assert svg.count("<svg") == 1 and "oa: best 75%" in svg and "oa-2: best not taken" in svg


# --- saving: one source of truth, nothing lost -------------------------------------------------


def test_a_save_is_a_save_on_disk_and_archives_what_it_replaces(client, isolated_state):
    kata("start", "adder", "--yes")
    f = client.get("/api/file/adder/code", headers=AUTH).json()
    stub = f["text"]
    r = client.post("/api/save/adder/code", json={"text": "# mine\n", "base": f["sha"]}, headers=AUTH)
    assert r.status_code == 200 and ws(isolated_state).read_text() == "# mine\n"
    assert (isolated_state / r.json()["archived"]).read_text() == stub
    assert r.json()["sha"] == client.get("/api/file/adder/code", headers=AUTH).json()["sha"]
    bad = client.post("/api/save/adder/code", json={"text": 3, "base": None}, headers=AUTH)
    assert bad.status_code == 400 and ws(isolated_state).read_text() == "# mine\n"


def test_a_save_over_a_file_changed_elsewhere_is_refused_then_both_are_kept(client, isolated_state):
    kata("start", "adder", "--yes")
    base = client.get("/api/file/adder/code", headers=AUTH).json()["sha"]
    ws(isolated_state).write_text("# theirs\n")  # another editor saved it
    r = client.post("/api/save/adder/code", json={"text": "# mine\n", "base": base}, headers=AUTH)
    assert r.status_code == 409 and r.json()["disk"]["text"] == "# theirs\n"
    assert ws(isolated_state).read_text() == "# theirs\n"
    # take the disk's version: the page's text goes to the archive
    kept = client.post("/api/keep/adder/code", json={"text": "# mine\n"}, headers=AUTH).json()
    assert (isolated_state / kept["archived"]).read_text() == "# mine\n"
    assert ws(isolated_state).read_text() == "# theirs\n"
    # or write the page's text over it: the disk's version is archived first
    forced = client.post("/api/save/adder/code", json={"text": "# mine\n", "base": base, "force": True},
                         headers=AUTH).json()
    assert ws(isolated_state).read_text() == "# mine\n"
    assert (isolated_state / forced["archived"]).read_text() == "# theirs\n"


# --- the command -------------------------------------------------------------------------------


def test_kata_serve_prints_its_address_serves_and_stops_on_ctrl_c(fixture_workbook, isolated_state):
    pytest.importorskip("uvicorn")
    proc = subprocess.Popen([sys.executable, "-m", "kata", "serve", "--no-browser"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ), cwd=isolated_state.parent)
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", line)
        assert m, line + proc.stderr.read()
        port, token = m.groups()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10)
        assert refused.value.code == 403
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/catalog", headers={"X-Kata-Token": token})
        body = json.loads(urllib.request.urlopen(req, timeout=10).read())
        assert body["katas"][0]["slug"] == "adder"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Stopped." in out and "Traceback" not in err


def test_kata_serve_without_the_extra_names_the_install_command(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    r = kata("serve", "--no-browser", code=2)
    said = " ".join(r.output.split())
    assert said.startswith("error: kata serve needs uvicorn, in the Python kata runs on: "), said
    # the Python kata runs on (a pipx install's own), pipx's way, and a clone's: never a bare
    # `pip install 'kata-workbook[serve]'`, which finds no such package on an index
    assert f"`{sys.executable} -m pip install uvicorn`" in said
    assert "`pipx inject kata-workbook uvicorn`" in said and "pip install -e '.[serve]'" in said
    # at 80 columns each command stays whole on a line, to be copied
    lines = r.output.splitlines()
    assert any(f"`{sys.executable} -m pip install uvicorn`" in ln for ln in lines) or len(sys.executable) > 50


def test_kata_serve_on_a_port_in_use_says_so(fixture_workbook):
    from kata.serve import bind

    sock = bind(0)
    try:
        r = kata("serve", "--no-browser", "--port", str(sock.getsockname()[1]), code=2)
    finally:
        sock.close()
    assert "cannot be used" in r.output and "--port" in r.output


def test_kata_help_imports_nothing_of_the_server():
    code = ("import sys\nfrom kata.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('starlette', 'uvicorn', 'kata.serve', 'kata.web', 'markdown_it') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr


def test_the_wheel_carries_the_page_and_its_assets(tmp_path):
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_"))}
    for isolation in (["--no-build-isolation"], []):  # the venv's setuptools, else a fresh one
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                                "-w", str(wheels), str(REPO)], capture_output=True, text=True, env=env, timeout=600)
        if built.returncode == 0:
            break
    else:
        pytest.skip(f"could not build a wheel here: {built.stderr.strip().splitlines()[-1:]}")
    (wheel,) = wheels.glob("kata_workbook-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for asset in ("index.html", "app.js", "style.css", "editor.js"):
            assert f"kata/web/static/{asset}" in names
            assert z.read(f"kata/web/static/{asset}") == (STATIC / asset).read_bytes()
        assert {"kata/serve.py", "kata/web/app.py", "kata/web/room.py"} <= names
        assert not any(n.startswith("kata/web/src/") for n in names)
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        extras = z.read(meta).decode()
    assert "Provides-Extra: serve" in extras and re.search(r"starlette.*extra == \"serve\"", extras)


def test_the_server_closes_its_store_connections_when_it_stops(fixture_workbook, monkeypatch):
    """`serve` runs the server until it stops, then closes the store (a stub server: no port)."""
    pytest.importorskip("uvicorn")
    import uvicorn

    from kata import serve

    calls = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: calls.append(sockets))
    lines: list[str] = []
    serve.serve(Workbook.find(), 0, open_browser=False, say=lines.append)
    assert len(calls) == 1 and lines[0].startswith("The practice room is at http://127.0.0.1:")
    assert lines[-1] == "Stopped." and not session._STORES
