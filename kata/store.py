"""The store: one SQLite file under .kata/ holding sessions, submissions and hint reveals.

Tables (schema version in `PRAGMA user_version`, migrated forward on open):

    sessions     id, kind ('exam'|'kata'), name, katas (JSON list of slugs),
                 started_at, deadline, finished_at, status ('live'|'finished'|'abandoned'),
                 questions (v2: JSON list of {kata, levels, minutes, reveal}; NULL: every level of
                 each kata, all shown), ended_by (v2: 'finish'|'deadline'|'abandon'; a session
                 that ran out is reported as 'timed_out'), settled_at (v2: when the work saved
                 before the deadline was auto-submitted)
    submissions  id, session_id (NULL: practice outside a session), slug, submitted_at,
                 code (the file's full text), result (the full JSON result; sealed for the hidden suite, see seal()), points_earned,
                 points_possible, status, suite ('hidden': `kata submit`; 'visible': `kata check`,
                 kept so that every version of the learner's code is snapshotted), auto (v2: 1 for
                 the auto-submission of the last version saved before the deadline)
    hints        id, session_id, slug, hint_index, revealed_at
    level_events id, session_id, slug, level, event ('passed'), at, submission_id (v2: the first
                 submission in the session that passed every hidden test of a level: it opens
                 the next level of a progressive question, and gives the split times)

    v3: submissions.suite_version (the hash of the hidden suite and reference that graded it;
    NULL before v3), submissions.regrade_of (a regrade of an earlier submission on a later suite,
    kept beside it), sessions.seed (the seed a session's questions were drawn with)

    v4: deadline_snapshots  id, session_id, slug, file ('code': the question's workspace file;
                 'test': a hunt's pin file), code (its text at the deadline; NULL: missing or not
                 UTF-8 then), mtime (its modification time then), taken_at: what the deadline
                 keeper (kata/keeper.py) saw at the deadline; settling grades it

Every write is one `BEGIN IMMEDIATE` transaction with a busy timeout, in WAL mode, so two `kata`
processes at once serialise instead of corrupting anything. Times are seconds since the epoch,
passed in by the caller (tests pass their own clock).

The deadline rule: a submission counts when it *starts* at or before the cutoff (the deadline, or
the moment `kata finish` ended the session if earlier); a session's official submission for a kata
is its best counted one (most points; the later of equals).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import socket
import sqlite3
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from kata.results import ERROR

SCHEMA_VERSION = 6

# version -> statements that bring the previous version to it
MIGRATIONS: dict[int, list] = {  # a statement, or a function of the connection
    1: [
        """CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('exam', 'kata')),
            name TEXT NOT NULL,
            katas TEXT NOT NULL,
            started_at REAL NOT NULL,
            deadline REAL NOT NULL,
            finished_at REAL,
            status TEXT NOT NULL CHECK (status IN ('live', 'finished', 'abandoned'))
        )""",
        """CREATE TABLE submissions (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions(id),
            slug TEXT NOT NULL,
            submitted_at REAL NOT NULL,
            code TEXT NOT NULL,
            result TEXT NOT NULL,
            points_earned REAL NOT NULL,
            points_possible REAL NOT NULL,
            status TEXT NOT NULL,
            suite TEXT NOT NULL CHECK (suite IN ('hidden', 'visible'))
        )""",
        "CREATE INDEX submissions_by_session ON submissions (session_id, slug, submitted_at)",
        """CREATE TABLE hints (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions(id),
            slug TEXT NOT NULL,
            hint_index INTEGER NOT NULL,
            revealed_at REAL NOT NULL
        )""",
    ],
    2: [
        "ALTER TABLE sessions ADD COLUMN questions TEXT",
        "ALTER TABLE sessions ADD COLUMN ended_by TEXT",
        "ALTER TABLE sessions ADD COLUMN settled_at REAL",
        "ALTER TABLE submissions ADD COLUMN auto INTEGER NOT NULL DEFAULT 0",
        "UPDATE sessions SET ended_by = 'deadline' WHERE status = 'finished' AND finished_at = deadline",
        "UPDATE sessions SET ended_by = 'finish' WHERE status = 'finished' AND ended_by IS NULL",
        "UPDATE sessions SET ended_by = 'abandon' WHERE status = 'abandoned'",
        """CREATE TABLE level_events (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            slug TEXT NOT NULL,
            level INTEGER NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('passed')),
            at REAL NOT NULL,
            submission_id INTEGER REFERENCES submissions(id),
            UNIQUE (session_id, slug, level, event)
        )""",
    ],
    # v3: every column this release needs (a store already at v3 gets the v4 table below)
    3: [
        "ALTER TABLE submissions ADD COLUMN suite_version TEXT",
        "ALTER TABLE submissions ADD COLUMN regrade_of INTEGER REFERENCES submissions(id)",
        "ALTER TABLE sessions ADD COLUMN seed INTEGER",
        # who is auto-submitting a session that ran out ("pid@host@epoch"): a settle is a
        # transaction (settled_at is set once its results are recorded); a claim whose process
        # is gone, or older than SETTLE_LEASE, is taken over by the next command
        "ALTER TABLE sessions ADD COLUMN settle_claim TEXT",
    ],
    # v4: what the deadline keeper (kata/keeper.py) saw of each workspace file at the deadline
    4: [
        """CREATE TABLE deadline_snapshots (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            slug TEXT NOT NULL,
            file TEXT NOT NULL CHECK (file IN ('code', 'test')),
            code TEXT,
            mtime REAL,
            taken_at REAL NOT NULL,
            UNIQUE (session_id, slug, file)
        )""",
    ],
    # v5: a question kind's own part of a result is `part` ({"kind": name, ...}), read by that kind
    # alone; results stored before kept the one kind that had a part under its own name. And a
    # kind names the files the deadline keeper reads (any role, not only 'code' and 'test').
    5: [
        lambda db: _results_with_parts(db),
        """CREATE TABLE deadline_snapshots_v5 (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            slug TEXT NOT NULL,
            file TEXT NOT NULL,
            code TEXT,
            mtime REAL,
            taken_at REAL NOT NULL,
            UNIQUE (session_id, slug, file)
        )""",
        "INSERT INTO deadline_snapshots_v5 SELECT * FROM deadline_snapshots",
        "DROP TABLE deadline_snapshots",
        "ALTER TABLE deadline_snapshots_v5 RENAME TO deadline_snapshots",
    ],
    # v6: each submission row carries a keyed digest of its fields (see row_digest), so an edit made
    # outside kata (a score raised by hand) is named by `kata doctor`, not read as a clean record
    6: [
        lambda db: _sign_rows(db),
    ],
}

LEGACY_PART = "hunt"  # where a result of schema 4 or before kept its kind's part (that kind's name)


# --- keyed digests of submission rows ---------------------------------------------------------
# The key lives beside the store (store.key, readable by its owner only). It does not stop a
# learner who reads this file and recomputes a digest: it makes an edited row look edited.

KEY_FILE = "store.key"
_DIGESTED = ("id", "session_id", "slug", "submitted_at", "code", "result", "points_earned",
             "points_possible", "status", "suite", "auto", "suite_version", "regrade_of")
_SIGNING_KEY: list[bytes] = []  # the key of the store being migrated (its v6 step signs old rows)


def store_key(store_path: Path) -> bytes:
    """The store's key, made on first use (32 random bytes, hex, mode 0600)."""
    path = Path(store_path).with_name(KEY_FILE)
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    key = os.urandom(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key.hex() + "\n")
    return key


