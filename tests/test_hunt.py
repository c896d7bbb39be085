"""Hunts (kata/hunt.py, kata/hunt_questions.py): the code handed out, how a pin is judged, and
`kata hunt` / the ai-review exam through the same session, submit, review and progress paths."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from typer.testing import CliRunner

from kata import hunt
from kata.catalog import Workbook
from kata.cli import app
from kata.zoo import ZooPatch, entries, header_problems

WB = Workbook.find()
LRU = WB.kata("lru-kv-cache")
runner = CliRunner()

PIN = '''import pytest


def test_capacity_true_is_rejected(impl):
    with pytest.raises(ValueError):
        impl.KVBlockCache(True)
'''


def kata(*args, code=0):
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result


# --- the code handed out --------------------------------------------------------------------


def test_a_level_1_hunt_hands_out_level_1_only():
    text = hunt.handout(LRU, "bool_capacity", 1)
    reference = LRU.solution.read_text()
    assert "isinstance(capacity, bool)" not in text and "isinstance(capacity, bool)" in reference
    assert "def put(" in text and "self._nodes" in text  # level 1, as written
    for later in ("def pin(", "def get_block(", "def get_or_put("):  # stubs in their place
        body = text.split(later, 1)[1].split("\n    def ", 1)[0]
        assert "raise NotImplementedError" in body, later
    assert "_loading[" not in text and "def _node(" not in text  # later levels' code is gone
    assert "Reference solution" not in text  # nor does it say what it is
    assert hunt.handout(LRU, None, 1) != text  # a decoy is the cut reference


def test_level_marks_of_the_stub_give_each_definition_its_level():
    levels = hunt.def_levels(LRU.stub.read_text())
    assert levels["KVBlockCache.put"] == 1 and levels["KVBlockCache.pin"] == 2
    assert levels["KVBlockCache.get_or_put"] == 3 and levels["CacheFullError"] == 0


def test_an_unknown_bug_is_a_one_line_error_with_a_suggestion():
    from kata.catalog import CatalogError

    with pytest.raises(CatalogError, match="no such zoo patch.*Did you mean 'bool_capacity'"):
        hunt.bug(LRU, "bool_capacit")


def test_every_zoo_header_is_fit_to_show():
    problems = [p for kata in WB.katas() for path in entries(kata.bugs)
                for p in header_problems(ZooPatch.parse(path), len(kata.levels))]
    assert not problems, problems[:5]


def test_a_header_without_breaks_or_with_a_bad_level_is_reported(tmp_path):
    path = tmp_path / "x.patch"
    path.write_text("Bug: off by one\nLevel: 7\n--- a/s.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    problems = header_problems(ZooPatch.parse(path), 3)
    assert any("no Breaks: line" in p for p in problems)
    assert any("Level: '7' is not a level of the kata (1..3)" in p for p in problems)
    hunk = "--- a/s.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    for fragment in ("6. A conflicting `request_id` is an error", "**Order**: the jobs in list order",
                     "(verdict - start) // prefill_cost (whole tokens done)"):
        path.write_text(f"Bug: off by one\nLevel: 1\nBreaks: {fragment}\n{hunk}")
        assert any("is a fragment" in p for p in header_problems(ZooPatch.parse(path), 3)), fragment
    path.write_text(f"Bug: off by one\nLevel: 1\nBreaks: 99.9% of requests finish within 2.5 s\n{hunk}")
    assert header_problems(ZooPatch.parse(path), 3) == []


# --- judging a pin --------------------------------------------------------------------------


def test_a_specific_pin_is_pinned():
    pin = hunt.judge(LRU, "bool_capacity", 1, PIN)
    assert pin.verdict == "pinned", pin
    assert "DID NOT RAISE" in pin.reason


HANG = "import time\n\n\ndef test_waits(impl):\n    while True:\n        time.sleep(0.05)\n"
SOURCE_HASH = '''import hashlib
import inspect


def test_not_the_handed_out_file(impl):
    try:
        text = inspect.getsource(impl)
    except (OSError, TypeError):
        text = open(impl.__file__, "rb").read().decode("latin-1")
    assert hashlib.sha256(text.encode()).hexdigest() != "{digest}"
'''


@pytest.mark.parametrize("name, code, verdict, says", [
    ("empty", "", "no_test", "has no test"),
    ("always failing", "def test_no(impl):\n    assert False\n", "wrong_claim", "fails on correct code"),
    ("error at import", "import no_such_module_here\n\n\ndef test_x(impl):\n    pass\n", "error",
     "No module named 'no_such_module_here'"),
    ("hanging", HANG, "timed_out", "timed out"),
    ("source hash", None, "not_caught", "passes on the handed-out code"),
])
def test_a_test_that_pins_nothing_earns_nothing(name, code, verdict, says):
    if code is None:  # fails only when the module's source is the handed-out file's
        digest = hashlib.sha256(hunt.handout(LRU, "bool_capacity", 1).encode()).hexdigest()
        code = SOURCE_HASH.replace("{digest}", digest)
    pin = hunt.judge(LRU, "bool_capacity", 1, code)
    assert (pin.verdict, pin.earned) == (verdict, False), (name, pin)
    assert says in pin.reason and "\n" not in pin.reason, pin.reason


def _level1_suite() -> str:
    """The level-1 hidden suite as one file, as a pin could copy it: the helpers it imports from
    the suite's model module written out in it (a pin runs without the suite's folder)."""
    import ast

    model = (LRU.grader / "lru_kv_cache_model.py").read_text()
    helpers = [ast.get_source_segment(model, n) for n in ast.parse(model).body
               if isinstance(n, ast.FunctionDef) and n.name in ("filled", "snapshot")]
    suite = (LRU.grader / "test_lru_kv_cache_level1.py").read_text()
    assert "from lru_kv_cache_model import filled, snapshot\n" in suite and len(helpers) == 2
    return suite.replace("from lru_kv_cache_model import filled, snapshot\n", "") + "\n\n" + "\n\n\n".join(helpers) + "\n"


def test_a_generic_comparison_with_correct_code_is_not_specific():
    """A file that compares everything (here: the whole level-1 hidden suite beside the pin)
    also fails on the other bugs a pin must pass on, whichever of the zoo's are drawn."""
    suite = _level1_suite()
    generic = suite + "\n\n" + PIN.split("\n", 1)[1]
    pin = hunt.judge(LRU, "bool_capacity", 1, generic)
    assert pin.verdict == "not_specific", pin
    assert "fails on code with a different bug" in pin.reason


