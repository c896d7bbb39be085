"""What the learner's commands do, without any printing: start, check, submit, hint, finish, review.

cli.py parses arguments and renders; everything it renders comes back from here as plain data, so
each step is unit-tested without the CLI. Times come from `now()`: the machine's clock. Only kata's
own test suite, which turns TEST_CLOCK on (tests/conftest.py, tests/kata_test_clock.py), can move it
with $KATA_NOW (seconds since the epoch); anywhere else $KATA_NOW does nothing.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from kata.catalog import REVEALS, CatalogError, Exam, Kata, Question, Workbook, check_minutes, scaled_score
from kata.kinds import KINDS, Kind, counts_toward_best, kind_named, kind_of, new_seed
from kata.results import PASS, SuiteResult
from kata.store import DeadlineSnapshot, Session, Store, StoreError, Submission, still_live_message


# On only in kata's own tests: then $KATA_NOW sets the clock. Off, the time is the machine's.
TEST_CLOCK = False


def fake_clock() -> bool:
    """Whether a test has set the clock (then no deadline keeper starts: it keeps real time)."""
    return TEST_CLOCK and bool(os.environ.get("KATA_NOW"))


def now() -> float:
    if TEST_CLOCK:
        fake = os.environ.get("KATA_NOW")
        if fake:
            try:
                return float(fake)
            except ValueError:
                raise CatalogError(f"$KATA_NOW={fake!r}: must be seconds since the epoch") from None
    return time.time()


_STORES: dict[tuple[str, int], Store] = {}  # (store path, thread) -> the command's one connection


def open_store(wb: Workbook) -> Store:
    """The store of `wb`: one connection per command (and thread), closed by `close_stores`."""
    import threading

    key = (str(wb.kata_dir / "kata.db"), threading.get_ident())
    store = _STORES.get(key)
    if store is None or store.db is None or not store.path.exists():
        if store is not None:
            store.close()
        store = _STORES[key] = Store(wb.kata_dir / "kata.db")
    return store


def close_stores() -> None:
    """Close every connection `open_store` made (the CLI calls this as each command ends)."""
    while _STORES:
        _, store = _STORES.popitem()
        store.close()


# --- start ------------------------------------------------------------------


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
    t = now()
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
    if not fake_clock():  # a keeper reads the files at the deadline (kata/keeper.py)
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


# --- questions and their levels -------------------------------------------------


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
    session = session if session is not None else store.live_session(now())
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
    for s in store.sessions(now()):
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
    t = now()
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


# --- check and submit -------------------------------------------------------


def best_scores(wb: Workbook) -> dict[str, tuple[float, float]]:
    """slug -> (best points earned, possible) over the submissions whose score is the kata's own
    (a kind may score its questions otherwise: Kind.counts_toward_best)."""
    return open_store(wb).best_scores(counts=counts_toward_best)


def live_session(wb: Workbook) -> Session | None:
    return open_store(wb).live_session(now())


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


@dataclass
class Graded:
    kata: Kata
    path: Path
    result: SuiteResult
    session: Session | None  # the live session it counts for, if any
    submission: Submission | None = None
    levels: list[int] | None = None  # the levels graded (None: every level)
    opened: list[int] = field(default_factory=list)  # levels this submission opened
    passed_now: list[int] = field(default_factory=list)  # levels it passed for the first time
    check_note: str | None = None  # what the question's kind adds to `kata check` (Kind.check_note)
    kind: Kind = field(default_factory=lambda: KINDS["kata"])  # the question's kind (the default outside one)

    def question_share(self, wb: Workbook) -> str:
        """': 40 of the question's 100 points so far' when fewer levels were graded than the
        question has (the others not open yet), so a level's total and the question's (in
        `kata status` and `kata watch`'s table) never seem to differ. A question whose levels
        open one at a time says it on every submission, the one that grades them all too
        (': 100 of the question's 100 points'); any other question: ''."""
        if self.session is None:
            return ""
        q = next((q for q in questions_of(wb, self.session) if q.kata == self.kata.slug), None)
        if q is None:
            return ""
        worth = sum(lv.points for lv in self.kata.levels if lv.number in q.levels)
        one_at_a_time = q.reveal == "progressive" and len(q.levels) > 1
        if worth <= self.result.points_possible and not one_at_a_time:
            return ""
        so_far = " so far" if self.result.points_earned < worth else ""
        return f": {self.result.points_earned:g} of the question's {worth:g} points{so_far}"


def missing_file_message(wb: Workbook, kata: Kata) -> str | None:
    """What to do when the learner's file is gone but kata knows this kata (a snapshot of it, or
    a live session holding it); None when `kata start` is the right advice."""
    path = wb.workspace_file(kata)
    if path.is_file():
        return None
    store = open_store(wb)
    count = len(store.snapshots(None, kata.slug))
    if count:
        return (f"{path}: your file for '{kata.slug}' is missing: `kata restore {kata.slug} "
                f"{count}` puts back the last version kata saw (`kata snapshots {kata.slug}` "
                "lists them all)")
    live = store.live_session(now())
    if live is not None and kata.slug in live.katas:
        return (f"{path}: your file for '{kata.slug}' is missing and kata has no saved version "
                f"of it: copy the stub back with `cp {kata.stub} {path}`")
    if live is not None:  # `kata start` would be refused while the session runs
        return (f"{path}: no workspace file for '{kata.slug}', and it is not in session {live.id} "
                f"({live.name}): practise it after the session (`kata finish`, then `kata start "
                f"{kata.slug}`)")
    return None


def _grade_file(wb: Workbook, kata: Kata, suite: str, progress=None) -> Graded:
    from kata import grading, workspace

    missing = missing_file_message(wb, kata)
    if missing:
        raise workspace.WorkspaceError(missing)
    path, code = workspace.read_learner_file(wb, kata)  # the snapshot graded and recorded
    on_progress = progress(kata) if progress else None  # only once there is something to grade
    t = now()  # a submission counts from when it starts
    store = open_store(wb)
    session = store.live_session(t)
    v = view(wb, kata, session, store)
    if v.question is None:
        session = None
    levels = v.levels if v.question is not None or v.gated else None
    junit = wb.kata_dir / "junit" / f"{kata.slug}-{suite}.xml"  # the latest run, for CI systems
    junit.parent.mkdir(parents=True, exist_ok=True)
    sealed = suite == "hidden" and session is not None  # hidden tests stay hidden until the end
    result = grading.grade(kata, path, suite=suite, junit_xml=None if sealed else junit, code=code,
                           levels=levels, on_progress=on_progress, redact=sealed)
    if sealed:  # what `kata submit` shows: each test's level and pass/fail, no name or message
        from kata.formats import redacted, write_junit

        write_junit([(kata, redacted(result))], junit)
    q = v.question  # session is kept only with a question (above), so both are set or neither
    extra = kind_of(q).extra_now(wb, kata) if q is not None else None
    sub, passed_now = _record(store, session, q, kata, code, result, t, suite, extra)
    graded = Graded(kata, path, result, session, sub, levels, passed_now=passed_now,
                    kind=kind_of(q) if q is not None else KINDS["kata"])
    if suite == "visible" and q is not None:
        graded.check_note = kind_of(q).check_note(kata, extra, code)
    if suite == "hidden" and session is not None and q is not None and not result.tampered:
        after = open_levels(q, store.passed_levels(session.id, kata.slug))
        graded.opened = [lv for lv in after if lv not in v.levels]
        if graded.opened:  # the workspace's test file gains the new level's examples
            workspace.write_visible(wb, kata, after, t)
    if suite == "visible" and wb.learner:  # a report names the file the learner has
        shown = f"{wb.workspace.name}/{workspace.visible_file(wb, kata).name}"
        for test in result.tests:
            for attr in ("detail", "message"):
                text = getattr(test, attr)
                if text:
                    setattr(test, attr, text.replace(f"katas/{kata.slug}/test_visible.py", shown))
    return graded


def _record(store: Store, session: Session | None, q: Question | None, kata: Kata, code: str, result,
            at: float, suite: str = "hidden", extra: str | None = None, **row) -> tuple[Submission, list[int]]:
    """The one way a graded version is recorded (submit, settle and regrade): the question's kind
    adds its part to a hidden result (a hunt's pin, judged on `extra`), the submission is stored
    (`row`: auto=, regrade_of=), and for a session's question every level it passed gets its
    level event (none for a tampered run). (the submission, the levels passed for the first time)."""
    points = kind_of(q).judge(store, session, kata, q, extra, result) if suite == "hidden" and q else None
    sub = store.add_submission(session.id if session else None, kata.slug, code, result.to_json(), at,
                               suite=suite, points=points,
                               suite_version=_suite_version(kata) if suite == "hidden" else None, **row)
    passed_now = []
    if suite == "hidden" and session is not None and q is not None:
        passed_now = _record_levels(store, session.id, kata.slug, result, at, sub.id)
    return sub, passed_now


def _record_levels(store: Store, session_id: int, slug: str, result, at: float, sub_id: int) -> list[int]:
    """Level events for every level `result` passed (idempotent: the first pass is kept; none for
    a tampered run); the levels passed for the first time."""
    if result.tampered:
        return []
    return [lv.level for lv in result.levels
            if level_passed(lv) and store.record_level_passed(session_id, slug, lv.level, at, sub_id)]


def _final_cut(q: Question, kata: Kata, result) -> None:
    """A final answer (auto-submitted, or its regrade) of a question whose levels open one at a
    time counts as far as it passes them, in order, as on submits: a level counts only if every
    earlier one passed."""
    from kata import grading

    if q.reveal != "progressive":
        return
    reached = []
    for lv in result.levels:
        reached.append(lv.level)
        if not level_passed(lv):
            break
    result.tests = [t for t in result.tests if t.task_id in reached]
    grading.score(result, kata, reached)


def check(wb: Workbook, katas: list[Kata], progress=None) -> list[Graded]:
    """`progress(kata)`: a callback factory -> on_progress(done, total, level), or None."""
    return [_grade_file(wb, k, "visible", progress) for k in katas]


def submit(wb: Workbook, katas: list[Kata], progress=None) -> list[Graded]:
    if wb.is_student_bundle or any(not k.grader.is_dir() for k in katas):
        raise CatalogError(
            "this workbook has no hidden suites (a student bundle): grading happens on your "
            "instructor's side; `kata check` runs the visible tests here, and your workspace/ "
            "files are what you hand in"
        )
    return [_grade_file(wb, k, "hidden", progress) for k in katas]


# --- the deadline -----------------------------------------------------------------


@dataclass
class AutoSubmitted:
    session: Session
    kata: Kata
    saved_at: float  # epoch seconds: when the version graded was saved
    submission: Submission | None  # None: nothing graded (see not_graded), or the stub untouched
    # how the version that counts was found, where the deadline keeper's record did not decide it
    # (it did not run, or the file was gone or changed at the deadline): one line for the learner
    evidence: str = ""
    not_graded: str = ""  # why no version could be graded ("changed after the deadline and ...")
    already: bool = False  # the version that counts was submitted already: nothing new graded

    def line(self) -> str:
        """One line for the learner: what the deadline did with this question."""
        from kata.views import elapsed

        if self.already:
            return (f"{self.kata.slug}: the version saved at "
                    f"{elapsed(self.saved_at - self.session.started_at)} was submitted already")
        if self.submission is None:
            if self.not_graded:
                return f"{self.kata.slug}: {self.not_graded}: not graded"
            return f"{self.kata.slug}: not attempted (the code as handed out): 0 points"
        sub = self.submission
        return (f"{self.kata.slug}: auto-submitted the version saved at "
                f"{elapsed(self.saved_at - self.session.started_at)}: "
                f"{sub.points_earned:g}/{sub.points_possible:g} points")

    def lines(self) -> list[str]:
        """line(), then the evidence it went by when that needs saying."""
        return [self.line()] + ([f"{self.kata.slug}: {self.evidence}"] if self.evidence else [])


def settle(wb: Workbook, progress=None) -> list[AutoSubmitted]:
    """Auto-submit, for every session that ran out and is not settled yet, the last version of each
    question's file saved at or before the deadline: the file as the deadline keeper read it at the
    deadline (kata/keeper.py), else the newest of the snapshots kata took (checks and submissions)
    and the workspace file itself by its modification time, saying so. A version already submitted
    is not graded twice. Run by the first `kata` command after a deadline; each session is settled
    once, by whichever process claims it first (and released again if it fails); its keeper, if
    still there, is ended. `progress(kata)`: called before each grading, a callback factory as for
    check and submit."""
    from kata import keeper

    store = open_store(wb)
    t = now()
    done = []
    for s in store.unsettled_timed_out(t):
        if not store.claim_settlement(s.id, t):
            continue
        try:
            keeper.await_record(store, wb.kata_dir, s)  # a command run just as the deadline passed
            done.extend(_settle_session(wb, store, s, progress))
        except BaseException:
            store.unclaim_settlement(s.id)  # e.g. a changed hidden suite: a later command retries
            raise
        # settled only now, with every result recorded: a settle that dies (SIGKILL, a closed
        # terminal) leaves a claim that the next command takes over and redoes
        store.finish_settlement(s.id, now())
        keeper.stop(wb.kata_dir, s.id)
    return done


# (order, saved_at, code): the candidate with the greatest order is the version that counts
_Version = tuple[float, float, str]
_BEFORE_START = "its file is dated before the session started"


def _file_at_cutoff(s: Session, path: Path, kept: DeadlineSnapshot | None) -> tuple[_Version | None, str]:
    """The workspace file's version saved by the session's cutoff, and what was found: '' when the
    deadline keeper's record gave it, 'mtime' when the file's modification time did, else why the
    file does not count ("changed after the deadline", ...)."""
    if kept is not None:  # the keeper read the file at the deadline: that is the last saved version
        if kept.code is None:
            return None, "missing or not UTF-8 text at the deadline"
        if kept.mtime is not None and kept.mtime > s.deadline:
            return None, "changed as the deadline passed"
        saved = kept.mtime if kept.mtime is not None and s.started_at <= kept.mtime else s.deadline
        return (s.deadline, saved, kept.code), ""
    try:
        code = path.read_text(encoding="utf-8")
        mtime = path.stat().st_mtime
    except UnicodeDecodeError:
        return None, "its file is not UTF-8 text"
    except OSError:
        return None, "its file is missing"
    if mtime > s.deadline:
        return None, "changed after the deadline"
    if mtime < s.started_at:
        return None, _BEFORE_START
    return (mtime, mtime, code), "mtime"


def _settle_session(wb: Workbook, store: Store, s: Session, progress=None) -> list[AutoSubmitted]:
    """Auto-submit each question's last version saved by the deadline (see settle)."""
    from kata import grading

    at_deadline = s.ended_by == "deadline"  # else `kata finish`: the files as they are now count
    kept = store.deadline_snapshots(s.id) if at_deadline else {}
    done = []
    for q in questions_of(wb, s):
        try:
            kata = wb.kata(q.kata)
        except CatalogError:
            continue
        candidates: list[_Version] = [(snap.submitted_at, snap.submitted_at, snap.code)
                                      for snap in store.snapshots(s.id, q.kata) if snap.submitted_at <= s.deadline]
        path = wb.workspace_file(kata)
        from_file, found = _file_at_cutoff(s, path, kept.get((q.kata, "code")))
        if from_file is not None:
            candidates.append(from_file)
        explain = at_deadline and found != ""  # the keeper's record did not decide: say what did
        graded_before = bool(store.counted_submissions(s, q.kata))
        kind = kind_of(q)
        given = kind.given(kata, q)
        extra = kind.extra_at_deadline(wb, store, s, kata, kept)
        if kind.given_is_work and given is not None:  # handed out = saved at the start (a hunt: a pin alone is work)
            candidates.append((s.started_at, s.started_at, given))
            # ... but the handed-out code with nothing else done is no answer at all
            if not graded_before and max(candidates, key=lambda c: c[0])[2] == given and \
                    not kind.extra_attempted(extra):
                done.append(AutoSubmitted(s, kata, s.started_at, None))
                continue
        else:  # the stub as handed out is no answer: grading it only costs time
            untouched = [c for c in candidates if c[2] == given]
            candidates = [c for c in candidates if c[2] != given]
            if untouched and not candidates:
                if not graded_before:  # a submitted stub was graded already: it stands as it is
                    done.append(AutoSubmitted(s, kata, s.started_at, None))
                continue
        if not candidates:
            if explain and found != "mtime":
                done.append(AutoSubmitted(s, kata, s.started_at, None,
                                          not_graded=f"{found} and kata saw no earlier version"))
            continue
        chosen = max(candidates, key=lambda c: c[0])
        _, saved_at, code = chosen
        earlier = [sub for sub in store.counted_submissions(s, q.kata) if sub.code == code]
        if earlier and not kind.extra_unsubmitted(store, s, kata, extra):
            # that version was graded already (by a submit, or a settle that then died)
            _record_levels(store, s.id, q.kata, grading.SuiteResult.from_json(earlier[-1].result),
                           earlier[-1].submitted_at, earlier[-1].id)
            if explain and found not in ("mtime", _BEFORE_START):  # newer work may be lost: say so
                done.append(AutoSubmitted(s, kata, saved_at, None, already=True,
                                          evidence=_evidence(s, chosen, from_file, found)))
            continue
        if not kata.grader.is_dir():
            continue  # a student bundle: no hidden suite here
        sub = _grade_final(wb, store, s, q, kata, code, saved_at, extra, progress)
        done.append(AutoSubmitted(s, kata, saved_at, sub,
                                  evidence=_evidence(s, chosen, from_file, found) if explain else ""))
    return done


def _grade_final(wb: Workbook, store: Store, s: Session, q: Question, kata: Kata, code: str,
                 saved_at: float, extra: str | None, progress) -> Submission:
    """Grade and record the version saved by the cutoff: the final answer (see _final_cut), with
    the kind's other file (`extra`, a hunt's pin) as saved by then."""
    from kata import grading

    on_progress = progress(kata) if progress else None
    result = grading.grade(kata, wb.workspace_file(kata), "hidden", code=code, levels=list(q.levels),
                           on_progress=on_progress)
    _final_cut(q, kata, result)
    return _record(store, s, q, kata, code, result, saved_at, extra=extra, auto=True)[0]


def _evidence(s: Session, chosen: _Version, from_file: _Version | None, found: str) -> str:
    """What settling went by, where the keeper's record did not decide (see _file_at_cutoff)."""
    from kata.views import elapsed

    at = elapsed(chosen[1] - s.started_at)
    if chosen is from_file:
        return f"graded by its modification time, {at} (the deadline keeper did not run)"
    why = "the deadline keeper did not run" if found == "mtime" else found
    return f"{why}; the last version kata saw is from {at}: graded that"


# --- hints ------------------------------------------------------------------


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
    t = now()
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
    mine, _, sid, note = _question_hints(wb, kata, store.live_session(now()), store)
    shown = set(store.revealed_hints(kata.slug, sid))
    hints = [_hint(kata, mine, n, note) for n, (i, _level, _text) in enumerate(mine, start=1) if i in shown]
    return hints, len(mine) - len(hints)


# --- finish, review, history, status ----------------------------------------


def finish(wb: Workbook, progress=None) -> tuple[Session, list[AutoSubmitted]]:
    """End the live session now, then grade what the deadline would have: each question's last
    saved version, unless it was submitted already or is the untouched stub (see settle). A
    learner who finishes early loses no work they saved but did not submit."""
    import dataclasses

    store = open_store(wb)
    session = store.live_session(now())
    if session is None:
        raise StoreError("no live session to finish: `kata history` lists past sessions")
    ended = store.finish_session(session.id, now())
    if ended.ended_by == "deadline":  # it ran out meanwhile: the deadline's settle grades it
        return ended, settle(wb, progress)
    from kata import keeper

    keeper.stop(wb.kata_dir, session.id)  # ended before its deadline: nothing left to keep
    cutoff = dataclasses.replace(ended, deadline=ended.cutoff())
    return ended, _settle_session(wb, store, cutoff, progress)


@dataclass
class QuestionReview:
    slug: str
    title: str
    submission: Submission | None  # the official one
    submissions: int  # how many hidden submissions in the session (before or after the cutoff)
    first_activity: float | None  # seconds after the session's start
    last_submission: float | None
    points_earned: float
    points_possible: float
    result: SuiteResult | None
    levels: list[int] = field(default_factory=list)  # the question's levels
    levels_open: list[int] = field(default_factory=list)
    splits: dict[int, float] = field(default_factory=dict)  # level -> seconds into the session
    submit_times: list[float] = field(default_factory=list)  # seconds into the session
    kind: str = "kata"  # the question's kind
    part: dict | None = None  # what its kind's review holds of it (Kind.review), shown by the kind
    level_points: dict[int, float] = field(default_factory=dict)  # each of the question's levels: its points

    def part_json(self) -> dict | None:
        return kind_named(self.kind).review_json(self.part) if self.part is not None else None

    def part_lines(self) -> list[str]:
        return kind_named(self.kind).review_lines(self.part) if self.part is not None else []


@dataclass
class Review:
    session: Session
    questions: list[QuestionReview] = field(default_factory=list)
    live: Session | None = None  # a live session this review is not of (it opens later)
    project: Exam | None = None  # a project exam: the 200-600 score and the levels' timeline

    @property
    def scaled_score(self) -> int | None:
        return scaled_score(self.points_earned, self.points_possible) if self.project else None

    def timeline(self) -> list[dict]:
        """A project exam's minutes per level, against the minutes it is reported to take: a
        level's time runs from when it opened (the previous level passed) to when it passed, or
        to the end of the session for the level left open."""
        if self.project is None or not self.questions:
            return []
        q = self.questions[0]
        end = round(self.session.cutoff() - self.session.started_at, 1)
        rows, opened = [], 0.0
        for lv, budget in zip(q.levels, self.project.level_budgets, strict=False):
            passed = q.splits.get(lv)
            spent = None  # a level never opened took no time
            if lv in q.levels_open:
                spent = round(((passed if passed is not None else end) - opened) / 60, 1)
            rows.append({"level": lv, "minutes": spent, "passed": passed is not None, "budget": list(budget)})
            if passed is not None:
                opened = passed
        return rows

    @property
    def points_earned(self) -> float:
        return round(sum(q.points_earned for q in self.questions), 2)

    @property
    def points_possible(self) -> float:
        return sum(q.points_possible for q in self.questions)


def project_exam(wb: Workbook, s: Session) -> Exam | None:
    """The project exam (kata.catalog.Exam.project) the session is of, if it is one."""
    if s.kind != "exam" or s.name not in wb.exam_names():
        return None
    try:
        exam = wb.exam(s.name)
    except CatalogError:
        return None
    return exam if exam.project else None


def scaled_now(wb: Workbook, s: Session) -> int | None:
    """A project exam's 200-600 score from the submissions counted so far (None for other sessions)."""
    if project_exam(wb, s) is None:
        return None
    store = open_store(wb)
    earned = possible = 0.0
    for q in questions_of(wb, s):
        official = store.official_submission(s, q.kata)
        earned += official.points_earned if official else 0.0
        possible += _question_points(wb, q)[1]
    return scaled_score(earned, possible)


def _question_points(wb: Workbook, q: Question) -> tuple[str, float]:
    try:
        kata = wb.kata(q.kata)
    except CatalogError:
        return q.kata, 0.0
    fix = float(sum(lv.points for lv in kata.levels if lv.number in q.levels))
    return kata.title, kind_of(q).worth(fix)


def _level_points(wb: Workbook, q: Question) -> dict[int, float]:
    """Each of the question's levels: the points its hidden tests are worth."""
    try:
        kata = wb.kata(q.kata)
    except CatalogError:
        return {}
    return {lv.number: float(lv.points) for lv in kata.levels if lv.number in q.levels}


def review(wb: Workbook, session_id: int | None) -> Review:
    from kata.grading import SuiteResult

    store = open_store(wb)
    t = now()
    if session_id is None:
        session = store.last_ended_session(t)
        if session is None:
            live = store.live_session(t)
            if live is not None:
                raise StoreError(
                    f"session {live.id} is still live ({_clock(live.remaining(t))} left): "
                    "review opens after its deadline or `kata finish`"
                )
            raise StoreError("no ended session to review: `kata start` one first")
    else:
        session = store.session(session_id, t)
        if session.is_live(t):
            raise StoreError(
                f"session {session.id} is still live: review opens after its deadline or `kata finish`"
            )
    live = store.live_session(t)
    rev = Review(session, live=live if live is not None and live.id != session.id else None,
                 project=project_exam(wb, session))
    for q in questions_of(wb, session):
        title, possible = _question_points(wb, q)
        subs = store.submissions(session_id=session.id, slug=q.kata, suite=None)
        hidden = [s for s in subs if s.suite == "hidden"]
        official = store.official_submission(session, q.kata)
        result = SuiteResult.from_json(official.result) if official else None
        passed = {lv: at for lv, at in store.passed_levels(session.id, q.kata).items()
                  if at <= session.cutoff()}
        rev.questions.append(QuestionReview(
            slug=q.kata, title=title, submission=official, submissions=len(hidden),
            # every time here rounded alike (to 0.1 s), so one submission shows one clock time
            first_activity=round(subs[0].submitted_at - session.started_at, 1) if subs else None,
            last_submission=round(official.submitted_at - session.started_at, 1) if official else None,
            points_earned=official.points_earned if official else 0.0,
            points_possible=possible,
            result=result,
            levels=list(q.levels),
            levels_open=open_levels(q, passed),
            splits={lv: round(at - session.started_at, 1) for lv, at in sorted(passed.items())},
            submit_times=[round(s.submitted_at - session.started_at, 1) for s in hidden],
            kind=q.kind, part=kind_of(q).review(wb, store, session, q),
            level_points=_level_points(wb, q),
        ))
    return rev


@dataclass
class HistoryRow:
    session: Session
    points_earned: float
    points_possible: float
    splits: dict[str, dict[int, float]]  # slug -> level -> seconds into the session it passed
    auto_submitted: list[str] = field(default_factory=list)  # slugs whose counted score is an auto-submission
    # slug -> the suite version its counted score came from, where that is not today's suite
    other_suite: dict[str, str | None] = field(default_factory=dict)


def _suite_version(kata: Kata) -> str:
    from kata.suites import suite_version

    return suite_version(kata)


class _Versions(dict):
    """slug -> today's suite version, computed once per command (None: the kata is gone)."""

    def __init__(self, wb: Workbook):
        super().__init__()
        self.wb = wb

    def __missing__(self, slug: str) -> str | None:
        try:
            kata = self.wb.kata(slug)
            value = _suite_version(kata) if kata.grader.is_dir() else None
        except CatalogError:
            value = None
        self[slug] = value
        return value


def history(wb: Workbook) -> list[HistoryRow]:
    """Every session with its official score and the split times of the levels passed."""
    store = open_store(wb)
    today = _Versions(wb)
    rows = []
    for s in store.sessions(now()):
        earned = possible = 0.0
        splits: dict[str, dict[int, float]] = {}
        auto: list[str] = []
        other: dict[str, str | None] = {}
        for q in questions_of(wb, s):
            official = store.official_submission(s, q.kata)
            possible += _question_points(wb, q)[1]
            if official:
                earned += official.points_earned
                if official.auto:
                    auto.append(q.kata)
                if today[q.kata] is not None and official.suite_version != today[q.kata]:
                    other[q.kata] = official.suite_version
            passed = store.passed_levels(s.id, q.kata)
            if passed:
                splits[q.kata] = {lv: round(at - s.started_at, 1) for lv, at in sorted(passed.items())
                                  if at <= s.cutoff()}
        rows.append(HistoryRow(s, round(earned, 2), possible, splits, auto, other))
    return rows


@dataclass
class QuestionStatus:
    slug: str
    title: str
    file: Path
    exists: bool
    visible: tuple[int, int] | None  # (passed, total) of the last check; None: none since a level opened
    hidden: tuple[float, float] | None  # (points earned, possible over the question's levels)
    levels: list[int] = field(default_factory=list)
    levels_open: list[int] = field(default_factory=list)
    minutes: float = 0
    note: object = None  # what the question's kind says of it (Kind.status_note), or None
    note_label: str = "note"  # what the kind calls that note ("pin")
    kind: str = "kata"


def status(wb: Workbook) -> tuple[Session | None, float, list[QuestionStatus]]:
    store = open_store(wb)
    t = now()
    session = store.live_session(t)
    if session is None:
        return None, 0.0, []
    rows = []
    for q in questions_of(wb, session):
        kata = wb.kata(q.kata)
        checks = store.submissions(session_id=session.id, slug=q.kata, suite="visible")
        passed = store.passed_levels(session.id, q.kata)
        visible = None
        if checks:
            tests = checks[-1].result.get("tests", [])
            checked = {x.get("task_id") for x in tests}
            if all(lv in checked for lv in open_levels(q, passed)):  # else a level opened since
                visible = (sum(x["status"] == PASS for x in tests), len(tests))
        possible = _question_points(wb, q)[1]
        best = store.official_submission(session, q.kata)  # the score that counts: the best so far
        hidden = (best.points_earned, possible) if best else None
        path = wb.workspace_file(kata)
        rows.append(QuestionStatus(q.kata, kata.title, path, path.is_file(), visible, hidden,
                                   list(q.levels), open_levels(q, passed), q.minutes,
                                   kind_of(q).status_note(best), kind_of(q).label, q.kind))
    return session, session.remaining(t), rows


# --- progress across sessions ----------------------------------------------------


@dataclass
class KataProgress:
    kata: Kata
    per_session: list[tuple[int, float]]  # (session id, its official points for this kata), in order
    best: float  # best points earned in any hidden submission (practice included)
    fastest: dict[int, float]  # level -> fewest seconds into a session it took to pass
    other_suite: list[int] = field(default_factory=list)  # sessions whose score came from another suite
    # sessions whose question's kind scores it otherwise than the kata (Kind.counts_toward_best):
    # {session, kind, note (Kind.status_note), points_earned, points_possible}
    beside: list[dict] = field(default_factory=list)
    best_graded: float = 0.0  # the most points any hidden submission was graded on (its levels')


def progress(wb: Workbook) -> list[KataProgress]:
    """Per kata: the official score of every session that held it, the best score ever, and the
    fastest time each level was passed."""
    store = open_store(wb)
    best = best_scores(wb)
    sessions_ = store.sessions(now())
    today = _Versions(wb)
    rows = []
    for kata in wb.katas():
        per_session: list[tuple[int, float]] = []
        fastest: dict[int, float] = {}
        other: list[int] = []
        beside: list[dict] = []
        for s in sessions_:
            if kata.slug not in s.katas:
                continue
            official = store.official_submission(s, kata.slug)
            q = question_for(wb, s, kata.slug)
            kind = kind_of(q) if q is not None else KINDS["kata"]
            if q is not None and not kind.counts_toward_best:
                beside.append({"session": s.id, "kind": kind.name, "note": kind.status_note(official),
                               "points_earned": official.points_earned if official else 0.0,
                               "points_possible": official.points_possible if official
                               else _question_points(wb, q)[1]})
                continue
            per_session.append((s.id, official.points_earned if official else 0.0))
            if official and today[kata.slug] is not None and official.suite_version != today[kata.slug]:
                other.append(s.id)
            for lv, at in store.passed_levels(s.id, kata.slug).items():
                took = at - s.started_at
                if at <= s.cutoff() and (lv not in fastest or took < fastest[lv]):
                    fastest[lv] = round(took, 1)
        earned, graded = best.get(kata.slug, (0.0, 0))
        rows.append(KataProgress(kata, per_session, earned, dict(sorted(fastest.items())), other, beside,
                                 float(graded)))
    return rows


# --- regrading on today's suite (kata.suites) ---------------------------------


@dataclass
class Regraded:
    slug: str
    before: Submission  # the row regraded
    after: Submission  # the new row, regrade_of = before.id

    @property
    def changed(self) -> bool:
        return self.before.points_earned != self.after.points_earned


def regrade_session(wb: Workbook, session_id: int, progress=None) -> list[Regraded]:
    """Grade every current hidden submission of a finished session again on today's suite; a
    submission already graded on today's suite is left alone. Refused while the session is live."""
    from kata import grading

    store = open_store(wb)
    session = store.session(session_id, now())
    if session.is_live(now()):
        raise CatalogError(f"session {session_id} is still live: regrade it after `kata finish`")
    done = []
    for sub in store.submissions(session_id=session_id):
        try:
            kata = wb.kata(sub.slug)
        except CatalogError:
            continue  # a kata no longer in this workbook
        version = _suite_version(kata)
        if sub.suite_version == version:
            continue
        levels = sorted({t["task_id"] for t in sub.result.get("tests", []) if t.get("task_id")}) or None
        result = grading.grade(kata, wb.workspace_file(kata), "hidden", code=sub.code, levels=levels,
                               on_progress=progress(kata) if progress else None)
        q = question_for(wb, session, sub.slug)
        extra = None
        if q is not None:  # judged again as it was: a final answer cut as settling cut it, a
            if sub.auto:   # hunt's pin on the test file graded then
                _final_cut(q, kata, result)
            extra = kind_of(q).extra_recorded(sub.result)
        new, _ = _record(store, session, q, kata, sub.code, result, sub.submitted_at, extra=extra,
                         auto=sub.auto, regrade_of=sub.id)
        done.append(Regraded(sub.slug, sub, new))
    return done


# --- exam series: assessments taken side by side --------------------------------


def series_name(exam_name: str) -> str:
    """The series an exam belongs to: its name without a trailing `-<number>`.

    Example: 'llm-infra-oa-3' -> 'llm-infra-oa'; 'llm-infra-oa' -> 'llm-infra-oa'; 'warm-up' -> 'warm-up'.
    """
    head, _, tail = exam_name.rpartition("-")
    return head if head and tail.isdigit() else exam_name


def exam_series(exams: list[Exam]) -> list[list[Exam]]:
    """Exams grouped by series, in the order each series first appears; inside a series the base
    exam first, then by number (so '-10' comes after '-3'). A lone exam is a series of one."""
    groups: dict[str, list[Exam]] = {}
    for e in exams:
        groups.setdefault(series_name(e.name), []).append(e)

    def number(e: Exam) -> int:
        return 0 if series_name(e.name) == e.name else int(e.name.rpartition("-")[2])

    return [sorted(members, key=number) for members in groups.values()]


@dataclass
class ExamBest:
    exam: Exam
    points_possible: float
    best: float | None  # the best official score of a session of this exam; None if never taken
    sessions: int


def assessment_progress(wb: Workbook) -> list[list[ExamBest]]:
    """For every series of more than one exam (the mock assessments): each exam's best session
    score, so that attempts at different mocks can be compared side by side."""
    by_exam: dict[str, list[float]] = {}
    for row in history(wb):
        if row.session.kind == "exam":
            by_exam.setdefault(row.session.name, []).append(row.points_earned)
    out: list[list[ExamBest]] = []
    for members in exam_series(wb.exams()):
        if len(members) < 2:
            continue
        series: list[ExamBest] = []
        for e in members:
            scores = by_exam.get(e.name, [])
            possible = sum(_question_points(wb, q)[1] for q in e.questions)
            series.append(ExamBest(e, possible, max(scores) if scores else None, len(scores)))
        out.append(series)
    return out


def _clock(seconds: float) -> str:
    from kata.views import clock

    return clock(seconds)