def row_digest(key: bytes, row) -> str:
    """HMAC-SHA256 of a submission row's fields (their values as stored)."""
    fields = json.dumps([row[name] for name in _DIGESTED], separators=(",", ":"))
    return hmac.new(key, fields.encode(), hashlib.sha256).hexdigest()


def _sign_rows(db) -> None:
    if "digest" not in {r[1] for r in db.execute("PRAGMA table_info(submissions)")}:
        db.execute("ALTER TABLE submissions ADD COLUMN digest TEXT")
    key = _SIGNING_KEY[0]
    for row in db.execute("SELECT * FROM submissions").fetchall():
        db.execute("UPDATE submissions SET digest = ? WHERE id = ?", (row_digest(key, row), row["id"]))


def _results_with_parts(db) -> None:
    """Schema 5: each stored result's `LEGACY_PART` field becomes `part`, {"kind": ..., ...}."""
    rows = db.execute("SELECT id, result FROM submissions").fetchall()
    for row_id, raw in rows:
        plain = unseal(raw)
        result = json.loads(plain)
        if LEGACY_PART not in result:
            continue
        old = result.pop(LEGACY_PART)
        result["part"] = {"kind": LEGACY_PART, **old} if isinstance(old, dict) else None
        text = json.dumps(result)
        db.execute("UPDATE submissions SET result = ? WHERE id = ?",
                   (seal(text) if raw != plain else text, row_id))