def test_a_pin_that_counts_the_implementations_in_its_process_earns_nothing():
    """The generic comparison above, switched on only when exactly two implementations share the
    pin's process (the handed-out and the correct code, as the first run once had them) and
    passing otherwise (where the specificity check once ran the other bugs): the other bugs now run
    in the same process as those two, so the count tells the pin nothing."""
    suite = _level1_suite()
    counting = ("\n\nimport functools as _ft\nimport sys as _sys\n\n"
                "_SWEEP = _sys.argv[_sys.argv.index('--kata-sweep') + 1].split(':') "
                "if '--kata-sweep' in _sys.argv else []\n\n\n"
                "def _only_with_two(f):\n"
                "    @_ft.wraps(f)\n"
                "    def run(*args, **kwargs):\n"
                "        return f(*args, **kwargs) if len(_SWEEP) == 2 else None\n"
                "    return run\n\n\n"
                "for _name, _f in list(globals().items()):\n"
                "    if _name.startswith('test_') and callable(_f):\n"
                "        globals()[_name] = _only_with_two(_f)\n")
    generic = suite + "\n\n" + PIN.split("\n", 1)[1] + counting
    pin = hunt.judge(LRU, "bool_capacity", 1, generic)
    assert not pin.earned and pin.verdict != "pinned", pin


def test_decoys_are_answered_with_the_correct_verdict_convention():
    assert hunt.claims_correct('HUNT_VERDICT = "correct"\n')
    assert not hunt.claims_correct('HUNT_VERDICT = "wrong"\n') and not hunt.claims_correct("x = 1\n")
    assert hunt.judge(LRU, None, 1, 'HUNT_VERDICT = "correct"\n').verdict == "correct_claim"
    missed = hunt.judge(LRU, "bool_capacity", 1, 'HUNT_VERDICT = "correct"\n')
    assert (missed.verdict, missed.earned) == ("missed", False)


