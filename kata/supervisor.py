"""The run supervisor: the harness's protocol with a grading child, one method per event.

A grading run starts a child (kata/child.py), feeds every event the child's plugin sends
(kata/pytest_plugin.py) to `RunSupervisor.feed`, and asks `watchdog` after each poll whether the
child must be stopped, and why. When a child ends, `RunSupervisor.child_ended` decides what comes
next: a fresh child for the tests with no result yet, the rescue run, or the end. The events:

    collected  the test ids of the run, with their level, points and edge markers
    import     the learner's module is being imported (state start), or was (state done)
    start      a test begins
    report     one phase (setup, call, teardown) of the running test ended
    tampered   the plugin saw its machinery or the graders' code change under it
    finish     the session is over

A sketch of one run (see `supervise`):

    sup = RunSupervisor(limits)
    while child.poll() is None:
        for ev in child.events(): sup.feed(ev)
        why = watchdog(sup, time.monotonic())      # None, or why the child is stopped
    targets = sup.child_ended(why, child.returncode, child.output())

Rules it keeps: exit code 0 proves nothing (a test the child died in is an error); every test with
no result is an error, never a pass; an unexpected event, an unsigned line, a canary that passed or
a "tampered" event make the run tampered (0 points). Budgets: once two tests of the run have timed
out, every later test gets the short bound (`Limits.strike_timeout`); when the run's budget
(`Limits.wall_timeout`) runs out, the tests not yet run still get graded, in one fresh child with
the short per-test bound (the rescue run, with a budget of at most `Limits.rescue_timeout`), so an
honest hang costs only the tests that reach it, and a submission that hangs everywhere is over in
wall_timeout + rescue_timeout: the tests the rescue run cannot reach are errors ("not run").
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kata.child import _describe_exit
from kata.results import (
    BUDGET_SPENT, ERROR, FAIL, NOT_RUN, PASS, TIMED_OUT, Limits, Reason, SuiteResult, TestResult, apply_report, hidden_name,
    common_message)

log = logging.getLogger("kata.harness")


class RunSupervisor:
    """What one grading run knows, across its children; fed by events, asked by the watchdog."""

    def __init__(self, limits: Limits, on_progress=None, redact: bool = False):
        self.limits = limits
        self.redact = redact  # a hidden suite during a session: logs and messages name no test
        self.on_progress = on_progress
        self.started = time.monotonic()
        self.tests: dict[str, TestResult] = {}  # node id -> result, insertion = collection order
        self.finished: set[str] = set()
        self.restarts = 0
        self.message: str | None = None  # why the run ended early, if it did
        self.tampered: str | None = None
        self.timed_out = 0  # tests of the run that timed out (two: the short bound from then on)
        self.rescue_until: float | None = None  # set once the rescue run has started
        self.rescue_budget = 0.0
        self.begin_child([])

    # --- one child's state ----------------------------------------------------

    def begin_child(self, canaries: list[tuple[str, float]]) -> None:
        self.canary_ids: dict[str, str | None] = {name: None for name, _ in canaries}
        self.current: str | None = None
        self.since: float | None = None
        self.importing: float | None = None
        self.finished_at: float | None = None
        self.whens: dict[str, str] = {}
        self.finished_before = len(self.finished)

    def per_test_limit(self) -> float:
        short = self.timed_out >= 2 or self.rescue_until is not None
        return self.limits.strike_timeout if short else self.limits.test_timeout

    def deadline(self) -> float:
        """When the current phase's budget runs out (the run's, or the rescue run's)."""
        if self.rescue_until is not None:
            return self.rescue_until
        return self.started + self.limits.wall_timeout

    def label(self, test_id: str | None) -> str:
        """How logs and messages name a test: its node id, or, when the run is redacted,
        'hidden test N' (N: its place in the suite, as `kata submit --json` numbers it)."""
        if not self.redact:
            return str(test_id)
        place = list(self.tests).index(test_id) + 1 if test_id in self.tests else "?"
        return hidden_name(place) if isinstance(place, int) else "hidden test ?"

    def distrust(self, why: str) -> None:
        if self.tampered is None:
            log.info("tampered: %s", why)
        self.tampered = self.tampered or why

    # --- events ---------------------------------------------------------------

    def feed(self, ev: dict) -> None:
        kind = ev.get("event")
        if self.finished_at is not None:
            self.distrust(f"an event arrived after the run's last one ({kind})")
        getattr(self, f"on_{kind}", self.on_unexpected)(ev)

    def on_unexpected(self, ev: dict) -> None:
        self.distrust(f"an event the harness does not know ({str(ev.get('event'))[:40]})")

    def on_collected(self, ev: dict) -> None:
        for t in ev.get("tests", []):
            name = t["id"].split("::")[-1]
            if name in self.canary_ids:
                self.canary_ids[name] = t["id"]
            elif t["id"] not in self.tests:
                self.tests[t["id"]] = TestResult(
                    name=t["id"], status=ERROR, message="no result was reported",
                    task_id=t.get("level"),
                    points=t.get("points") if t.get("points") is not None else 1.0,
                    edge=t.get("edge"), impl=t.get("impl"))
        if self.on_progress is not None and self.tests:  # the total, before any result
            self.on_progress(len(self.finished.intersection(self.tests)), len(self.tests), None)

    def on_import(self, ev: dict) -> None:
        self.importing = time.monotonic() if ev.get("state") == "start" else None

    def on_start(self, ev: dict) -> None:
        if self.current is not None:
            self.distrust(f"a test started while {self.label(self.current)} had not finished")
        self.current, self.since, self.whens = ev.get("id"), time.monotonic(), {}

    def on_report(self, ev: Any) -> None:  # the child's JSON event: its fields are checked below
        test_id, when, outcome = ev.get("id"), ev.get("when"), ev.get("outcome")
        if test_id != self.current or when in self.whens:
            self.distrust(f"an unexpected report for {self.label(test_id)} ({when})")
            return
        self.whens[when] = outcome
        is_canary = test_id.split("::")[-1] in self.canary_ids
        if is_canary and when == "call" and outcome != "failed":
            self.distrust(f"a test that must fail was reported {outcome}")
        elif not is_canary and test_id in self.tests and test_id not in self.finished:
            apply_report(self.tests[test_id], ev)
            if when == "call" and outcome == "failed" and (ev.get("message") or "").startswith(TIMED_OUT):
                self.tests[test_id].reason = Reason.TIMED_OUT  # the plugin's own timeout said so
                self._count_timeout(test_id)
        elif not is_canary and test_id not in self.tests:
            self.distrust(f"a report for a test that was never collected ({self.label(test_id)})")
        if when == "teardown":
            if is_canary and "call" not in self.whens and self.whens.get("setup") == "passed":
                self.distrust("a test that must fail was never called")
            self._done(test_id)

    def on_tampered(self, ev: dict) -> None:
        self.distrust("the grading machinery was changed while your code ran "
                      f"({', '.join(ev.get('what', []))[:200]}, {ev.get('when')})")

    def on_finish(self, ev: dict) -> None:
        self.finished_at = time.monotonic()

    def _count_timeout(self, test_id: str) -> None:
        self.timed_out += 1
        log.info("timeout: %s (%d in this run; per-test bound now %gs)", self.label(test_id), self.timed_out,
                 self.per_test_limit())

    def _done(self, test_id: str) -> None:
        self.finished.add(test_id)
        self.current = None
        if self.on_progress is not None and test_id in self.tests:  # canaries never count
            self.on_progress(len(self.finished.intersection(self.tests)), len(self.tests),
                             self.tests[test_id].task_id)

    # --- a child ended ------------------------------------------------------------

    def pending(self) -> list[str]:
        return [name for name in self.tests if name not in self.finished]

    def over_budget(self) -> str:
        if self.rescue_until is None:
            spent = f"{self.limits.wall_timeout:g}s grading budget"
        else:
            spent = f"{self.rescue_budget:.0f}s rescue budget"
        return f"{BUDGET_SPENT} its {spent} ({self.timed_out} test(s) timed out)"

    def child_ended(self, why: str | None, returncode: int | None, output: str) -> list[str] | None:
        """Account for a child that ended (stopped for `why`, or by itself); return the tests a
        fresh child must run, or None when the run is over."""
        tail = (": " + output.strip()[-1500:]) if output.strip() else ""
        if not self.tests:
            self.message = f"no test was collected; pytest {_describe_exit(returncode)}{tail}"
            return None
        if self.importing is not None:  # the module never finished importing
            verdict = why or (f"the test process {_describe_exit(returncode)} while importing your "
                              "module (sys.exit or os._exit at module level?)")
            for name in self.pending():
                self.tests[name].status, self.tests[name].message = ERROR, verdict
                self.finished.add(name)
            self.message = verdict
            return None
        progressed = len(self.finished) > self.finished_before or self.current is not None
        self._blame_current(why, returncode, output)
        pending = self.pending()
        if self.tampered or not pending:
            return None
        if why is not None and why.startswith(BUDGET_SPENT):
            return self._rescue(pending, why)
        if self.restarts >= self.limits.max_restarts:
            return None
        if not progressed:  # a fresh child would do the same again
            self.message = f"the test process {_describe_exit(returncode)} before running a test{tail}"
            return None
        if time.monotonic() > self.deadline():
            return self._rescue(pending, self.over_budget())
        self.restarts += 1
        log.info("restart %d: a fresh child for %d test(s) with no result (the last one %s)",
                 self.restarts, len(pending), why or _describe_exit(returncode))
        return pending

    def _blame_current(self, why: str | None, returncode: int | None, output: str) -> None:
        current = self.current
        if current is None or current in self.finished or current not in self.tests:
            return
        t = self.tests[current]
        t.status = ERROR
        already = t.reason == Reason.TIMED_OUT  # its call timed out: that says it, once
        if not already:
            t.message = why or f"the test process {_describe_exit(returncode)} during this test"
        t.output = (t.output or "") + output[-2000:] if output else t.output
        self.finished.add(current)
        if why and why.startswith(TIMED_OUT) and not already:
            t.reason = Reason.TIMED_OUT
            self._count_timeout(current)

    def _rescue(self, pending: list[str], why: str) -> list[str] | None:
        """The budget ran out: grade what is left once more, in one fresh child with the short
        per-test bound and a budget of its own (at most `Limits.rescue_timeout`); a second
        exhaustion ends the run."""
        if self.rescue_until is not None:
            self.message = why
            return None
        per_test = self.limits.strike_timeout + self.limits.hard_test_grace
        budget = min(self.limits.rescue_timeout, self.limits.import_timeout + len(pending) * per_test)
        self.rescue_budget = budget
        self.rescue_until = time.monotonic() + budget
        self.restarts += 1
        log.info("budget: %s; rescue run for %d test(s), %gs each, %.0fs in all", why,
                 len(pending), self.limits.strike_timeout, budget)
        return pending

    # --- the verdict ----------------------------------------------------------

    def result(self) -> SuiteResult:
        for t in self.tests.values():
            if t.name not in self.finished and t.message == "no result was reported" and self.message:
                t.message = f"{NOT_RUN}{self.message}"
                if self.message.startswith(BUDGET_SPENT):
                    t.reason = Reason.OUT_OF_TIME
        results = list(self.tests.values())
        message = self.message
        if self.tampered:
            status = ERROR
            message = (f"tampered: {self.tampered}. A run whose verdicts cannot be trusted scores 0 "
                       "points; submit code that only solves the kata")
        elif not results or all(t.status == ERROR for t in results):
            status = ERROR
            message = message or (common_message(results) if results else None)
        elif all(t.status == PASS for t in results):
            status = PASS
        else:
            status = FAIL
        return SuiteResult(status=status, message=message, tests=results,
                           duration=round(time.monotonic() - self.started, 3),
                           restarts=self.restarts, tampered=self.tampered)


def watchdog(sup: RunSupervisor, now: float) -> str | None:
    """Why the running child must be stopped now, or None to let it run."""
    limits = sup.limits
    bound = sup.per_test_limit() + limits.hard_test_grace
    if sup.importing is not None and now - sup.importing > limits.import_timeout:
        return (f"importing your module did not finish within {limits.import_timeout:g}s "
                "(code at module level that never ends?)")
    if sup.current is not None and sup.since is not None and now - sup.since > bound:
        return f"timed out: still running after {bound:.0f}s, the process was killed"
    if now > sup.deadline():
        return sup.over_budget()
    if sup.finished_at is not None and now - sup.finished_at > 2.0:
        return "finished"  # a thread the learner left running holds the exit
    if sup.tampered:
        return "tampered"  # the verdict is 0 points already: stop now
    return None
