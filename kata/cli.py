"""The `kata` command line: argument parsing and rendering only; the work is in kata/.

The commands live in kata/commands/, a module per audience, each registering its commands on
one app (kata.commands.base.app) when imported: the learner's (learner_catalog: init, list,
show; learner_session: start to finish; learner_records: review to solution) and the
instructor's (instructor: validate to gradebook). The engine's are kata/judges/cli.py, mounted
here as `kata engine`. This module imports them in the order `kata -h` lists them and gives
each command its one line there; `kata = kata.cli:app` is the console script, `python -m kata`
and a clone's `python cli.py` run the same app.

Exit codes: 0 success, 1 a check that failed (tests failing, validation failing),
2 a usage or input error: one line on stderr starting with "error:", for Click's own errors too
(kata.commands.base.KataGroup). Heavy imports (pytest, hypothesis, numpy, rich) happen inside
the commands that need them, so `kata --help` stays quick.
"""

from __future__ import annotations

# each import registers that module's commands on app: this order is `kata -h`'s
from kata.commands import learner_catalog  # noqa: F401
from kata.commands import learner_session  # noqa: F401
from kata.commands import learner_records  # noqa: F401
from kata.commands import instructor  # noqa: F401
from kata.commands.base import app

# kata.judges.cli imports only typer at its top level (numpy and the engine load inside its commands)
from kata.judges.cli import engine_app

# One line each in `kata -h` (a command's help opens with more than fits beside its name at 80
# columns: without these, each line would end cut short in "...").
SHORT_HELP = {
    "init": "Make a workbook folder to practise in.",
    "show": "Show a kata's prompt (in a session: the levels open so far).",
    "start": "Start a timed session: an exam, or one kata on its own.",
    "hunt": "Review an assistant's code: pin its bug with a test, fix it.",
    "check": "Run the visible tests on your workspace file.",
    "submit": "Grade your workspace file on the hidden suite; record it.",
    "watch": "Run the visible tests on every save, the clock on screen.",
    "review": "After a session: the score per level and each hidden test.",
    "progress": "Your best score per kata, session by session.",
    "snapshots": "List every saved version of your file for a kata.",
    "restore": "Put snapshot N back as your workspace file.",
    "doctor": "Check the store in .kata/ and repair it if it is damaged.",
    "solution": "Show the reference solution (not during a session).",
    "validate": "Check katas: reference passes, stub fails, bugs caught.",
    "new": "Scaffold a new kata: prompt, stub, tests, reference.",
    "bundle": "Write a student bundle: no solutions, no hidden tests.",
    "regrade": "Grade recorded submissions again on today's hidden suites.",
    "runner": "Exercism's test-runner interface (results.json, v3).",
    "grade-batch": "Grade a cohort's submissions into a gradebook.",
}
for _info in app.registered_commands:
    _name = _info.name or (_info.callback.__name__.replace("_", "-") if _info.callback else "")
    if _name in SHORT_HELP:
        _info.short_help = SHORT_HELP[_name]

app.add_typer(engine_app, name="engine", help="Run the reference inference engine.")

if __name__ == "__main__":  # pragma: no cover
    app()
