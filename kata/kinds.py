"""Question kinds: what each kind of question hands out, adds to a grade, records, shows and reviews.

A session's question (kata.catalog.Question) names its kind; every other module asks the kind's
object here for everything that differs by kind, and has no branch of its own on it:

* hand out: `hand_out` writes the workspace files of a new session, `watched` names the files
  the deadline keeper reads, `extra_files` the files besides the code that `kata start` names;
* grade: `given` is the code as handed out and `given_is_work` whether handing it back in is an
  answer; `extra_now` / `extra_at_deadline` / `extra_recorded` read the learner's other file as
  it is, as it stood at the deadline, or as a submission graded it; `judge` puts the kind's own
  part in the result (`result.part`, {"kind": name, ...}: no module but the kind's reads its
  keys) and returns the submission's points (None: the result's own);
* show: `part_lines` / `part_json` render that part for the text screens and for the JSON and
  the room; `check_note` / `check_lines` what `kata check` adds; `label`, `status_note` and
  `words` what `kata status` says; `counts_toward_best` whether its scores are the kata's own
  (`kata list`'s and `kata progress`'s best; others are listed beside);
* review: `worth` is the question's points, `review` what the review holds of it and
  `review_lines` how the text shows that.

A new kind subclasses Kind and calls `register`: nothing else changes (tests/test_kinds.py adds
one). The registry: `KINDS` (kata.catalog's, the built-in kinds loaded by module name on first
use), `kind_of(question)`, `part_kind(part)`; the hunt kind is kata/hunt_questions.py's.

    kind_of(Question("lru-kv-cache", (1,), 12)).worth(25.0)   -> 25.0
    kind_of(Question("lru-kv-cache", (1,), 12, kind="hunt")).worth(25.0)   -> 50.0
"""

from __future__ import annotations

import random
import secrets
from pathlib import Path

from kata import catalog
from kata.catalog import Kata, Question, Workbook


def new_seed() -> int:
    """A fresh seed for a session whose questions are drawn (kept in sessions.seed)."""
    return secrets.randbelow(2**31)


