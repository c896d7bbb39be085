"""The deadline: the last version saved before it auto-submitted, by the first command after it
(`settle`) or by `kata finish`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import kata.session.base as base
from kata.catalog import CatalogError, Kata, Question, Workbook
from kata.kinds import kind_of
from kata.session.base import open_store
from kata.session.grade import _final_cut, _record, _record_levels
from kata.session.levels import questions_of
from kata.store import DeadlineSnapshot, Session, Store, StoreError, Submission


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
    t = base.now()
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
        store.finish_settlement(s.id, base.now())
        keeper.stop(wb.kata_dir, s.id)
    return done


# (order, saved_at, code): the candidate with the greatest order is the version that counts
_Version = tuple[float, float, str]
_BEFORE_START = "its file is dated before the session started"
EVIDENCE_FILE = "evidence"  # a deadline_snapshots row: what a question's auto-submission went by


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
        if chosen is from_file and found == "mtime" and at_deadline:
            from kata import keeper

            gap = keeper.stopped_early(wb.kata_dir, s, kept)
            if gap is not None:  # kata cannot vouch for that date: say so, here and in the review
                found = f"late, by modification time: {gap}"
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
        evidence = _evidence(s, chosen, from_file, found) if explain else ""
        if evidence:  # kept for the review: what the auto-submission went by
            store.add_deadline_snapshots(s.id, [(q.kata, EVIDENCE_FILE, evidence, None)], base.now())
        done.append(AutoSubmitted(s, kata, saved_at, sub, evidence=evidence))
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
    if chosen is from_file and found.startswith("late, by modification time"):
        return f"{found}; graded the file as dated {at}, a date kata cannot vouch for"
    if chosen is from_file:
        return f"graded by its modification time, {at} (the deadline keeper did not run)"
    why = "the deadline keeper did not run" if found == "mtime" else found
    return f"{why}; the last version kata saw is from {at}: graded that"




def finish(wb: Workbook, progress=None) -> tuple[Session, list[AutoSubmitted]]:
    """End the live session now, then grade what the deadline would have: each question's last
    saved version, unless it was submitted already or is the untouched stub (see settle). A
    learner who finishes early loses no work they saved but did not submit."""
    import dataclasses

    store = open_store(wb)
    session = store.live_session(base.now())
    if session is None:
        raise StoreError("no live session to finish: `kata history` lists past sessions")
    ended = store.finish_session(session.id, base.now())
    if ended.ended_by == "deadline":  # it ran out meanwhile: the deadline's settle grades it
        return ended, settle(wb, progress)
    from kata import keeper

    keeper.stop(wb.kata_dir, session.id)  # ended before its deadline: nothing left to keep
    cutoff = dataclasses.replace(ended, deadline=ended.cutoff())
    return ended, _settle_session(wb, store, cutoff, progress)
