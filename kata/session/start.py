"""Starting a session: the plan (an exam, a kata, a hunt) and the start, whose kinds hand out
the workspace files.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path

import kata.session.base as base
from kata.catalog import REVEALS, CatalogError, Exam, Kata, Question, Workbook, check_minutes
from kata.kinds import kind_named, kind_of, new_seed
from kata.session.base import open_store
from kata.session.levels import open_levels
from kata.store import Session, StoreError, still_live_message


@dataclass
class Started:
    session: Session
    abandoned: Session | None
    katas: list[Kata]
    prepared: list  # list[workspace.Prepared]
    questions: list[Question]


@dataclass
class Plan:
    """What `kata start` would start: shown as the briefing before the clock runs."""

    kind: str  # 'exam' | 'kata'
    name: str
    title: str
    description: str
    minutes: float
    questions: list[Question]
    katas: list[Kata]
    seed: int | None = None  # what the hunts were drawn with (None: no hunt)
    budgets: tuple[tuple[int, int], ...] = ()  # a project exam: each level's reported minutes


def plan(wb: Workbook, target: str | None, minutes: float | None = None,
         reveal: str | None = None, seed: int | None = None) -> Plan:
    """EXAM or SLUG (default: the default exam) -> the session it would start.

    A single kata covers every level, shown one at a time (`reveal="all"`: all at once); an exam's
    questions keep their own levels and reveal unless `reveal` overrides them."""
    from kata.catalog import DEFAULT_EXAM

    check_minutes(minutes)
    if reveal is not None and reveal not in REVEALS:
        raise CatalogError(f"--reveal '{reveal}' must be one of {', '.join(REVEALS)}")
    name = target or DEFAULT_EXAM
    if name in wb.exam_names():
        exam: Exam = wb.exam(name)
        questions = [dataclasses.replace(q, reveal=reveal or q.reveal) for q in exam.questions]
        total = exam.minutes
        if minutes is not None:  # scale every question's minutes with the clock
            questions = [dataclasses.replace(q, minutes=round(q.minutes * minutes / total, 2))
                         for q in questions]
        drawn = any(kind_of(q).drawn for q in questions)
        if drawn:  # the same seed draws the same questions (a hunt's bug), for review and regrade
            seed = new_seed() if seed is None else seed
            rng = random.Random(seed)
            questions = [kind_of(q).draw(wb, q, rng, exam.decoy_probability) for q in questions]
        return Plan("exam", exam.name, exam.title, exam.description, minutes or total, questions,
                    [wb.kata(q.kata) for q in questions], seed if drawn else None, exam.level_budgets)
    if name in wb.slugs():
        kata = wb.kata(name)
        q = Question(kata.slug, tuple(lv.number for lv in kata.levels), minutes or kata.minutes,
                     reveal or "progressive")
        return Plan("kata", kata.slug, kata.title, kata.summary, minutes or kata.minutes, [q], [kata])
    raise CatalogError(unknown_target_message(wb, name))


def plan_hunt(wb: Workbook, slug: str | None, bug: str | None = None, decoy: bool = False,
              level: int | None = None, minutes: float | None = None, seed: int | None = None) -> Plan:
    """What `kata hunt` would start: one hunt question (see hunt_questions.hunt_question)."""
    from kata import hunt, hunt_questions

    q, seed = hunt_questions.hunt_question(wb, slug, bug, decoy, level, minutes,
                                           new_seed() if seed is None else seed)
    kata = wb.kata(q.kata)
    levels = "level 1" if len(q.levels) == 1 else f"levels 1-{len(q.levels)}"
    return Plan("kata", f"hunt {kata.slug}", f"Hunt: {kata.title}, {levels}",
                "Code an assistant wrote for this kata. Pin its bug with a test in "
                f"workspace/{hunt.test_file_name(kata)} (or, if you find none, write "
                "HUNT_VERDICT = \"correct\" there), then fix the code. `kata submit` grades both.",
                q.minutes, [q], [kata], seed)


def unknown_target_message(wb: Workbook, name: str) -> str:
    from kata.catalog import did_you_mean

    hint = did_you_mean(name, wb.exam_names() + wb.slugs()) or " `kata list` shows them."
    return f"'{name}' is neither an exam nor a kata.{hint}"


def start(wb: Workbook, target: str | None, abandon: bool = False,
          minutes: float | None = None, reveal: str | None = None,
          planned: Plan | None = None, keep: bool = False) -> Started:

    p = planned or plan(wb, target, minutes, reveal)
    t = base.now()
    store = open_store(wb)
    # refuse before touching the workspace: a refused start changes nothing
    live = store.live_session(t)
    if live is not None and not abandon:
        raise StoreError(still_live_message(live, t))
    prepared = _hand_out(wb, p.questions, p.katas, t)
    if keep:  # the learner goes on with their own file: put it back (its archived copy stays)
        import shutil

        for prep in prepared:
            if prep.archived is not None:
                shutil.copyfile(prep.archived, prep.path)
    session, abandoned = store.start_session(
        p.kind, p.name, [k.slug for k in p.katas], p.minutes, t, abandon=abandon,
        questions=[q.to_json() for q in p.questions], seed=p.seed)
    from kata import keeper

    if abandoned is not None:
        keeper.stop(wb.kata_dir, abandoned.id)
    if not base.fake_clock():  # a keeper reads the files at the deadline (kata/keeper.py)
        keeper.launch(wb.kata_dir, store.path, session.id, session.deadline, _kept_files(wb, p.questions))
    return Started(session, abandoned, p.katas, prepared, p.questions)


def own_work(wb: Workbook, p: Plan) -> Path | None:
    """The learner's workspace file for a single kata's session, where it holds work of theirs
    (not the stub): starting again could go on with it."""
    if p.kind != "kata" or len(p.katas) != 1:
        return None
    kata = p.katas[0]
    path = wb.workspace_file(kata)
    try:
        if not path.is_file() or path.read_bytes() == kata.stub.read_bytes():
            return None
    except OSError:
        return None
    return path


def _hand_out(wb: Workbook, questions: list[Question], katas: list[Kata], t: float) -> list:
    """Each question's workspace files, written by its kind; workspace.Prepared per kata, in order."""
    groups: dict[str, list[tuple[Question, Kata]]] = {}
    for q, k in zip(questions, katas, strict=True):
        groups.setdefault(q.kind, []).append((q, k))
    done: dict = {}
    for name, pairs in groups.items():
        done.update(kind_named(name).hand_out(wb, pairs, t))
    from kata import workspace

    for q, k in zip(questions, katas, strict=True):  # the examples of the levels open at the start
        workspace.write_visible(wb, k, open_levels(q, {}), t)
    return [done[k.slug] for k in katas]


def _kept_files(wb: Workbook, questions: list[Question]) -> list[tuple[str, str, Path]]:
    """What the deadline keeper reads: the files each question's kind names (its code, a pin)."""
    files = []
    for q in questions:
        kata = wb.kata(q.kata)
        files += [(q.kata, role, path) for role, path in kind_of(q).watched(wb, q, kata)]
    return files
