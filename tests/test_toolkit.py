"""The graders' toolkit (kata.checks): the one marker decorator, check_raises, the solution(queries)
runner and its query notations, the conftest loader, the reference's loader and the timing options;
and `kata new --project`, a four-level project kata on the toolkit that validates as it stands."""

from __future__ import annotations

import sys
import time

import pytest
from typer.testing import CliRunner

from kata.catalog import Workbook
from kata.checks import (check_raises, check_speed, compare_speed, graded, load_helpers, query_lines, query_rows,
                         reference_at, run_queries)
from kata.cli import app
from kata.validate import validate_kata
from tests.conftest import REPO

Failed = pytest.fail.Exception


def failure(fn) -> str:
    """The message of the check's failure (the check must fail)."""
    with pytest.raises((Failed, AssertionError)) as caught:
        fn()
    return str(caught.value)


# --- graded --------------------------------------------------------------------------------------


def test_graded_puts_the_three_markers_on_a_test():
    @graded(3, 2, "a total equal to the budget fits")
    def test_x(impl):
        pass

    marks = {m.name: m.args for m in test_x.pytestmark}
    assert marks == {"level": (3,), "points": (2,), "edge": ("a total equal to the budget fits",)}


# --- check_raises --------------------------------------------------------------------------------


def _raise(exc):
    def fn():
        raise exc
    return fn


def test_check_raises_returns_the_exception_whose_message_begins_with_the_name():
    exc = check_raises(_raise(ValueError("budget must be >= 0")), "budget", "f(-1)")
    assert isinstance(exc, ValueError) and str(exc) == "budget must be >= 0"


def test_check_raises_names_the_call_and_what_was_wrong():
    assert failure(lambda: check_raises(_raise(ValueError("sizes bad")), "budget", "f(-1)")) == (
        "Called f(-1). Raised ValueError('sizes bad'), expected a message beginning with 'budget'.")
    assert failure(lambda: check_raises(_raise(TypeError("no")), "budget", "f(-1)")) == (
        "Called f(-1). Raised TypeError(no), expected ValueError beginning with 'budget'.")
    assert failure(lambda: check_raises(lambda: 7, "budget", "f(-1)")) == (
        "Called f(-1). Returned 7, expected ValueError beginning with 'budget'.")


def test_check_raises_anywhere_and_other_kinds():
    check_raises(_raise(ValueError("the budget is negative")), "budget", "f(-1)", anywhere=True)
    assert failure(lambda: check_raises(_raise(ValueError("bad")), "budget", "f(-1)", anywhere=True)) == (
        "Called f(-1). Raised ValueError('bad'), expected its message to name 'budget'.")
    check_raises(_raise(KeyError(3)), None, "num_tokens(3)", kind=KeyError)
    assert failure(lambda: check_raises(_raise(ValueError("x")), None, "num_tokens(3)", kind=KeyError)) == (
        "Called num_tokens(3). Raised ValueError(x), expected KeyError.")


# --- the solution(queries) runner ----------------------------------------------------------------


class Echo:
    """A solution(queries) module: answers each query with its last word, or as told."""

    def __init__(self, answer=None, mutate=False):
        self.answer, self.mutate, self.calls = answer, mutate, []

    def solution(self, queries):
        self.calls.append(queries)
        got = [q[-1] for q in queries] if self.answer is None else self.answer(queries)
        if self.mutate:
            queries.append(["EXTRA"])
        return got


def test_query_rows_and_query_lines_write_queries_and_answers():
    assert query_rows([("PUT a k 5", "true"), (["GET", "a", "k"], "5")]) == (
        [["PUT", "a", "k", "5"], ["GET", "a", "k"]], ["true", "5"])
    assert query_lines("""
        ADD_REPLICA r1 2 -> true   # a note
        STATUS x -> ''

        TOP 2 -> a(1),b(2)
    """) == ([["ADD_REPLICA", "r1", "2"], ["STATUS", "x"], ["TOP", "2"]], ["true", "", "a(1),b(2)"])