# rows that no later regrade replaced (a regrade points at what it replaced through regrade_of)
_CURRENT = "id NOT IN (SELECT regrade_of FROM submissions WHERE regrade_of IS NOT NULL)"

SETTLE_LEASE = 15 * 60.0  # seconds after which any settle claim is taken over


def _claim_alive(claim: str | None, now: float) -> bool:
    """Whether the process that wrote `claim` ("pid@host@epoch") may still be settling."""
    if not claim:
        return False
    try:
        pid_text, host, at_text = claim.split("@")
        pid, at = int(pid_text), float(at_text)
    except ValueError:
        return False
    if now - at > SETTLE_LEASE:
        return False
    if host != socket.gethostname():
        return True  # another machine's process: trust the lease
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StoreError(Exception):
    """A state problem the user can act on (a live session in the way, no such session...)."""


@dataclass(frozen=True, slots=True)
class Session:
    id: int
    kind: str
    name: str
    katas: tuple[str, ...]
    started_at: float
    deadline: float
    finished_at: float | None
    stored_status: str  # 'live' | 'finished' | 'abandoned', as in the table
    questions: tuple[dict, ...] | None = None  # {kata, levels, minutes, reveal}; None: v1 session
    ended_by: str | None = None  # 'finish' | 'deadline' | 'abandon'
    seed: int | None = None  # what its hunts were drawn with (v3)

    @property
    def status(self) -> str:
        """live | finished | timed_out | abandoned."""
        if self.stored_status == "finished" and self.ended_by == "deadline":
            return "timed_out"
        return self.stored_status

    def is_live(self, now: float) -> bool:
        return self.stored_status == "live" and now < self.deadline

    def cutoff(self) -> float:
        """Submissions at or before this moment count."""
        if self.finished_at is not None:
            return min(self.deadline, self.finished_at)
        return self.deadline

    def remaining(self, now: float) -> float:
        return max(0.0, self.deadline - now) if self.is_live(now) else 0.0


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    session_id: int | None
    slug: str
    submitted_at: float
    code: str
    result: dict
    points_earned: float
    points_possible: float
    status: str
    suite: str
    auto: bool = False
    suite_version: str | None = None  # the hidden suite that graded it (kata.suites); None before v3
    regrade_of: int | None = None  # the submission this one regraded on a later suite


@dataclass(frozen=True, slots=True)
class DeadlineSnapshot:
    """One workspace file as the deadline keeper read it at a session's deadline."""

    session_id: int
    slug: str
    file: str  # the role its question's kind gives it: 'code' (the graded file), or another
    code: str | None  # None: missing, or not UTF-8 text, at the deadline
    mtime: float | None  # its modification time when read
    taken_at: float  # when the keeper read it