# --- through the command line ---------------------------------------------------------------


def test_kata_hunt_pin_then_fix_then_review(isolated_state):
    out = kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes").output
    assert "pin the bug in " in out and "workspace/test_hunt_lru_kv_cache.py" in out
    code = isolated_state / "workspace" / "lru_kv_cache.py"
    assert code.read_text() == hunt.handout(LRU, "bool_capacity", 1)
    (isolated_state / "workspace" / "test_hunt_lru_kv_cache.py").write_text(PIN)

    first = json.loads(kata("submit", "--json", code=1).output)["results"][0]
    assert first["part"]["verdict"] == "pinned"
    assert (first["part"]["points_earned"], first["part"]["points_possible"]) == (40.0, 40.0)
    assert first["points_earned"] < first["points_possible"] == 40  # the fix is still to come

    shutil.copyfile(LRU.solution, code)  # the reference over the code earns the fix points
    second = json.loads(kata("submit", "--json").output)["results"][0]
    assert second["points_earned"] == second["points_possible"] == 40
    assert second["part"]["verdict"] == "pinned"

    kata("finish")
    review = kata("review").output
    assert "80/80 points" in review
    assert "the bug (bool_capacity, level 1): capacity True is accepted as 1" in review
    assert "it breaks: " in review and "pinned at " in review and "fixed at " in review
    beside = {r["kata"]: r["beside"] for r in json.loads(kata("progress", "--json").output)["katas"]}
    assert beside["lru-kv-cache"][0]["kind"] == "hunt" and beside["lru-kv-cache"][0]["note"] == "pinned"
    assert "hunts: S1 pinned 80/80" in kata("progress").output


def test_the_same_pin_against_a_decoy_is_a_wrong_claim(isolated_state):
    kata("hunt", "lru-kv-cache", "--decoy", "--yes")
    assert (isolated_state / "workspace" / "lru_kv_cache.py").read_text() == hunt.handout(LRU, None, 1)
    (isolated_state / "workspace" / "test_hunt_lru_kv_cache.py").write_text(PIN)
    data = json.loads(kata("submit", "--json").output)["results"][0]
    assert data["part"]["verdict"] == "wrong_claim" and data["part"]["points_earned"] == 0
    # once the session is over, the review says what the right answer was (not to write a test)
    kata("finish")
    review = kata("review").output
    assert "a decoy" in review and 'the right answer was HUNT_VERDICT = "correct" in your test file' in review


def test_a_hunt_keeps_the_learners_files(isolated_state):
    workspace = isolated_state / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "test_hunt_lru_kv_cache.py").write_text("# mine\n")
    out = kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes").output
    archived = list((isolated_state / ".kata" / "archive").rglob("test_hunt_lru_kv_cache.py"))
    assert [p.read_text() for p in archived] == ["# mine\n"], out


def test_bad_hunt_arguments_are_one_line_errors():
    assert "error: --bug nope: no such zoo patch" in kata("hunt", "lru-kv-cache", "--bug", "nope", code=2).output
    assert "not both" in kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--decoy", code=2).output
    assert "no level 9" in kata("hunt", "lru-kv-cache", "--level", "9", code=2).output


def test_ai_review_draws_four_hunts_by_seed_and_reviews_their_headers():
    from kata.session import plan

    exam = WB.exam("ai-review")
    assert exam.minutes == 45 and 0 < exam.decoy_probability < 1
    assert len(set(exam.katas)) == 4 and all(q.kind == "hunt" and q.levels == (1,) for q in exam.questions)
    draws = {seed: [q.bug for q in plan(WB, "ai-review", seed=seed).questions] for seed in range(1, 4)}
    assert draws[1] == [q.bug for q in plan(WB, "ai-review", seed=1).questions]  # seeded
    assert len({tuple(d) for d in draws.values()}) == 3  # different seeds, different bugs

    out = kata("start", "ai-review", "--yes", "--seed", "2").output
    assert out.count("pin the bug in ") == 4 and out.count("workspace/test_hunt_") >= 4
    kata("finish")
    review = kata("review").output
    planted = [b for b in draws[2] if b is not None]
    for name in planted:
        assert f"the bug ({name}, level 1): " in review
    assert review.count("a decoy") == draws[2].count(None)
    assert json.loads(kata("history", "--json").output)["sessions"][0]["name"] == "ai-review"


