"""One presenter: what a graded result may show, decided once for the text screens, the JSON and
the room.

A hidden-suite result graded for a live session shows each test's level and pass/fail, named
'hidden test N', and nothing else (no name, message, output or file); a practice session (one
kata on its own timer) also says what each missed test checks (its edge text, never its input);
a result outside any session shows everything. The question's kind renders its own part. Every
screen takes what it shows from `submitted(...)`: the command line's text and --json, `kata
watch` and the room.

    view = submitted(wb, graded)
    view.result        -> the SuiteResult as it may be shown now (redacted in a live session)
    view.to_json()     -> the --json row (and the room's data)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kata.kinds import part_view
from kata.results import PASS, SuiteResult, hidden_name, missed_edges, timeout_line


def may_show(result: SuiteResult, live: bool, practice: bool) -> SuiteResult:
    """`result` as a session may show it: everything outside a live session; inside one, each
    test's level and pass/fail, named 'hidden test N' (with its edge text when it was missed in a
    practice session), no test's message, output or file. The run's own message stays: it is
    about the learner's file (an import that failed), and a run graded for a live session names
    no test in it (kata.grading's `redact`)."""
    if not live:
        return result
    tests = [replace(t, name=f"hidden::{hidden_name(i)}", message=None, detail=None, output=None,
                     edge=t.edge if practice and t.status != PASS else None)
             for i, t in enumerate(result.tests, 1)]
    return replace(result, tests=tests)


@dataclass
class Submitted:
    """A submission as every screen shows it."""

    slug: str
    session: int | None  # the live session it counts for (None: practice outside a session)
    practice: bool  # a session of one kata on its own timer (feedback by property)
    result: SuiteResult  # as it may be shown now (may_show)
    share: str  # ': 40 of the question's 100 points so far' (Graded.question_share), or ''
    levels_graded: list[int] | None
    opened: list[int] = field(default_factory=list)
    passed_now: list[int] = field(default_factory=list)
    part: dict | None = None  # the question's kind's part (kata.kinds.part_view)
    missed: list[tuple[int | None, str, int]] = field(default_factory=list)  # practice: (level, edge, tests)

    @property
    def live(self) -> bool:
        return self.session is not None

    def to_json(self) -> dict:
        """The --json row of `kata submit` (docs/FORMATS.md); the room adds its own words."""
        data = {"kata": self.slug, **self.result.to_json(), "part": self.part,
                "levels_graded": self.levels_graded, "levels_opened": self.opened}
        if self.live:  # levels and pass/fail only (a practice session's missed edges too)
            data["tests"] = [{"name": t.name.split("::")[-1], "status": t.status, "task_id": t.task_id,
                              **({"edge": t.edge} if t.edge else {})} for t in self.result.tests]
        return data

    @property
    def timeouts(self) -> str | None:
        return timeout_line(self.result)


def submitted(wb, g) -> Submitted:
    """What a submission (a kata.session.Graded) shows, on every screen."""
    live = g.session is not None
    practice = live and g.session.kind == "kata"
    return Submitted(
        slug=g.kata.slug, session=g.session.id if live else None, practice=practice,
        result=may_show(g.result, live, practice), share=g.question_share(wb) if live else "",
        levels_graded=g.levels, opened=list(g.opened), passed_now=list(g.passed_now),
        part=part_view(g.result), missed=missed_edges(g.result) if practice else [])