def still_live_message(session: Session, now: float) -> str:
    h, rest = divmod(max(0, round(session.deadline - now)), 3600)
    left = f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"  # as kata.views.clock
    return (f"session {session.id} ({session.name}) is still live with {left} left: "
            "run `kata finish` first, or `kata start --abandon`")


def _session(row) -> Session:
    questions = json.loads(row["questions"]) if row["questions"] else None
    return Session(row["id"], row["kind"], row["name"], tuple(json.loads(row["katas"])),
                   row["started_at"], row["deadline"], row["finished_at"], row["status"],
                   tuple(questions) if questions is not None else None, row["ended_by"], row["seed"])


def _submission(row) -> Submission:
    return Submission(row["id"], row["session_id"], row["slug"], row["submitted_at"], row["code"],
                      json.loads(unseal(row["result"])), row["points_earned"], row["points_possible"],
                      row["status"], row["suite"], bool(row["auto"]), row["suite_version"],
                      row["regrade_of"])


# --- sealed results -----------------------------------------------------------
# A hidden-suite result names hidden tests, their edge texts and tracebacks, which `kata submit`
# hides during a session. It is stored sealed (compressed, then XORed with a SHA-256 key stream
# under a random nonce), so no file under the state folder holds a hidden test's name in any
# plain encoding. The key is fixed in this file: this keeps the names from a glance, a grep or a
# copied .kata/ folder, not from someone who reads this code (they can read graders/ as well).

_SEAL_PREFIX = "sealed1:"
_SEAL_KEY = hashlib.sha256(b"kata: hidden results stay out of sight until review").digest()


def _stream(nonce: bytes, n: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(_SEAL_KEY + nonce + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:n])


def seal(text: str) -> str:
    """'{"tests": ...}' -> 'sealed1:<base64>' (see above)."""
    nonce = os.urandom(16)
    data = zlib.compress(text.encode("utf-8"))
    body = bytes(a ^ b for a, b in zip(data, _stream(nonce, len(data)), strict=True))
    return _SEAL_PREFIX + base64.b64encode(nonce + body).decode("ascii")


def unseal(text: str) -> str:
    """The inverse of seal; plain text (a store written before sealing) passes through."""
    if not text.startswith(_SEAL_PREFIX):
        return text
    raw = base64.b64decode(text[len(_SEAL_PREFIX):])
    nonce, body = raw[:16], raw[16:]
    return zlib.decompress(bytes(a ^ b for a, b in zip(body, _stream(nonce, len(body)), strict=True))).decode("utf-8")


_CHECKED: set[tuple] = set()  # (path, inode, size) of stores this process found intact


