"""Hunt questions in a session: drawn at start, handed out, scored on submit, shown in review.

kata/hunt.py knows what a hunt is (the code handed out, how a pin is judged); this module puts it
behind the same session, submit, review and history paths as a kata question (as the Hunt kind,
registered in kata/kinds.py's registry), with nothing in the store but a result's part:

* drawing and handing out (Hunt below): each hunt question of a plan gets its bug
  from the session's seed (`--seed S`, else a fresh one, kept in sessions.seed), so a session can
  be reviewed and regraded exactly; the workspace gets the handed-out code as
  workspace/<module> and a pin template as workspace/test_hunt_<module>.py (a learner file
  already there is archived first);
* `score_pin`: on `kata submit`, the result's part is {"kind": "hunt", points_earned,
  points_possible, verdict, reason, late, test_code}; the submission counts fix + pin;
* `review_info`: after the session, the bug's header (Bug, Level, Breaks), or that it was a decoy,
  the pin's verdict, and when the pin and the fix were first made.

Example:
    hunt_question(wb, "lru-kv-cache", seed=7)
    -> (Question(..., kind='hunt', bug='keys_lru_first'), 7)    (the bug depends on the seed)
"""

from __future__ import annotations

import random
from pathlib import Path

from kata import hunt
from kata.catalog import Kata, Question, Workbook, check_minutes
from kata.kinds import Kind, register


DEFAULT_MINUTES = 15  # `kata hunt` without --minutes


def hunt_question(wb: Workbook, slug: str | None, bug: str | None = None, decoy: bool = False,
                  level: int | None = None, minutes: float | None = None, seed: int = 0
                  ) -> tuple[Question, int]:
    """The question `kata hunt` asks, and the seed it was drawn with: a hunt of levels 1..level
    (default: the bug's own level with --bug, else 1), its bug `bug`, a decoy with `decoy`, else
    a bug (and, without SLUG, a kata) drawn with the seed."""
    from kata.catalog import CatalogError

    if bug is not None and decoy:
        raise CatalogError("give --bug NAME or --decoy, not both")
    check_minutes(minutes)
    rng = random.Random(seed)
    if slug is None:
        if bug is not None:
            raise CatalogError("--bug needs the kata: `kata hunt SLUG --bug NAME`")
        slug = rng.choice(wb.slugs())
    kata = wb.kata(slug)
    if level is not None:
        kata.level(level)  # CatalogError naming the levels there are
    if bug is not None:
        level = level or hunt.bug(kata, bug, level).level
    level = level or 1
    if bug is None and not decoy:
        bug = hunt.draw(kata, level, rng)
    return Question(kata.slug, tuple(range(1, level + 1)), minutes or DEFAULT_MINUTES, "all", "hunt", bug), seed


def test_path(wb: Workbook, kata: Kata) -> Path:
    return wb.workspace / hunt.test_file_name(kata)


def read_test(wb: Workbook, kata: Kata) -> str:
    try:
        return test_path(wb, kata).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def saved_test(wb: Workbook, store, session, kata: Kata) -> str:
    """The pin file as it stood at the session's deadline: the workspace file if saved by then,
    else the last one a counted submission graded."""
    path = test_path(wb, kata)
    try:
        if session.started_at <= path.stat().st_mtime <= session.deadline:
            return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    graded = [_pin(sub.result).get("test_code") for sub in store.counted_submissions(session, kata.slug)]
    return next((code for code in reversed(graded) if code is not None), "")


def attempted_pin(test_code: str) -> bool:
    """Whether a pin file holds an answer: a test function, or the verdict that the code is correct
    (the handed-out file's docstring shows both as examples: those do not count). A file that does
    not parse counts, so that its error is graded and shown."""
    import ast

    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return True
    tests = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name.lower().startswith("test") for n in tree.body)
    return tests or hunt.claims_correct(test_code)


def handed_out(kata: Kata, q: Question) -> str:
    return hunt.handout(kata, q.bug, max(q.levels))


def pin_unsubmitted(wb: Workbook, store, session, kata: Kata) -> bool:
    """Whether the pin file saved by the deadline differs from the last one a submission graded."""
    graded = [_pin(sub.result).get("test_code") for sub in store.counted_submissions(session, kata.slug)]
    return not graded or saved_test(wb, store, session, kata) != graded[-1]


def score_pin(store, session, kata: Kata, q: Question, test_code: str, fix) -> dict:
    """The pin's part of a submission (see the module docstring). `fix`: the SuiteResult of the
    workspace file on the hidden suite of the question's levels."""
    pin = hunt.judge(kata, q.bug, max(q.levels), test_code)
    possible = float(fix.points_possible)
    late = pin.earned and _fixed_before_pinned(store, session, kata.slug)
    earned = (possible / 2 if late else possible) if pin.earned else 0.0
    reason = pin.reason + (" (half points: the fix passed before the bug was pinned)" if late else "")
    return {"kind": "hunt", "points_earned": earned, "points_possible": possible, "verdict": pin.verdict,
            "reason": reason, "late": late, "test_code": test_code}


def _pin(result) -> dict:
    """A result's pin (its part, when the part is a hunt's), from a SuiteResult or a stored dict."""
    part = result.get("part") if isinstance(result, dict) else getattr(result, "part", None)
    return part if isinstance(part, dict) and part.get("kind") == "hunt" else {}


def _fixed_before_pinned(store, session, slug: str) -> bool:
    """Whether an earlier submission of the session fixed the code before any pinned the bug."""
    for sub in store.submissions(session_id=session.id, slug=slug):
        if _pin(sub.result).get("points_earned"):
            return False
        if sub.result.get("points_possible") and \
                sub.result.get("points_earned") == sub.result.get("points_possible"):
            return True
    return False


