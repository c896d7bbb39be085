"""What a grading run produces: per-test results, per-level scores, the run's verdict.

Shaped like Exercism's results.json v3 (status, message, tests[] in file order with name, status,
message, output, task_id = level) plus points earned and possible per level. `apply_report` turns
one of the plugin's report events into a test's status; `Limits` bounds one run.

    >>> TestResult("graders/x/test_a.py::test_one", PASS).status
    'pass'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Status(StrEnum):
    """A test's verdict, and a run's: a str, so JSON, JUnit and the store hold the bare value.
    A new verdict is a member here (and a line in views/formats for how it is shown)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


PASS, FAIL, ERROR = Status.PASS, Status.FAIL, Status.ERROR
TIMED_OUT = "timed out"  # how the message of a test that ran past its time limit begins
BUDGET_SPENT = "the submission used up"  # how the run's message begins when its budget ran out
NOT_RUN = "not run: "  # how the message of a test the run ended before begins (then the run's)


class Reason(StrEnum):
    """Why a test has the status it has, beyond its assertion: a value, set where it happens (the
    supervisor), not read back from its message. Not written to JSON (its outputs stay as they
    were); a result read back from JSON gets it from the message once (`reason_of`)."""

    TIMED_OUT = "timed out"  # ran past its time limit
    OUT_OF_TIME = "out of time"  # never run: the run's time budget was spent first


def reason_of(message: str | None) -> Reason | None:
    """The reason a stored message records (the one place that reads prose back)."""
    text = message or ""
    if text.startswith(TIMED_OUT):
        return Reason.TIMED_OUT
    if text.startswith(NOT_RUN + BUDGET_SPENT):
        return Reason.OUT_OF_TIME
    return None


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one grading run. Defaults suit a kata's hidden suite on a small machine."""

    # A submission's worst case, every test hanging, is over in at most wall_timeout +
    # rescue_timeout (+ the last child's exit): 26 s. The reference's slowest test takes well
    # under a second, so the first bound leaves a slow but correct test five times its time.
    test_timeout: float = 5.0  # per test, until two tests of the run have timed out (signal
    # method of pytest-timeout, through kata's plugin: a clean failure)
    hard_test_grace: float = 1.0  # then the parent kills the child (a loop inside C code)
    wall_timeout: float = 18.0  # the budget of the run, restarts included
    rescue_timeout: float = 8.0  # at most, the budget of the rescue run that grades the tests
    # left when wall_timeout runs out (one fresh child, strike_timeout a test)
    import_timeout: float = 10.0  # importing the learner's module, once, before the first test
    strike_timeout: float = 1.5  # per test, once two tests of the run have timed out
    memory_bytes: int = 3 * 1024**3  # RLIMIT_AS of the child
    file_bytes: int = 256 * 1024**2  # RLIMIT_FSIZE of the child: no file it writes grows past it
    max_restarts: int = 200

    def __post_init__(self):
        for name in ("test_timeout", "hard_test_grace", "wall_timeout", "rescue_timeout",
                     "import_timeout", "strike_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {getattr(self, name)}")


@dataclass(slots=True)
class TestResult:
    name: str  # the pytest node id, relative to the workbook root
    status: str  # a Status (pass | fail | error)
    message: str | None = None
    detail: str | None = None  # the full failure report (shown by `kata check` and `kata review`)
    output: str | None = None
    task_id: int | None = None  # the level
    points: float = 1.0
    edge: str | None = None
    duration: float = 0.0
    impl: str | None = None  # sweep mode: which implementation this test ran on
    reason: Reason | None = None  # set by the supervisor; not in JSON (see Reason)


@dataclass(slots=True)
class LevelScore:
    level: int
    name: str
    passed: int
    total: int
    points_earned: float
    points_possible: int