def _locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class Store:
    def __init__(self, path: Path, wait: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Two `kata` processes opening a new store at once race to switch it to WAL, and that
        # switch does not wait on the busy timeout: retry a lock for up to `wait` seconds.
        give_up = time.monotonic() + wait
        delay = 0.01
        while True:
            try:
                self._open()
                return
            except sqlite3.OperationalError as exc:
                self._close_quietly()
                if not _locked(exc):
                    raise self._unreadable(exc) from None
                if time.monotonic() > give_up:
                    raise StoreError(f"{self.path}: the store stayed locked for {wait:g}s by another "
                                     "kata process: let it finish, then try again") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
            except sqlite3.DatabaseError as exc:
                self._close_quietly()
                raise self._unreadable(exc) from None

    def _open(self) -> None:
        self.key = store_key(self.path)
        # one thread uses a connection at a time, but the command's end closes every thread's
        # (kata/session/base.py close_stores), and a finished thread's id can be handed to a new one
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self._migrate()
        self.db.execute("SELECT COUNT(*) FROM sessions").fetchone()  # a damaged file fails here
        st = self.path.stat()
        key = (str(self.path.resolve()), st.st_ino, st.st_size)
        if key not in _CHECKED:  # once per file state: a truncated file can open and read fine
            row = self.db.execute("PRAGMA quick_check(1)").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {row[0] if row else 'no answer'}")
            _CHECKED.add(key)

    def _close_quietly(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass
            self.db = None  # type: ignore[assignment]  # closed: None marks it (open_store reopens)

    def _unreadable(self, exc: Exception) -> StoreError:
        said = " ".join(str(exc).split())  # sqlite's own message may hold a newline
        return StoreError(f"{self.path}: the store is damaged ({said}): run `kata doctor` to move it "
                          "aside and rebuild what can be read (your workspace/ is never touched)")

    def close(self) -> None:
        """Close the connection (again: a no-op)."""
        if self.db is not None:
            self.db.close()
            self.db = None  # type: ignore[assignment]  # closed: None marks it (open_store reopens)

    @contextmanager
    def transaction(self):
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _migrate(self) -> None:
        _SIGNING_KEY[:] = [self.key]
        with self.transaction() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: written by a newer kata (schema {version} > {SCHEMA_VERSION}): upgrade kata"
                )
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[v]:
                    if callable(statement):
                        statement(db)
                    else:
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {v}")

    @property
    def schema_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    # --- sessions -----------------------------------------------------------

    def _expire(self, db, now: float) -> None:
        """A live session whose deadline passed becomes finished at its deadline."""
        db.execute(
            "UPDATE sessions SET status = 'finished', finished_at = deadline, ended_by = 'deadline' "
            "WHERE status = 'live' AND deadline <= ?",
            (now,),
        )

    def live_session(self, now: float) -> Session | None:
        with self.transaction() as db:
            self._expire(db, now)
            row = db.execute("SELECT * FROM sessions WHERE status = 'live' ORDER BY id DESC").fetchone()
        return _session(row) if row else None

    def start_session(self, kind: str, name: str, katas: list[str], minutes: float, now: float,
                      abandon: bool = False, questions: list[dict] | None = None,
                      seed: int | None = None) -> tuple[Session, Session | None]:
        """Open a session; refuse while another is live unless `abandon`. Returns (new, abandoned)."""
        with self.transaction() as db:
            self._expire(db, now)
            row = db.execute("SELECT * FROM sessions WHERE status = 'live'").fetchone()
            old = _session(row) if row else None
            if old is not None:
                if not abandon:
                    raise StoreError(still_live_message(old, now))
                db.execute("UPDATE sessions SET status = 'abandoned', finished_at = ?, "
                           "ended_by = 'abandon' WHERE id = ?", (now, old.id))
            cur = db.execute(
                "INSERT INTO sessions (kind, name, katas, started_at, deadline, status, questions, seed) "
                "VALUES (?, ?, ?, ?, ?, 'live', ?, ?)",
                (kind, name, json.dumps(list(katas)), now, now + minutes * 60,
                 json.dumps(questions) if questions is not None else None, seed),
            )
            new = _session(db.execute("SELECT * FROM sessions WHERE id = ?", (cur.lastrowid,)).fetchone())
        return new, old

    def finish_session(self, session_id: int, now: float) -> Session:
        with self.transaction() as db:
            db.execute(
                "UPDATE sessions SET status = 'finished', finished_at = MIN(deadline, ?), "
                "ended_by = CASE WHEN ? >= deadline THEN 'deadline' ELSE 'finish' END "
                "WHERE id = ? AND status = 'live'",
                (now, now, session_id),
            )
            row = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise StoreError(f"no session {session_id}: see `kata history`")
        return _session(row)

    def session(self, session_id: int, now: float) -> Session:
        with self.transaction() as db:
            self._expire(db, now)
            row = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise StoreError(f"no session {session_id}: see `kata history` for session numbers")
        return _session(row)

    def sessions(self, now: float) -> list[Session]:
        with self.transaction() as db:
            self._expire(db, now)
            rows = db.execute("SELECT * FROM sessions ORDER BY id").fetchall()
        return [_session(r) for r in rows]

    def last_ended_session(self, now: float) -> Session | None:
        with self.transaction() as db:
            self._expire(db, now)
            row = db.execute(
                "SELECT * FROM sessions WHERE status != 'live' ORDER BY id DESC"
            ).fetchone()
        return _session(row) if row else None

    # --- submissions --------------------------------------------------------

    def add_submission(self, session_id: int | None, slug: str, code: str, result: dict,
                       now: float, suite: str = "hidden", auto: bool = False,
                       points: tuple[float, float] | None = None,
                       suite_version: str | None = None, regrade_of: int | None = None) -> Submission:
        """`points`: (earned, possible) when the question's score is more than the result's
        (a hunt adds its pin to the fix); default the result's own."""
        earned, possible = points or (result.get("points_earned", 0.0), result.get("points_possible", 0))
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO submissions (session_id, slug, submitted_at, code, result, "
                "points_earned, points_possible, status, suite, auto, suite_version, regrade_of) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, slug, now, code,
                 seal(json.dumps(result)) if suite == "hidden" else json.dumps(result),
                 earned, possible, result.get("status", ERROR), suite, int(auto),
                 suite_version, regrade_of),
            )
            row = db.execute("SELECT * FROM submissions WHERE id = ?", (cur.lastrowid,)).fetchone()
            db.execute("UPDATE submissions SET digest = ? WHERE id = ?", (row_digest(self.key, row), row["id"]))
        return _submission(row)

    def edited_rows(self) -> list[str]:
        """The submission rows whose digest does not match their fields (edited outside kata), one
        phrase each: 'submission 7 (lru-kv-cache, session 3)'."""
        out = []
        for row in self.db.execute("SELECT * FROM submissions ORDER BY id").fetchall():
            if not hmac.compare_digest(row["digest"] or "", row_digest(self.key, row)):
                where = f"session {row['session_id']}" if row["session_id"] is not None else "no session"
                out.append(f"submission {row['id']} ({row['slug']}, {where})")
        return out

    def submissions(self, session_id: int | None = None, slug: str | None = None,
                    suite: str | None = "hidden", current: bool = True) -> list[Submission]:
        """Submissions oldest first. current=True: a regraded submission appears as its latest
        regrade (same time and code, today's suite); current=False: the originals only."""
        sql = "SELECT * FROM submissions WHERE " + (_CURRENT if current else "regrade_of IS NULL")
        args: list = []
        if suite is not None:
            sql += " AND suite = ?"
            args.append(suite)
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        if slug is not None:
            sql += " AND slug = ?"
            args.append(slug)
        rows = self.db.execute(sql + " ORDER BY submitted_at, id", args).fetchall()
        return [_submission(r) for r in rows]

    def official_submission(self, session: Session, slug: str) -> Submission | None:
        """The best submission for `slug` in `session` started at or before its cutoff (most
        points; of equals, the later)."""
        row = self.db.execute(
            "SELECT * FROM submissions WHERE session_id = ? AND slug = ? AND submitted_at <= ? "
            f"AND suite = 'hidden' AND {_CURRENT} ORDER BY points_earned DESC, submitted_at DESC, id DESC LIMIT 1",
            (session.id, slug, session.cutoff()),
        ).fetchone()
        return _submission(row) if row else None

    def counted_submissions(self, session: Session, slug: str) -> list[Submission]:
        return [s for s in self.submissions(session.id, slug) if s.submitted_at <= session.cutoff()]

    def snapshots(self, session_id: int | None, slug: str) -> list[Submission]:
        """Every saved version of the learner's file (checks, submissions, watch saves), oldest first."""
        return self.submissions(session_id=session_id, slug=slug, suite=None, current=False)

    # --- the deadline keeper's snapshots ------------------------------------------

    def add_deadline_snapshots(self, session_id: int, files: list[tuple[str, str, str | None, float | None]],
                               taken_at: float) -> None:
        """Record what each file (slug, 'code'|'test', text or None, mtime or None) held at the
        session's deadline; a file recorded already keeps its first record."""
        with self.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO deadline_snapshots (session_id, slug, file, code, mtime, taken_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, slug, file, code, mtime, taken_at) for slug, file, code, mtime in files],
            )

    def deadline_snapshots(self, session_id: int) -> dict[tuple[str, str], DeadlineSnapshot]:
        """(slug, file) -> what the deadline keeper saw of it; empty if the keeper never wrote."""
        rows = self.db.execute("SELECT * FROM deadline_snapshots WHERE session_id = ?",
                               (session_id,)).fetchall()
        return {(r["slug"], r["file"]): DeadlineSnapshot(r["session_id"], r["slug"], r["file"], r["code"],
                                                         r["mtime"], r["taken_at"]) for r in rows}

    # --- settling a session that ran out ---------------------------------------

    def unsettled_timed_out(self, now: float) -> list[Session]:
        with self.transaction() as db:
            self._expire(db, now)
            rows = db.execute("SELECT * FROM sessions WHERE ended_by = 'deadline' AND "
                              "settled_at IS NULL ORDER BY id").fetchall()
        return [_session(r) for r in rows]

    def unclaim_settlement(self, session_id: int) -> None:
        """Settling failed part-way (nothing was recorded for the question that failed): let a
        later command try again."""
        with self.transaction() as db:
            db.execute("UPDATE sessions SET settle_claim = NULL WHERE id = ?", (session_id,))

    def claim_settlement(self, session_id: int, now: float) -> bool:
        """Claim the auto-submission of a session that ran out; False if a live process holds
        it. A claim left by a process that died (SIGKILL, a closed terminal) is taken over."""
        me = f"{os.getpid()}@{socket.gethostname()}@{now}"
        with self.transaction() as db:
            row = db.execute("SELECT settle_claim, settled_at FROM sessions WHERE id = ?",
                             (session_id,)).fetchone()
            if row is None or row["settled_at"] is not None or _claim_alive(row["settle_claim"], now):
                return False
            db.execute("UPDATE sessions SET settle_claim = ? WHERE id = ?", (me, session_id))
        return True

    def finish_settlement(self, session_id: int, now: float) -> None:
        """Every auto-submission of the session is recorded: it is settled."""
        with self.transaction() as db:
            db.execute("UPDATE sessions SET settled_at = ?, settle_claim = NULL WHERE id = ?",
                       (now, session_id))

    def best_scores(self, counts=None) -> dict[str, tuple[float, float]]:
        """slug -> (best points earned, points possible) over every submission for which
        `counts(result)` holds (default: all; a question kind may say its scores are not the
        kata's: kata.kinds.counts_toward_best)."""
        rows = self.db.execute(
            "SELECT slug, points_earned, points_possible, result "
            f"FROM submissions WHERE suite = 'hidden' AND {_CURRENT}"
        ).fetchall()
        best: dict[str, tuple[float, float]] = {}
        for r in rows:  # results may be sealed (not JSON to SQLite): read them here
            if counts is not None and not counts(json.loads(unseal(r["result"]))):
                continue
            earned, possible = best.get(r["slug"], (r["points_earned"], r["points_possible"]))
            best[r["slug"]] = (max(earned, r["points_earned"]), max(possible, r["points_possible"]))
        return best

    # --- levels -------------------------------------------------------------

    def record_level_passed(self, session_id: int, slug: str, level: int, now: float,
                            submission_id: int | None) -> bool:
        """Record the first time `level` of `slug` passed in the session; False if it already had."""
        with self.transaction() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO level_events (session_id, slug, level, event, at, submission_id) "
                "VALUES (?, ?, ?, 'passed', ?, ?)",
                (session_id, slug, level, now, submission_id),
            )
        return cur.rowcount == 1

    def passed_levels(self, session_id: int, slug: str) -> dict[int, float]:
        """level -> when it first passed every hidden test, in the session."""
        rows = self.db.execute(
            "SELECT level, at FROM level_events WHERE session_id = ? AND slug = ? AND event = 'passed'",
            (session_id, slug),
        ).fetchall()
        return {r["level"]: r["at"] for r in rows}

    # --- hints --------------------------------------------------------------

    def reveal_hint(self, session_id: int | None, slug: str, hint_index: int, now: float) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO hints (session_id, slug, hint_index, revealed_at) VALUES (?, ?, ?, ?)",
                (session_id, slug, hint_index, now),
            )

    def revealed_hints(self, slug: str, session_id: int | None = None) -> list[int]:
        """Indices of the hints revealed for `slug` (in `session_id`, or anywhere if None)."""
        if session_id is None:
            rows = self.db.execute(
                "SELECT DISTINCT hint_index FROM hints WHERE slug = ? ORDER BY hint_index", (slug,)
            ).fetchall()
        else:
            rows = self.db.execute(
                "SELECT DISTINCT hint_index FROM hints WHERE slug = ? AND session_id IS ? "
                "ORDER BY hint_index",
                (slug, session_id),
            ).fetchall()
        return [r[0] for r in rows]