def test_run_queries_passes_a_copy_and_returns_the_answers():
    impl = Echo(mutate=True)
    queries = [["GET", "a"], ["GET", "b"]]
    assert run_queries(impl, queries, ["a", "b"]) == ["a", "b"]
    assert queries == [["GET", "a"], ["GET", "b"]] and impl.calls[0] is not queries
    assert run_queries(impl, queries, oracle=lambda qs: [q[-1] for q in qs]) == ["a", "b"]


def test_run_queries_names_the_first_wrong_answer_by_its_number():
    impl = Echo(answer=lambda qs: ["a", "B", "c"])
    message = failure(lambda: run_queries(impl, [["X", "a"], ["X", "b"], ["X", "c"]], ["a", "b", "c"]))
    assert message == ("Called solution([['X', 'a'], ['X', 'b'], ... 1 more]). Query 2 of 3, ['X', 'b'], "
                       "answered 'B', expected 'b'.")


def test_run_queries_is_type_strict_and_counts_the_answers():
    message = failure(lambda: run_queries(Echo(answer=lambda qs: ["1"]), [["X", "1"], ["X", "2"]], ["1", "2"]))
    assert "Returned ['1'] (1 answers for 2 queries), expected ['1', '2'] (one string per query)." in message
    message = failure(lambda: run_queries(Echo(answer=lambda qs: [1]), [["X", "1"]], ["1"]))
    assert message.endswith("Query 1 of 1, ['X', '1'], answered 1, expected '1'.")
    assert "Returned ('a',)" in failure(lambda: run_queries(Echo(answer=lambda qs: ("a",)), [["X", "a"]], ["a"]))


def test_run_queries_shows_the_queries_just_before_a_wrong_answer_in_a_long_call():
    queries = [["PUT", f"key{i}", "x" * 20] for i in range(100)]
    impl = Echo(answer=lambda qs: ["x" * 20] * 49 + ["no"] + ["x" * 20] * 50)
    message = failure(lambda: run_queries(impl, queries, ["x" * 20] * 100))
    assert message.startswith("Called solution([... 40 earlier queries ..., ['PUT', 'key40',")
    assert "... 50 more]). Query 50 of 100, ['PUT', 'key49', " in message


def test_run_queries_as_given_checks_the_list_is_left_unchanged():
    queries = [["GET", "a"]]
    assert run_queries(Echo(), queries, ["a"], as_given=True) == ["a"]
    message = failure(lambda: run_queries(Echo(mutate=True), [["GET", "a"]], ["a"], as_given=True))
    assert message == ("Called solution([['GET', 'a']]). Afterwards the queries were [['GET', 'a'], ['EXTRA']], "
                       "expected them unchanged.")


# --- load_helpers and reference_at ---------------------------------------------------------------


def test_load_helpers_imports_a_suites_module_once_under_its_bare_name(tmp_path, monkeypatch):
    (tmp_path / "toolkit_demo_oracle.py").write_text("LOADS = []\nLOADS.append(1)\n")
    (tmp_path / "toolkit_demo_broken.py").write_text("raise RuntimeError('broken helper')\n")
    monkeypatch.delitem(sys.modules, "toolkit_demo_oracle", raising=False)
    (module,) = load_helpers(str(tmp_path / "conftest.py"), "toolkit_demo_oracle")
    assert sys.modules["toolkit_demo_oracle"] is module and module.LOADS == [1]
    assert load_helpers(str(tmp_path / "conftest.py"), "toolkit_demo_oracle") == [module] and module.LOADS == [1]
    with pytest.raises(RuntimeError, match="broken helper"):
        load_helpers(str(tmp_path / "conftest.py"), "toolkit_demo_broken")
    assert "toolkit_demo_broken" not in sys.modules
    monkeypatch.delitem(sys.modules, "toolkit_demo_oracle")


