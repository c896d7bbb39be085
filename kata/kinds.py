"""Question kinds: what each kind of question hands out, adds to a grade, records and reviews.

A session's question (kata.catalog.Question) names its kind; kata/session.py asks the kind's
object here for everything that differs by kind, and has no branch of its own on it:

* hand out: `hand_out` writes the workspace files of a new session, `watched` names the files
  the deadline keeper reads, `extra_files` the files besides the code that `kata start` names;
* grade: `given` is the code as handed out and `given_is_work` whether handing it back in is an
  answer; `extra_now` / `extra_at_deadline` / `extra_recorded` read the learner's other file (a
  hunt's pin) as it is, as it stood at the deadline, or as a submission graded it; `judge` adds
  its part to the result and returns the submission's points (None: the result's own);
* review: `worth` is the question's points, `review` and `status_note` what the review and
  `kata status` show beyond the code's result.

A new kind subclasses Kind and calls `register`: nothing else changes (tests/test_kinds.py adds
one). The registry: `KINDS`, `kind_of(question)`.

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
    hint_note = False  # whether its hints were written for another task (shown with a note)

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
        """What `kata status` adds for the question, given its counted submission (or None)."""
        return None


class Hunt(Kind):
    """Review code with a planted bug: pin it with a test and fix it (kata/hunt.py)."""

    name = "hunt"
    drawn = True
    hint_note = True
    given_is_work = True  # the code as handed out, with a pin, is an answer: a pin alone is work

    def draw(self, wb, q, rng, decoys):
        import dataclasses

        from kata import hunt

        return dataclasses.replace(q, reveal="all", bug=hunt.draw(wb.kata(q.kata), max(q.levels), rng, decoys))

    def hand_out(self, wb, pairs, now) -> dict:
        from kata import hunt, workspace

        files: dict[Path, str] = {}
        for q, k in pairs:
            files[wb.workspace_file(k)] = hunt.handout(k, q.bug, max(q.levels))
            files[wb.workspace / hunt.test_file_name(k)] = hunt.template(k)
        copies = workspace.put(wb, files, now)
        return {k.slug: workspace.Prepared(k, wb.workspace_file(k), copies.get(wb.workspace_file(k)),
                                           tuple((p, copies[p]) for p in [wb.workspace / hunt.test_file_name(k)]
                                                 if p in copies))
                for _, k in pairs}

    def watched(self, wb, q, kata):
        from kata.hunt_questions import test_path

        return super().watched(wb, q, kata) + [("test", test_path(wb, kata))]

    def extra_files(self, wb, kata):
        from kata.hunt_questions import test_path

        return [("pin the bug in", test_path(wb, kata))]

    def given(self, kata, q):
        from kata import hunt_questions

        return hunt_questions.handed_out(kata, q)

    def extra_now(self, wb, kata):
        from kata import hunt_questions

        return hunt_questions.read_test(wb, kata)

    def extra_at_deadline(self, wb, store, session, kata, kept):
        """The keeper's record of the pin file, else as hunt_questions.saved_test finds it; a
        record of a file gone or changed at the deadline leaves the last pin a submission graded."""
        from kata import hunt_questions

        rec = kept.get((kata.slug, "test"))
        if rec is None:
            return hunt_questions.saved_test(wb, store, session, kata)
        if rec.code is not None and (rec.mtime is None or rec.mtime <= session.deadline):
            return rec.code
        graded = [self.extra_recorded(sub.result) for sub in store.counted_submissions(session, kata.slug)]
        return next((code for code in reversed(graded) if code is not None), "")

    def extra_recorded(self, result):
        return (result.get("hunt") or {}).get("test_code")

    def extra_attempted(self, extra):
        from kata import hunt_questions

        return hunt_questions.attempted_pin(extra or "")

    def extra_unsubmitted(self, store, session, kata, extra):
        graded = [self.extra_recorded(sub.result) for sub in store.counted_submissions(session, kata.slug)]
        return not graded or extra != graded[-1]

    def judge(self, store, session, kata, q, extra, result):
        from kata import hunt_questions

        result.hunt = hunt_questions.score_pin(store, session, kata, q, extra or "", result)
        return hunt_questions.totals(result)

    def check_note(self, kata, extra, code):
        from kata import hunt, hunt_questions

        return hunt.try_pin(kata, extra, code) if extra and hunt_questions.attempted_pin(extra) else None

    def worth(self, fix):
        return fix * 2  # a hunt's pin is worth its fix

    def review(self, wb, store, session, q):
        from kata import hunt_questions

        return hunt_questions.review_info(wb, store, session, q)

    def status_note(self, best):
        return ((best.result.get("hunt") or {}).get("verdict") if best else None) or "not submitted"


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind to the registry (an exam's `kind = "..."` may then name it)."""
    KINDS[kind.name] = kind
    catalog.KINDS.add(kind.name)
    return kind


register(Kind())
register(Hunt())


def kind_of(q: Question) -> Kind:
    return KINDS[q.kind]
