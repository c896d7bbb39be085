"""The graders' toolkit, built on kata.strict.same: each failure is one message that states the
call, what came back and what was expected.

    @graded(1, 2, "keys() lists the most recent first")      # a hidden test's level, points, edge
    def test_keys_most_recent_first(impl): ...
    check(cache.keys(), ["b", "a"], "keys() after put a, put b")
    check_fraction(impl.step_time(cost, dev), Fraction(4), "step_time(Cost(80, 32), ...)")
    check_raises(lambda: impl.f(-1), "n", "f(-1)")          # ValueError whose message begins "n"
    run_queries(impl, *query_lines("PUT a k 5 -> true"))    # a solution(queries) kata's one call
    PROPERTY = property_settings()                           # at a test module's import
    got, want = compare_speed("f(10,000 items)", lambda: impl.f(xs), lambda: ref.f(xs),
                              hint="is the list rescanned per item?")  # within 10x the reference
    load_helpers(__file__, "token_budget_oracle")            # a suite's conftest.py, whole

A grader reaches the learner's code through these: `run_queries` makes a solution(queries) kata's
calls, `check_raises` and `compare_speed` call what they are given, `check` compares what came
back. Graders import them (the grading child has the kata package); they hold no state.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import gc
import hashlib
import importlib.util
import json
import os
import resource
import signal
import sys
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from kata import boundary
from kata.boundary import TooSlow  # noqa: F401 - raised in the implementation past its CPU budget
from kata.strict import same


def graded(level: int, points: float, edge: str):
    """The three markers every hidden test carries, as one decorator:

        @graded(1, 2, "a total exactly equal to the budget fits")   # level, points, edge
        def test_equal_to_budget_fits(impl): ...

    is `@pytest.mark.level(1)`, `@pytest.mark.points(2)` and `@pytest.mark.edge("...")`."""
    def mark(test):
        return pytest.mark.level(level)(pytest.mark.points(points)(pytest.mark.edge(edge)(test)))
    return mark


def property_settings(max_examples: int = 60) -> settings:
    """Settings of a suite's property tests. Call it at a test module's import, not earlier: a
    settings object copies the profile current when it is built, and the grading profile
    (derandomized, no database) is loaded before any grader is imported. No shrinking: a wrong
    solution's failing example is already small, and shrinking costs it seconds."""
    return settings(max_examples=max_examples, phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


def check(got, expected, call: str) -> None:
    __tracebackhide__ = True  # report the test's line, not this helper's
    assert same(got, expected), f"Called {call}. Returned {got!r}, expected {expected!r}."


def check_fraction(got, expected, call: str) -> None:
    """A Fraction equal to `expected` (an int or a float result is a mistake even when equal)."""
    __tracebackhide__ = True
    ok = type(got) is Fraction and got == expected
    assert ok, f"Called {call}. Returned {got!r} ({type(got).__name__}), expected Fraction({expected})."


def check_raises(fn, name: str | None, call: str, *, kind: type[BaseException] = ValueError,
                 anywhere: bool = False) -> BaseException:
    """fn() must raise `kind` (ValueError unless told) whose message begins with `name`, or holds
    it anywhere with `anywhere=True`; `name` None checks no message. Returns the exception."""
    __tracebackhide__ = True
    wanted = kind.__name__ + ("" if name is None else f" naming {name!r}" if anywhere
                              else f" beginning with {name!r}")
    try:
        result = fn()
    except kind as exc:
        text = str(exc)
        if name is not None and not (name in text if anywhere else text.startswith(name)):
            said = f"its message to name {name!r}" if anywhere else f"a message beginning with {name!r}"
            pytest.fail(f"Called {call}. Raised {kind.__name__}({text!r}), expected {said}.", pytrace=False)
        return exc
    except Exception as exc:  # noqa: BLE001 - any other type is the learner's mistake to see
        pytest.fail(f"Called {call}. Raised {type(exc).__name__}({exc}), expected {wanted}.", pytrace=False)
    pytest.fail(f"Called {call}. Returned {result!r}, expected {wanted}.", pytrace=False)


# --- katas whose one function is solution(queries) --------------------------------------------
#
# A query is a list of strings (an operation's name, then its arguments); solution(queries) returns
# one string per query. A test states its queries and their answers as (query, answer) rows or as
# lines of text, and `run_queries` makes the call and compares every answer.


def query_rows(pairs) -> tuple[list[list[str]], list[str]]:
    """(queries, answers) from (query, answer) pairs; a query is a list of strings, or one string
    of space-separated words: [("PUT a k 5", "true"), (["GET", "a", "k"], "5")]."""
    queries = [list(query) if isinstance(query, (list, tuple)) else query.split(" ") for query, _ in pairs]
    return queries, [answer for _, answer in pairs]


def query_lines(text: str) -> tuple[list[list[str]], list[str]]:
    """(queries, answers) from lines `QUERY ARGS -> ANSWER  # note`, '' for the empty answer (and
    for an empty word of a query):
    query_lines('''
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1        # a note
    ''')"""
    queries, answers = [], []
    for line in text.strip().splitlines():
        line = line.split("#")[0].strip()
        if line:
            query, _, answer = line.partition("->")
            queries.append(["" if word == "''" else word for word in query.split()])
            answer = answer.strip()
            answers.append("" if answer == "''" else answer)
    return queries, answers


def case(name: str, level: int, points: float, edge: str, text: str):
    """One case of a level's scenario test (`scenarios`): its id, the level, points and edge
    markers `graded` gives a test, and its queries and answers as `query_lines` text."""
    return pytest.param(text, id=name, marks=[pytest.mark.level(level), pytest.mark.points(points),
                                               pytest.mark.edge(edge)])


def scenarios(*cases):
    """A level's scenario test of a solution(queries) kata, one case per `case(...)`, each run by
    `run_queries`: `test_scenario = scenarios(case(...), case(...))` in a test module."""
    @pytest.mark.parametrize("text", cases)
    def test_scenario(impl, text):
        run_queries(impl, *query_lines(text))
    return test_scenario


def _short(value, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 40] + f" ... ({len(text):,} characters)"


def _shown(queries: list, upto: int, keep: int = 10, limit: int = 700) -> str:
    """solution(...) with the queries up to index `upto`: all of them when short, else the last
    `keep` up to it."""
    head = queries[:upto + 1]
    rest = f", ... {len(queries) - len(head):,} more" if len(head) < len(queries) else ""
    if len(repr(head)) <= limit or len(head) <= keep:
        return f"solution({repr(head)[:-1]}{rest}])"
    return f"solution([... {len(head) - keep:,} earlier queries ..., {repr(head[-keep:])[1:-1]}{rest}])"


def run_queries(impl, queries: list[list[str]], expected: list[str] | None = None, *, oracle=None,
                note: str = "", as_given: bool = False) -> list[str]:
    """Call impl.solution on a copy of `queries` and compare every answer, type-strict, with
    `expected` (or with `oracle(queries)`, the grader's own, on another copy). The message names the
    first wrong answer, its number (1-based) and the queries up to it; `note` is added after the
    call. `as_given`: pass the list itself, not a copy: it must come back unchanged. Returns the
    answers."""
    __tracebackhide__ = True
    if expected is None:
        assert oracle is not None, "run_queries needs the expected answers or an oracle"
        expected = oracle(copy.deepcopy(queries))
    if as_given:
        kept = copy.deepcopy(queries)
        got = impl.solution(queries)
        if not same(queries, kept):
            pytest.fail(f"Called {_shown(kept, len(kept))}{note}. Afterwards the queries were {_short(queries)}, "
                        "expected them unchanged.", pytrace=False)
        queries = kept
    else:
        got = impl.solution(copy.deepcopy(queries))
    if same(got, expected):
        return got
    if type(got) is not list or len(got) != len(expected):
        count = f" ({len(got)} answers for {len(queries)} queries)" if type(got) is list else ""
        pytest.fail(f"Called {_shown(queries, len(queries))}{note}. Returned {_short(got)}{count}, expected "
                    f"{_short(expected)} (one string per query).", pytrace=False)
    wrong = next(i for i, (g, e) in enumerate(zip(got, expected, strict=True)) if not same(g, e))
    pytest.fail(f"Called {_shown(queries, wrong)}{note}. Query {wrong + 1} of {len(queries)}, "
                f"{queries[wrong]!r}, answered {_short(got[wrong])}, expected {expected[wrong]!r}.",
                pytrace=False)


# --- a suite's helper modules -----------------------------------------------------------------


def load_helpers(conftest: str, *names: str) -> list:
    """Import each `name`.py beside `conftest` (a suite's conftest.py passes its __file__) under
    that bare name, once, so that the suite's test files import from it whatever pytest's import
    mode (prepend puts the folder on sys.path; importlib does not). Returns the modules."""
    here = Path(conftest).resolve().parent
    for name in names:
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, here / f"{name}.py")
            assert spec is not None and spec.loader is not None, here / f"{name}.py"
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # dataclasses look their module up while being built
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
    return [sys.modules[name] for name in names]