class Kind:
    """A question that hands out the kata's stub and grades the learner's code: the default."""

    name = "kata"
    drawn = False  # whether `draw` uses the session's seed (then the session keeps one)
    decoys = False  # whether an exam's decoy_probability applies to it
    hint_note: str | None = None  # a note after each hint, when its hints were written for another task
    task_words = ""  # what a briefing says before a question's levels ("review the code of ")
    stub_handout = True  # it hands out the kata's stub (starting again may go on with one's own file)
    label = "note"  # what `kata status` calls its status_note, when it has one ("pin")
    counts_toward_best = True  # its scores are the kata's own (else listed beside in progress)

    def check_levels(self, levels: list[int]) -> str | None:
        """Why an exam's question of this kind cannot cover `levels` (None: it can)."""
        return None

    def draw(self, wb: Workbook, q: Question, rng: random.Random, decoys: float) -> Question:
        """The question as a new session asks it (a hunt draws its bug here)."""
        return q

    def hand_out(self, wb: Workbook, pairs: list[tuple[Question, Kata]], now: float) -> dict:
        """Write the workspace files of these questions; slug -> workspace.Prepared."""
        from kata import workspace

        return {p.kata.slug: p for p in workspace.prepare(wb, [k for _, k in pairs], now)}

    def watched(self, wb: Workbook, q: Question, kata: Kata) -> list[tuple[str, Path]]:
        """(role, path) of each file the deadline keeper reads; role "code" is the graded file."""
        return [("code", wb.workspace_file(kata))]

    def extra_files(self, wb: Workbook, kata: Kata) -> list[tuple[str, Path]]:
        """(what to do, path) of each file besides the code that the learner edits."""
        return []

    def given(self, kata: Kata, q: Question) -> str | None:
        """The code as handed out (None where it cannot be read)."""
        try:
            return kata.stub.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    given_is_work = False  # the stub handed back is no answer: settling never grades it

    def extra_now(self, wb: Workbook, kata: Kata) -> str | None:
        return None

    def extra_at_deadline(self, wb: Workbook, store, session, kata: Kata, kept: dict) -> str | None:
        return None

    def extra_recorded(self, result: dict) -> str | None:
        return None

    def extra_attempted(self, extra: str | None) -> bool:
        """Whether the other file holds an answer (a settle grades handed-out code then)."""
        return False

    def extra_unsubmitted(self, store, session, kata: Kata, extra: str | None) -> bool:
        """Whether the other file as saved differs from the last one a submission graded."""
        return False

    def judge(self, store, session, kata: Kata, q: Question, extra: str | None, result) -> tuple | None:
        """Add the kind's part to `result` (a hidden-suite SuiteResult of the code); the
        submission's (points earned, possible), or None for the result's own."""
        return None

    def check_note(self, kata: Kata, extra: str | None, code: str) -> str | None:
        """A line for `kata check` beyond the visible tests (None: nothing to add)."""
        return None

    def worth(self, fix: float) -> float:
        """The question's points, from the points of the levels it covers."""
        return fix

    def review(self, wb: Workbook, store, session, q: Question) -> dict | None:
        return None

    def status_note(self, best) -> str | None:
        """What `kata status` adds for the question, given its counted submission (or None): a
        value the JSON carries as it is (`words` says it in the text)."""
        return None

    def words(self, note) -> str:
        """A status note, or a note in progress, as the text screens say it."""
        return str(note)

    # --- the kind's part of a graded result (result.part) -----------------------------------

    def part_lines(self, part: dict) -> list[str]:
        """Lines the text screens (and the room) show of the part, after a submission's table."""
        return []

    def part_json(self, part: dict) -> dict:
        """The part as the JSON and the room carry it."""
        return dict(part)

    def check_lines(self, kata: Kata, note: str) -> list[str]:
        """`kata check`'s lines for a `check_note`."""
        return [self.check_summary(note)]

    def check_summary(self, note: str) -> str:
        """The note in a few words (kata watch's status line, the room's Run)."""
        return note

    def review_json(self, info: dict) -> dict:
        """`review`'s info as the JSON and the room carry it."""
        return dict(info)

    def review_lines(self, info: dict) -> list[str]:
        """What `kata review` prints of `review`'s info (indented by the caller)."""
        return []


KINDS: dict[str, Kind] = catalog.KINDS  # type: ignore[assignment]  # one registry: kata.catalog's


def register(kind: Kind) -> Kind:
    """Add a kind to the registry (an exam's `kind = "..."` may then name it)."""
    KINDS[kind.name] = kind
    return kind


register(Kind())


def unregister(name: str) -> None:
    """Take a kind out of the registry (a test's own kind, once the test is done)."""
    KINDS.pop(name, None)


def kind_of(q: Question) -> Kind:
    return catalog.kinds()[q.kind]  # type: ignore[return-value]


def kind_named(name: str | None) -> Kind:
    """The registered kind of that name; the default kind for a name no longer registered."""
    known = catalog.kinds()
    return known.get(name or "kata", known["kata"])  # type: ignore[return-value]


def part_kind(part: dict | None) -> Kind:
    """The kind a result's part belongs to (the default kind for a result with none)."""
    return kind_named(part.get("kind") if isinstance(part, dict) else None)


def part_of(result) -> dict | None:
    """A result's part: from a SuiteResult, or from a stored result (a dict)."""
    part = result.get("part") if isinstance(result, dict) else getattr(result, "part", None)
    return part if isinstance(part, dict) else None


def part_view(result) -> dict | None:
    """The part as the JSON and the room carry it ({"kind", "lines", ...its own fields}), or None."""
    part = part_of(result)
    if part is None:
        return None
    kind = part_kind(part)
    return {**kind.part_json(part), "kind": kind.name, "lines": kind.part_lines(part)}


def counts_toward_best(result) -> bool:
    """Whether a stored result's score is its kata's own (kata.store.best_scores)."""
    return part_kind(part_of(result)).counts_toward_best