def test_a_pin_made_after_the_fix_passed_is_late(tmp_path):
    from kata.hunt_questions import _fixed_before_pinned
    from kata.store import Store

    store = Store(tmp_path / "kata.db")
    session, _ = store.start_session("kata", "hunt lru-kv-cache", ["lru-kv-cache"], 15, now=1000.0)
    fixed = {"status": "pass", "points_earned": 40.0, "points_possible": 40,
             "part": {"kind": "hunt", "points_earned": 0.0}}
    pinned = {"status": "fail", "points_earned": 39.0, "points_possible": 40,
              "part": {"kind": "hunt", "points_earned": 40.0}}
    assert not _fixed_before_pinned(store, session, "lru-kv-cache")
    store.add_submission(session.id, "lru-kv-cache", "code", pinned, 1010.0)
    store.add_submission(session.id, "lru-kv-cache", "code", fixed, 1020.0)
    assert not _fixed_before_pinned(store, session, "lru-kv-cache")  # pinned first: full points
    late, _ = store.start_session("kata", "hunt lru-kv-cache", ["lru-kv-cache"], 15, now=2000.0, abandon=True)
    store.add_submission(late.id, "lru-kv-cache", "code", fixed, 2010.0)
    assert _fixed_before_pinned(store, late, "lru-kv-cache")  # fixed first: a pin now earns half


@pytest.mark.parametrize("extra, message", [
    ('decoy_probability = 2\n', "decoy_probability must be between 0 and 1, got 2"),
    ('[[questions]]\nkata = "adder"\nkind = "hunt"\nlevels = [2]\nminutes = 5\n',
     "a hunt covers levels 1..N"),
    ('[[questions]]\nkata = "adder"\nkind = "quiz"\nminutes = 5\n', "kind 'quiz' must be one of hunt, kata"),
])
def test_a_bad_hunt_exam_is_a_one_line_error(fixture_workbook, extra, message):
    from kata.catalog import CatalogError

    head = 'title = "x"\nminutes = 5\n'
    body = extra if extra.startswith("[[") else extra + '[[questions]]\nkata = "adder"\nkind = "hunt"\nminutes = 5\n'
    (fixture_workbook / "exams" / "bad.toml").write_text(head + body)
    with pytest.raises(CatalogError, match=message.replace("(", r"\(").replace(".", r"\.")):
        Workbook.find().exam("bad")


def test_a_hunt_that_ran_out_is_auto_submitted_with_its_pin(isolated_state, monkeypatch):
    import os

    t0 = 1_800_000_000.0
    monkeypatch.setenv("KATA_NOW", str(t0))
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--minutes", "10", "--yes")
    pin = isolated_state / "workspace" / "test_hunt_lru_kv_cache.py"
    pin.write_text(PIN)
    os.utime(pin, (t0 + 60, t0 + 60))  # saved before the deadline, never submitted
    monkeypatch.setenv("KATA_NOW", str(t0 + 11 * 60))
    out = kata("review", "--json").output  # the auto-submission's notice, then the JSON
    assert "lru-kv-cache: auto-submitted" in out
    q = json.loads(out[out.index("{"):])["questions"][0]
    assert q["auto_submitted"] and q["part"]["verdict"] == "pinned" and q["part"]["pin_points"] == 40


def test_finishing_a_hunt_never_touched_grades_nothing(isolated_state):
    """The handed-out code with no pin and no verdict is no answer: finishing does not grade it
    (a decoy's correct code would otherwise earn the fix points for nothing)."""
    kata("hunt", "lru-kv-cache", "--decoy", "--yes")
    done = kata("finish", "--yes").output
    assert "lru-kv-cache: not attempted (the code as handed out): 0 points" in done
    history = json.loads(kata("history", "--json").output)["sessions"][0]
    assert history["points_earned"] == 0 and history["auto_submitted"] == []