# --- what a grader needs from the reference: in process, or measured apart ---------------------
#
# A grader that times the learner's code against the reference, or scores it against the
# reference's result, asks for each thing it needs through `baseline(key, measure)`: a time, a
# count, or an answer reduced by `digest`. Where the reference runs (KATA_REFERENCE):
#   unset           in this process: measure() runs the reference here (a learner's own machine);
#   record:FILE     measure() runs, and its value is added to FILE (the reference's own run);
#   apart:FILE      the value recorded for the key: measure() never runs and the reference is
#                   never loaded, so no code graded in this process can read it (grade-batch).

REFERENCE_ENV = "KATA_REFERENCE"


class ReferenceApart(Exception):
    """A grader asked for the reference itself where it runs apart (only baselines are here)."""


def reference_mode() -> tuple[str, Path | None]:
    """("in-process" | "record" | "apart", the baseline file or None)."""
    mode, _, path = os.environ.get(REFERENCE_ENV, "").partition(":")
    if mode in ("record", "apart") and path:
        return mode, Path(path)
    return "in-process", None


def _test_key(key: str) -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    nodeid = current.rsplit(" (", 1)[0] if current.endswith(")") else current
    return f"{nodeid}::{key}"


_RECORDED: dict[str, dict] = {}


def _recorded(path: Path) -> dict:
    if str(path) not in _RECORDED:
        _RECORDED[str(path)] = json.loads(path.read_text(encoding="utf-8"))
    return _RECORDED[str(path)]