def test_reference_at_loads_the_workbooks_reference_under_its_own_name():
    loader = reference_at(str(REPO / "graders" / "edf-admission" / "test_x.py"), "solutions/edf-admission.py")
    module = loader()
    assert module.__name__ == "edf_admission_reference" and hasattr(module, "schedule")
    assert loader() is module


# --- compare_speed's options, check_speed ---------------------------------------------------------


def _work(n: int) -> int:
    return sum(i * i for i in range(n))


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_setup_is_untimed_and_confirm_runs_a_slow_implementation_once_more():
    setups, runs = [], []

    def setup():
        setups.append(1)
        _busy(0.5)  # far past the budget, if it were timed
        return 5

    got, _ = compare_speed("f(5)", lambda n: n + 1, lambda n: n + 1, floor=0.2, impl_setup=setup,
                           ref_setup=lambda: 5)
    assert got == 6 and len(setups) == 1

    def slow():
        runs.append(1)
        while True:
            _work(1000)

    start = time.monotonic()
    message = failure(lambda: compare_speed("f(n)", slow, lambda: _work(1000), floor=0.1, confirm=True))
    assert len(runs) == 2 and time.monotonic() - start < 10 and "Still running after 0.10 s" in message


def test_runs_keep_the_references_best_time_and_slack_widens_the_budget():
    def reference(*seconds):
        times = iter(seconds)
        return lambda: _busy(next(times))

    # one run of 0.4 s: a budget of 10 x 0.4 + 0.2 s holds a 0.35 s implementation
    compare_speed("g()", lambda: _busy(0.35), reference(0.4), floor=0.0, slack=0.2)
    # the best of two runs is ~0 s: the budget is the slack alone, and 0.35 s is past it
    message = failure(lambda: compare_speed("h()", lambda: _busy(0.35), reference(0.4, 0.0), floor=0.0,
                                            slack=0.2, runs=2))
    assert "Still running after 0.2" in message


def test_pause_gc_times_both_with_the_collector_off():
    import gc

    got, want = compare_speed("gc()", gc.isenabled, gc.isenabled, floor=0.2, answer=lambda r: r, pause_gc=True)
    assert (got, want) == (False, False) and gc.isenabled()


def test_check_speed_fails_a_fast_wrong_answer_and_names_what_differs():
    assert check_speed("f(n)", lambda: [1, 2], lambda: [1, 2], floor=0.2, pause_gc=True) == [1, 2]
    message = failure(lambda: check_speed("f(n)", lambda: [1, 3], lambda: [1, 2], "the batches", floor=0.2))
    assert message == ("Called f(n). Returned [1, 3]: the batches differs from the reference's (a timing test "
                       "counts only a correct answer).")


# --- kata new --project ---------------------------------------------------------------------------


def test_kata_new_project_scaffolds_a_four_level_project_kata_that_validates(tmp_path, monkeypatch):
    root = tmp_path / "private"
    (root / "katas").mkdir(parents=True)
    monkeypatch.setenv("KATA_WORKBOOK", str(root))
    result = CliRunner().invoke(app, ["new", "request-queue", "--project"])
    assert result.exit_code == 0, result.output
    assert "graders/request-queue/test_request_queue_l4.py" in result.output
    grader = root / "graders" / "request-queue"
    assert 'load_helpers(__file__, "request_queue_oracle")' in (grader / "conftest.py").read_text()
    wb = Workbook.find()
    kata = wb.kata("request-queue")
    assert len(kata.levels) == 4 and "def solution(queries: list[list[str]]) -> list[str]:" in kata.stub.read_text()
    report = validate_kata(wb, "request-queue")
    assert report.ok, [(c.name, c.detail) for c in report.checks if not c.ok]
    assert report.bugs == 4 and report.hidden_tests >= 24
    assert {c.name for c in report.checks} >= {"markers", "stub", "hunts", "bug-zoo"}
    again = CliRunner().invoke(app, ["new", "request-queue", "--project"])
    assert again.exit_code == 2 and "already exists" in again.output