@dataclass(slots=True)
class SuiteResult:
    status: str
    message: str | None
    tests: list[TestResult]
    levels: list[LevelScore] = field(default_factory=list)
    points_earned: float = 0.0
    points_possible: int = 0
    duration: float = 0.0
    restarts: int = 0
    tampered: str | None = None  # why the run's verdicts cannot be trusted (then 0 points)
    version: int = 3
    # a question kind's own part of the result, {"kind": name, ...}: read and rendered by that
    # kind alone (kata/kinds.py); None for a question that is only its code's levels
    part: dict | None = None

    @property
    def passed(self) -> int:
        return sum(t.status == PASS for t in self.tests)

    def to_json(self) -> dict:
        data = asdict(self)
        for t in data["tests"]:
            del t["reason"]  # the JSON every output writes stays as it was
        return data

    @classmethod
    def from_json(cls, data: dict) -> SuiteResult:
        data = dict(data)
        data.setdefault("tampered", None)
        data["tests"] = [TestResult(**t) for t in data.get("tests", [])]
        for t in data["tests"]:
            t.reason = reason_of(t.message)
        data["levels"] = [LevelScore(**lv) for lv in data.get("levels", [])]
        return cls(**data)

    def outcome_key(self) -> list[tuple]:
        """What must be identical between two gradings of the same code (no timings)."""
        return [(t.name, t.status, t.task_id, t.points) for t in self.tests]


def apply_report(t: TestResult, ev: dict) -> None:
    when, outcome = ev["when"], ev["outcome"]
    t.duration += ev.get("duration", 0.0)
    if ev.get("output"):
        t.output = ((t.output or "") + ev["output"])[:4000]
    if when == "setup":
        if outcome == "failed":
            t.status, t.message, t.detail = ERROR, ev.get("message"), ev.get("detail")
        elif outcome == "skipped":
            t.status, t.message = FAIL, f"skipped: {ev.get('message')}"
    elif when == "call":
        if outcome == "passed":
            t.status, t.message = PASS, None
        elif outcome == "failed":
            t.status, t.message, t.detail = FAIL, ev.get("message"), ev.get("detail")
        else:
            t.status, t.message = FAIL, f"skipped: {ev.get('message')}"
    elif when == "teardown" and outcome == "failed" and t.status == PASS:
        t.status, t.message, t.detail = ERROR, ev.get("message"), ev.get("detail")


def first_line(message: str | None) -> str:
    """A failure message's first non-blank line, stripped ('' for none): what a one-line reason
    shows, and what tells apart failures that share a cause."""
    return next((ln.strip() for ln in (message or "").splitlines() if ln.strip()), "")


def ran_out_of_time(t: TestResult) -> bool:
    """Whether the test ran past its time limit."""
    return t.reason == Reason.TIMED_OUT


def timed_out(result: SuiteResult) -> int:
    """How many of the run's tests ran past their time limit."""
    return sum(ran_out_of_time(t) for t in result.tests)


def missed_edges(result: SuiteResult) -> list[tuple[int | None, str, int]]:
    """(level, edge text, how many tests) for the tests that did not pass and state their edge,
    in suite order, one row per text (a parametrised test's cases share theirs): a practice
    session's feedback by property ("a total exactly equal to the budget fits"), never a test's
    name, input, call or message."""
    rows: dict[tuple[int | None, str], int] = {}
    for t in result.tests:
        if t.status != PASS and t.edge:
            rows[(t.task_id, t.edge)] = rows.get((t.task_id, t.edge), 0) + 1
    return [(level, edge, n) for (level, edge), n in rows.items()]


def hidden_name(place: int) -> str:
    """How a hidden test is named where its name must not show (a live session): by its place."""
    return f"hidden test {place}"


def timeout_line(result: SuiteResult) -> str | None:
    """The summary's line for tests that timed out ('12 tests timed out: an infinite loop?'),
    and for tests the run's time budget left unrun; None when there are neither."""
    n = timed_out(result)
    unrun = sum(t.reason == Reason.OUT_OF_TIME for t in result.tests)
    if not n and not unrun:
        return None
    said = f"{n} test{'s' if n != 1 else ''} timed out: an infinite loop?"
    if unrun:
        said += f" {unrun} more not run: out of time"
    return said


def common_message(results: list[TestResult]) -> str | None:
    messages = {t.message for t in results}
    return messages.pop() if len(messages) == 1 else None


