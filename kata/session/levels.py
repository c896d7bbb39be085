"""What a learner may see of a kata now: a session's questions, the levels open, the prompt cut
to them, whether the reference may be shown; the katas a command is about.
"""

from __future__ import annotations

from dataclasses import dataclass

import kata.session.base as base
from kata.catalog import CatalogError, Kata, Question, Workbook
from kata.kinds import counts_toward_best
from kata.session.base import open_store
from kata.store import Session, Store


def questions_of(wb: Workbook, session: Session) -> list[Question]:
    """The session's questions (a session from before questions existed: every level, shown)."""
    if session.questions is not None:
        return [Question.from_json(q) for q in session.questions]
    out = []
    for slug in session.katas:
        try:
            levels = tuple(lv.number for lv in wb.kata(slug).levels)
        except CatalogError:
            levels = ()
        out.append(Question(slug, levels, 0, "all"))
    return out


def question_for(wb: Workbook, session: Session | None, slug: str) -> Question | None:
    if session is None:
        return None
    return next((q for q in questions_of(wb, session) if q.kata == slug), None)


def open_levels(question: Question, passed: dict[int, float]) -> list[int]:
    """The levels a learner sees: all of the question's, or (progressive) the first and each one
    whose predecessor has passed every hidden test."""
    if question.reveal == "all":
        return list(question.levels)
    shown = [question.levels[0]]
    for prev, lv in zip(question.levels, question.levels[1:], strict=False):
        if prev not in passed:
            break
        shown.append(lv)
    return shown


@dataclass
class View:
    """What the learner may see of one kata now."""

    kata: Kata
    # None: no live session holds the kata (study mode: everything in an instructor's workbook,
    # the levels opened in some session in a learner's; see earned_levels)
    question: Question | None
    levels: list[int]  # visible now
    passed: dict[int, float]  # level -> when it first passed (session time base: epoch seconds)

    @property
    def gated(self) -> bool:
        """Some of the kata's levels are not shown (in a session or out of one)."""
        return len(self.levels) < len(self.kata.levels)

    @property
    def progressive(self) -> bool:
        return self.question is not None and self.question.reveal == "progressive"

    @property
    def complete(self) -> bool:
        return self.question is None or self.levels == list(self.question.levels)


def view(wb: Workbook, kata: Kata, session: Session | None = None, store: Store | None = None) -> View:
    store = store or open_store(wb)
    session = session if session is not None else store.live_session(base.now())
    q = question_for(wb, session, kata.slug)
    if q is None:
        every = [lv.number for lv in kata.levels]
        return View(kata, None, earned_levels(wb, kata, store) if wb.learner else every, {})
    assert session is not None  # question_for finds a question only in a session
    passed = store.passed_levels(session.id, kata.slug)
    return View(kata, q, open_levels(q, passed), passed)


def earned_levels(wb: Workbook, kata: Kata, store: Store) -> list[int]:
    """The levels of `kata` a learner has opened in any session (level 1 always): what a
    learner's workbook shows of it outside a session. The others open in a session, one at a
    time, or all at once with `kata start SLUG --reveal all`."""
    opened = {kata.levels[0].number}
    for s in store.sessions(base.now()):
        if kata.slug in s.katas:
            q = question_for(wb, s, kata.slug)
            if q is not None:
                opened.update(open_levels(q, store.passed_levels(s.id, kata.slug)))
    return sorted(opened)


def study_note(v: View) -> str:
    """The line under a prompt a learner's workbook shows outside a session with levels closed."""
    closed = [lv.number for lv in v.kata.levels if lv.number not in v.levels]
    which = f"level {closed[0]}" if len(closed) == 1 else f"levels {closed[0]}-{closed[-1]}"
    return (f"This kata has {len(v.kata.levels)} levels; {which} open in a session as you pass "
            f"each level (`kata start {v.kata.slug}`), or all at once with `kata start "
            f"{v.kata.slug} --reveal all`.")


def prompt_markdown(wb: Workbook, kata: Kata) -> tuple[View, str]:
    """The prompt as the learner may see it now, with a note on the levels not shown."""
    from kata.prompt import Prompt, level_note

    v = view(wb, kata)
    text = kata.prompt.read_text(encoding="utf-8")
    if v.question is None:
        return v, (Prompt.parse(text).render(v.levels, study_note(v)) if v.gated else text)
    note = level_note(v.levels, list(v.question.levels), len(kata.levels), v.progressive)
    return v, Prompt.parse(text).render(v.levels, note)


def solution_refusal(wb: Workbook, kata: Kata) -> str | None:
    """Why the reference of `kata` may not be shown now, or None (`kata solution`, the room).

    Never while a live session holds the kata. In a learner's workbook, once it is earned: a
    session holding the kata has ended, or a practice submit passed every level of it (as an
    exercise's solution is shown once it is done); an instructor's workbook holds the references
    anyway."""
    store = open_store(wb)
    t = base.now()
    live = store.live_session(t)
    if live is not None and kata.slug in live.katas:
        return f"session {live.id} containing '{kata.slug}' is live: `kata finish` it first"
    if wb.is_student_bundle or not kata.solution.is_file():
        return f"no reference solution for '{kata.slug}' in this workbook (a student bundle?)"
    if not wb.learner:
        return None
    if any(kata.slug in s.katas and not s.is_live(t) for s in store.sessions(t)):
        return None
    if any(sub.session_id is None and sub.points_possible >= kata.points and sub.points_earned >= kata.points
           for sub in store.submissions(slug=kata.slug)):
        return None
    return (f"the reference of '{kata.slug}' is yours once a session holding it has ended, or "
            f"after a submit that passes all {len(kata.levels)} of its levels: practise it first "
            f"(`kata start {kata.slug}`)")




def best_scores(wb: Workbook) -> dict[str, tuple[float, float]]:
    """slug -> (best points earned, possible) over the submissions whose score is the kata's own
    (a kind may score its questions otherwise: Kind.counts_toward_best)."""
    return open_store(wb).best_scores(counts=counts_toward_best)


def live_session(wb: Workbook) -> Session | None:
    return open_store(wb).live_session(base.now())


def pick_katas(wb: Workbook, slug: str | None, all_: bool) -> list[Kata]:
    """The katas a command is about: SLUG, --all (the live session's), or the only one."""
    if slug and all_:
        raise CatalogError("give a kata SLUG or --all, not both")
    if slug:
        return [wb.kata(slug)]
    session = live_session(wb)
    if session is None:
        raise CatalogError("no live session: name the kata (a SLUG after the command; `kata list` "
                           "shows them) or `kata start` one")
    if all_ or len(session.katas) == 1:
        return [wb.kata(s) for s in session.katas]
    raise CatalogError(
        f"session {session.id} has {len(session.katas)} questions ({', '.join(session.katas)}): "
        "name one"
    )


def level_passed(lv) -> bool:
    """The one level-pass rule: a level (a grading.LevelScore) passes when it has hidden tests
    and every one of them passed. It opens the next level and is recorded as a level event."""
    return bool(lv.total) and lv.passed == lv.total