# --- repair -----------------------------------------------------------------


@dataclass
class Repair:
    healthy: bool
    moved_to: Path | None = None
    salvaged: dict | None = None  # table -> rows carried over into the new store
    lost: dict | None = None  # table -> rows that could not be read


def repair(path: Path, now: float) -> Repair:
    """`kata doctor`: if the store at `path` cannot be opened, move it (and its WAL files) aside to
    .kata/damaged-<UTC time>/ and rebuild a new store from every row that can still be read.
    Nothing outside the store's own files is touched (never workspace/)."""
    path = Path(path)
    if not path.exists():
        Store(path).close()
        return Repair(healthy=True)
    try:
        store = Store(path, wait=5.0)
        ok = store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        store.close()
        if ok:
            return Repair(healthy=True)
    except (StoreError, sqlite3.DatabaseError):
        pass
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    aside = path.parent / f"damaged-{stamp}"
    n = 1
    while aside.exists():
        n += 1
        aside = path.parent / f"damaged-{stamp}-{n}"
    aside.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        f = path.with_name(path.name + suffix)
        if f.exists():
            f.rename(aside / f.name)
    salvaged: dict[str, int] = {}
    lost: dict[str, int] = {}
    new = Store(path)
    try:
        old = sqlite3.connect(f"file:{aside / path.name}?mode=ro", uri=True, isolation_level=None)
        old.row_factory = sqlite3.Row
    except sqlite3.Error:
        new.close()
        return Repair(False, aside, salvaged, lost)
    tables = [r[0] for r in new.db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    for table in tables:  # every table of the schema, in creation order (sessions first)
        salvaged[table] = lost[table] = 0
        try:
            rows = old.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
        except sqlite3.Error:
            lost[table] = -1  # unknown: the table itself cannot be read
            continue
        for row in rows:
            data = dict(row)
            try:
                with new.transaction() as db:
                    cur = db.execute(f"INSERT INTO {table} ({', '.join(data)}) VALUES "
                                     f"({', '.join('?' * len(data))})", list(data.values()))
                    if table == "submissions" and "digest" not in data:  # a store from before digests
                        kept = db.execute("SELECT * FROM submissions WHERE rowid = ?", (cur.lastrowid,)).fetchone()
                        db.execute("UPDATE submissions SET digest = ? WHERE rowid = ?",
                                   (row_digest(new.key, kept), cur.lastrowid))
                salvaged[table] += 1
            except sqlite3.Error:
                lost[table] += 1
    old.close()
    new.close()
    return Repair(False, aside, salvaged, lost)