def totals(result) -> tuple[float, float]:
    """A hunt submission's (points earned, possible): the fix's plus the pin's."""
    pin = _pin(result)
    return (round(result.points_earned + pin.get("points_earned", 0.0), 2),
            result.points_possible + pin.get("points_possible", 0.0))


def review_info(wb: Workbook, store, session, q: Question) -> dict:
    """What `kata review` shows of a hunt once the session is over."""
    info: dict = {"bug": q.bug, "decoy": q.bug is None, "header": {}}
    try:
        kata = wb.kata(q.kata)
        if q.bug is not None:
            info["header"] = dict(hunt.bug(kata, q.bug, max(q.levels)).header)
    except Exception as exc:  # noqa: BLE001 - a zoo entry renamed since: say so, review the rest
        info["header"] = {"Bug": f"(the zoo entry can no longer be read: {exc})"}
    pinned_at = fixed_at = None
    official = store.official_submission(session, q.kata)
    for sub in store.counted_submissions(session, q.kata):
        at = round(sub.submitted_at - session.started_at, 1)
        if pinned_at is None and _pin(sub.result).get("points_earned"):
            pinned_at = at
        if fixed_at is None and sub.result.get("points_possible") and \
                sub.result.get("points_earned") == sub.result.get("points_possible"):
            fixed_at = at
    pin = _pin(official.result) if official else {}
    info.update(verdict=pin.get("verdict"), reason=pin.get("reason"),
                pin_points=pin.get("points_earned", 0.0), pinned_at_s=pinned_at, fixed_at_s=fixed_at)
    return info


class Hunt(Kind):
    """Review code with a planted bug: pin it with a test and fix it (kata/hunt.py)."""

    name = "hunt"
    drawn = True
    decoys = True
    hint_note = "written for solving the kata: its rules hold for the code handed out"
    task_words = "review the code of "
    stub_handout = False
    label = "pin"
    counts_toward_best = False  # a pin and a fix: not a score of the kata (progress lists it beside)

    def check_levels(self, levels):
        if sorted(levels) != list(range(1, len(levels) + 1)):
            return f"a hunt covers levels 1..N (the code handed out is those levels'), got {sorted(levels)}: list them from 1"
        return None
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
        return handed_out(kata, q)

    def extra_now(self, wb, kata):
        return read_test(wb, kata)

    def extra_at_deadline(self, wb, store, session, kata, kept):
        """The keeper's record of the pin file, else as hunt_questions.saved_test finds it; a
        record of a file gone or changed at the deadline leaves the last pin a submission graded."""
        rec = kept.get((kata.slug, "test"))
        if rec is None:
            return saved_test(wb, store, session, kata)
        if rec.code is not None and (rec.mtime is None or rec.mtime <= session.deadline):
            return rec.code
        graded = [self.extra_recorded(sub.result) for sub in store.counted_submissions(session, kata.slug)]
        return next((code for code in reversed(graded) if code is not None), "")

    def extra_recorded(self, result):
        return _pin(result).get("test_code")

    def extra_attempted(self, extra):
        return attempted_pin(extra or "")

    def extra_unsubmitted(self, store, session, kata, extra):
        graded = [self.extra_recorded(sub.result) for sub in store.counted_submissions(session, kata.slug)]
        return not graded or extra != graded[-1]

    def judge(self, store, session, kata, q, extra, result):
        result.part = score_pin(store, session, kata, q, extra or "", result)
        return totals(result)

    def check_note(self, kata, extra, code):
        return hunt.try_pin(kata, extra, code) if extra and attempted_pin(extra) else None

    def check_summary(self, note):
        return f"your pin {note}"

    def check_lines(self, kata, note):
        return [f"your pin ({hunt.test_file_name(kata)}) {note}; a pin fails on the handed-out code "
                "and passes on the fixed code"]

    def worth(self, fix):
        return fix * 2  # a hunt's pin is worth its fix

    def review(self, wb, store, session, q):
        return review_info(wb, store, session, q)

    def status_note(self, best):
        return (_pin(best.result).get("verdict") if best else None) or "not submitted"

    def words(self, note):
        return hunt.verdict_words(note)

    def part_lines(self, part):
        return [f"pin: {hunt.verdict_words(part.get('verdict'))}, {part.get('points_earned', 0):g}/"
                f"{part.get('points_possible', 0):g} points: {part.get('reason') or ''}".rstrip(": ")]

    def review_lines(self, info):
        """What the bug was (its zoo header), or that the code was correct; the pin; the times."""
        from kata.views import elapsed

        lines = []
        if info["decoy"]:
            lines.append("the code handed out was correct (a decoy)")
        else:
            head = info["header"]
            lines.append(f"the bug ({info['bug']}, level {head.get('Level', '?')}): {head.get('Bug', '')}")
            if head.get("Breaks"):
                lines.append(f"it breaks: {head['Breaks']}")
        reason = info["reason"]
        if info["decoy"] and info["verdict"] != "correct_claim":  # a bug's advice does not fit a decoy
            reason = f'the right answer was {hunt.CORRECT_CLAIM} = "correct" in your test file'
        lines.append(f"pin: {hunt.verdict_words(info['verdict'])}, {info['pin_points']:g} points"
                     + (f": {reason}" if reason else ""))
        lines.append(", ".join([
            f"pinned at {elapsed(info['pinned_at_s'])}" if info["pinned_at_s"] is not None else "never pinned",
            f"fixed at {elapsed(info['fixed_at_s'])}" if info["fixed_at_s"] is not None else "never fixed"]))
        return lines


register(Hunt())