def baseline(key: str, measure):
    """The value `measure()` gives on the reference, under `key` (unique within the calling test):
    a JSON value (a number, a string, a digest, lists of them). See the note above."""
    __tracebackhide__ = True
    mode, path = reference_mode()
    if mode == "apart":
        assert path is not None
        values = _recorded(path)
        full = _test_key(key)
        if full not in values:
            pytest.fail(f"No baseline of the reference for {key!r}: the reference's own run did not "
                        "record it (run `kata validate` on the kata).", pytrace=False)
        return values[full]
    value = json.loads(json.dumps(measure()))  # the same value in every mode (tuples become lists)
    if mode == "record":
        assert path is not None
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": _test_key(key), "value": value}) + "\n")
    return value


def read_baselines(path: Path) -> dict:
    """The values a recording run wrote to `path` (one JSON line each), by key."""
    values: dict = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            values[entry["key"]] = entry["value"]
    return values


def digest(value) -> str:
    """A short hash of `value` that tells kinds apart as `same` does (True is not 1, a tuple is not
    a list; a dataclass is its class's name and its fields): two answers match when their digests
    do. Reads the value's fields, never calls its methods."""
    return hashlib.sha256(repr(_canonical(value, 0)).encode()).hexdigest()[:32]


def _canonical(value, depth: int):
    if depth > 50:
        return ("too deep",)
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return (kind.__name__, value)
    if kind is float:
        return ("float", value.hex())
    if kind is Fraction:
        return ("Fraction", value.numerator, value.denominator)
    if kind in (list, tuple):
        return (kind.__name__, [_canonical(v, depth + 1) for v in value])
    if kind is dict:
        return ("dict", sorted((repr(_canonical(k, depth + 1)), _canonical(v, depth + 1)) for k, v in value.items()))
    if kind in (set, frozenset):
        return (kind.__name__, sorted(repr(_canonical(v, depth + 1)) for v in value))
    if isinstance(value, enum.Enum):
        return ("enum", kind.__name__, value.name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("dataclass", kind.__name__,
                [(f.name, _canonical(object.__getattribute__(value, f.name), depth + 1))
                 for f in dataclasses.fields(value)])
    if isinstance(value, boundary.Remote):  # one of the learner's objects in its own process: read there
        desc = value._op("desc")
        if desc is not None and desc[2] == "enum":
            return ("enum", desc[0], desc[1][0][1])
        if desc is not None and desc[2] == "dataclass":
            return ("dataclass", desc[0], [(n, _canonical(v, depth + 1)) for n, v in desc[1]])
    return ("other", kind.__qualname__, id(value))  # matches no answer the reference gives


_APART: dict[str, object] = {}  # name -> the reference's RemoteModule, where implementations run apart


def load_reference(path: Path, name: str):
    """The reference solution at `path`, imported once under `name` (never the learner's module
    name), for a side-by-side test: call it only inside a `baseline` measure."""
    if reference_mode()[0] == "apart":
        raise ReferenceApart(f"the reference {path.name} runs apart in this grading: "
                             "ask for what is needed through kata.checks.baseline")
    if boundary.MODE["apart"]:  # the implementation runs apart: so does the reference, on equal terms
        if name not in _APART:
            _APART[name] = boundary.RemoteModule(boundary.Client(str(path), name))
        return _APART[name]
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None, path  # a .py file always has both
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while being built
        spec.loader.exec_module(module)
    return sys.modules[name]


def reference_at(grader: str, relative: str):
    """The reference solution's loader for a grader: `reference = reference_at(__file__,
    "solutions/token-budget.py")` gives a function that imports it once (load_reference) under
    `token_budget_reference`. The path is spelled out so that the grader's source names solutions/:
    a grading run copies the reference only for a suite whose source does. Call the loader only
    inside a baseline measure (compare_speed's ref_fn or ref_setup): in a batch it runs apart."""
    path = Path(grader).resolve().parents[2] / relative
    name = f"{Path(relative).stem.replace('-', '_')}_reference"
    return lambda: load_reference(path, name)


def _cpu() -> float:
    """CPU seconds of this process and of the processes implementations run in (kata/boundary.py)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + boundary.cpu_apart()


@contextmanager
def cpu_budget(seconds: float):
    """Raise TooSlow in this process once it has used `seconds` more CPU time."""
    def on_prof(signum, frame):
        raise TooSlow()

    old = signal.signal(signal.SIGPROF, on_prof)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    boundary.budget_apart(seconds)  # and in the implementation's own process, where it runs apart
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        boundary.budget_apart(0)


@contextmanager
def _gc_paused(pause: bool):
    if not pause:
        yield
        return
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def compare_speed(call: str, impl_fn, ref_fn, factor: float = 10.0, floor: float = 0.5, hint: str = "",
                  answer=digest, ref_setup=None, *, impl_setup=None, slack: float = 0.0, runs: int = 1,
                  confirm: bool = False, pause_gc: bool = False):
    """Time the reference's `ref_fn` (through `baseline`: in process, or recorded apart), then run
    the implementation's `impl_fn` with a CPU budget of factor x the reference's CPU time plus
    `slack` (at least `floor` seconds); `hint` names the likely slow path for the message. Returns
    (the implementation's result, `answer` of the reference's result): compare it with `answer` of
    the first (`answer` maps a result to a JSON value; the default is its digest), or call
    `check_speed`, which does. With `ref_setup`, the reference runs `ref_fn(ref_setup())`, the setup
    untimed (it may load the reference: it runs only where the reference does); with `impl_setup`,
    the implementation runs `impl_fn(impl_setup())` likewise. `runs`: the reference is timed that
    many times and its best time kept; `confirm`: an implementation over its budget is run once
    more before it fails (a loaded machine can stall one run); `pause_gc`: both are timed with the
    garbage collector paused (a collection pass over many live objects would otherwise land in one
    timed run and not the other)."""
    __tracebackhide__ = True

    def measure():
        best, kept = float("inf"), None
        for run in range(runs):
            args = () if ref_setup is None else (ref_setup(),)
            with _gc_paused(pause_gc):
                start = _cpu()
                result = ref_fn(*args)
                best = min(best, _cpu() - start)
            if run == 0:
                kept = answer(result)
        return {"cpu": best, "answer": kept}

    ref = baseline(f"compare_speed {call}", measure)
    budget = max(factor * ref["cpu"] + slack, floor)
    for attempt in range(2 if confirm else 1):
        args = () if impl_setup is None else (impl_setup(),)
        try:
            with _gc_paused(pause_gc):
                start = _cpu()
                with cpu_budget(budget):
                    result = impl_fn(*args)
        except TooSlow:
            if confirm and attempt == 0:
                continue
            raise AssertionError(f"Called {call}. Still running after {budget:.2f} s of CPU time, expected "
                                 f"it within {factor:g}x the reference's time" + (f": {hint}" if hint else ".")) from None
        used = _cpu() - start
        if used <= budget:
            return result, ref["answer"]
    basis = f"{factor:g}x the reference's {ref['cpu']:.3f} s" + (f" plus {slack:g} s" if slack else "")
    if floor > factor * ref["cpu"] + slack:
        basis = f"the floor, more than {basis}"
    raise AssertionError(f"Called {call}. Took {used:.2f} s of CPU time, expected at most {budget:.2f} s ({basis})"
                         + (f": {hint}" if hint else "."))


def check_speed(call: str, impl_fn, ref_fn, what: str = "the answer", **how):
    """compare_speed (same arguments), then the answer: `answer` (see compare_speed) of the
    implementation's result must be the reference's, for a fast wrong answer earns nothing.
    `what` names the compared part in the message. Returns the implementation's result."""
    __tracebackhide__ = True
    got, want = compare_speed(call, impl_fn, ref_fn, **how)
    mine = how.get("answer", digest)(got)
    if not same(mine, want):
        pytest.fail(f"Called {call}. Returned {_short(got, 200)}: {what} differs from the reference's "
                    "(a timing test counts only a correct answer).", pytrace=False)
    return got
