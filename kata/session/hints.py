"""Hints, revealed one at a time and recorded, only for the levels open.
"""

from __future__ import annotations

from dataclasses import dataclass

import kata.session.base as base
from kata.catalog import Kata, Workbook
from kata.kinds import kind_of
from kata.session.base import open_store
from kata.session.levels import view
from kata.store import Session, Store


@dataclass
class Hint:
    kata: Kata
    index: int  # 0-based in kata.hints
    level: int
    text: str
    total: int  # hints of the levels this question covers (a level it does not cover never opens)
    number: int = 0  # 1-based among those
    in_level: int = 0  # 1-based among its level's hints
    level_total: int = 0  # its level's hints
    note: str | None = None  # the question's kind's note on its hints (Kind.hint_note)

    def line(self) -> str:
        """What a learner reads: numbered within its level, so an exam's question and the same
        kata practised alone say the same ("Hint 2 of 3 for level 1: ...")."""
        why = f" ({self.note})" if self.note else ""
        return f"Hint {self.in_level} of {self.level_total} for level {self.level}{why}: {self.text}"


def _hint(kata: Kata, mine: list[tuple[int, int, str]], n: int, note: str | None = None) -> Hint:
    """The n-th (1-based) of the question's hints `mine`, numbered in the question and its level."""
    i, level, text = mine[n - 1]
    same = [j for j, lv, _ in mine if lv == level]
    return Hint(kata, i, level, text, len(mine), n, same.index(i) + 1, len(same), note)


def _question_hints(wb: Workbook, kata: Kata, session: Session | None,
                    store: Store) -> tuple[list[tuple[int, int, str]], list[int], int | None, str | None]:
    """(the hints of the question's levels as (index, level, text), the open levels, session id,
    the question's kind's note on its hints)."""
    sid = session.id if session and kata.slug in session.katas else None
    v = view(wb, kata, session, store)
    covered = set(v.question.levels) if v.question is not None else {lv.number for lv in kata.levels}
    mine = [(i, level, text) for i, (level, text) in enumerate(kata.hints) if level in covered]
    return mine, v.levels, sid, kind_of(v.question).hint_note if v.question is not None else None


def next_hint(wb: Workbook, kata: Kata) -> Hint | None:
    """Reveal and record the next hint of an open level (in the live session if it holds the kata).
    None: every hint of the open levels is shown already."""
    store = open_store(wb)
    t = base.now()
    mine, visible, sid, note = _question_hints(wb, kata, store.live_session(t), store)
    shown = set(store.revealed_hints(kata.slug, sid))
    for n, (i, level, _text) in enumerate(mine, start=1):
        if i not in shown and level in visible:  # no hint for a level not open yet
            store.reveal_hint(sid, kata.slug, i, t)
            return _hint(kata, mine, n, note)
    return None


def revealed(wb: Workbook, kata: Kata) -> tuple[list[Hint], int]:
    """The hints shown so far, and how many of the question's hints are still closed (their
    level is not open yet)."""
    store = open_store(wb)
    mine, _, sid, note = _question_hints(wb, kata, store.live_session(base.now()), store)
    shown = set(store.revealed_hints(kata.slug, sid))
    hints = [_hint(kata, mine, n, note) for n, (i, _level, _text) in enumerate(mine, start=1) if i in shown]
    return hints, len(mine) - len(hints)