def test_a_pins_reason_is_one_line_even_for_a_diff():
    pin_code = '''
def test_a_bool_capacity_is_refused(impl):
    try:
        impl.KVBlockCache(True)
        made = ["a cache"]
    except ValueError:
        made = []
    assert made == []
'''
    pin = hunt.judge(LRU, "bool_capacity", 1, pin_code)
    assert pin.verdict == "pinned", pin
    assert "\n" not in pin.reason and "Use -v" not in pin.reason, pin.reason


def test_every_pin_verdict_reads_as_words():
    """A learner reads words, not codes: every verdict the pin checker returns has its words."""
    import inspect
    import re

    from kata import hunt

    codes = set(re.findall(r'Pin\("(\w+)"', inspect.getsource(hunt)))
    assert codes and codes <= set(hunt.VERDICT_WORDS)
    assert all("_" not in hunt.verdict_words(c) for c in codes)
    assert hunt.verdict_words("not_caught") == "bug not caught"
    assert hunt.verdict_words(None) == "not submitted"


def test_a_hunt_never_submitted_shows_its_worth_in_progress(isolated_state):
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    kata("finish")
    (row,) = {r["kata"]: r["beside"] for r in json.loads(kata("progress", "--json").output)["katas"]}["lru-kv-cache"]
    review_worth = json.loads(kata("review", "--json").output)["questions"][0]["points_possible"]
    assert row["note"] == "not submitted" and row["points_earned"] == 0
    assert row["points_possible"] == review_worth > 0  # as the review says: 0 of what it was worth
    assert f"S1 not submitted 0/{review_worth:g}" in kata("progress").output


def test_check_runs_the_pin_on_the_file_as_it_is_now(isolated_state):
    """During a hunt, `kata check` also runs the learner's pin on their file: it fails on the
    handed-out code, and passes once the code is fixed. Nothing else is run or said."""
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    workspace = isolated_state / "workspace"
    assert "your pin" not in kata("check").output  # the handed-out test file: no pin yet
    (workspace / "test_hunt_lru_kv_cache.py").write_text(PIN)
    out = kata("check").output
    assert "your pin (test_hunt_lru_kv_cache.py) fails on your file: test_capacity_true_is_rejected" in out
    (workspace / "lru_kv_cache.py").write_text((WB.root / "solutions" / "lru-kv-cache.py").read_text())
    data = json.loads(kata("check", "--json").output)["results"][0]
    assert data["check_note"] == "every test passes on your file"


def test_one_submission_shows_one_time_in_the_review(isolated_state, monkeypatch):
    """'made at' and 'submitted at' of the same submission are one clock time (they were rounded
    differently: 3:19 beside 3:20)."""
    import kata.session.base as sessions

    kata("start", "lru-kv-cache", "--yes")
    started = sessions.open_store(Workbook.find()).live_session(sessions.now()).started_at
    monkeypatch.setattr(sessions, "now", lambda: started + 199.46)  # 3:19.46: 199.5 once rounded
    kata("submit", code=1)  # the stub: it fails
    kata("finish")
    (q,) = json.loads(kata("review", "--json").output)["questions"]
    assert q["last_submission_s"] == q["submitted_s"][-1] == 199.5


def test_a_hint_in_a_hunt_says_what_it_was_written_for(isolated_state):
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    out = kata("hint").output
    assert "Hint 1 of" in out and "written for solving the kata: its rules hold for the code handed out" in out


def test_status_says_where_a_hunts_pin_stands(isolated_state):
    kata("hunt", "lru-kv-cache", "--bug", "bool_capacity", "--yes")
    assert "pin: not submitted" in kata("status").output
    (isolated_state / "workspace" / "test_hunt_lru_kv_cache.py").write_text(PIN)
    kata("submit", code=1)  # pinned, not yet fixed
    assert "pin: pinned" in kata("status").output
    assert json.loads(kata("status", "--json").output)["questions"][0]["note"] == {"label": "pin", "value": "pinned"}


def test_a_hint_for_a_kata_outside_the_session_names_it(isolated_state):
    kata("start", "lru-kv-cache", "--yes")
    out = kata("hint", "token-batcher").output
    assert "token-batcher (not a question of session 1): Hint 1 of" in out
    assert any(line.startswith("Hint 1 of") for line in kata("hint").output.splitlines())  # its own: as before
