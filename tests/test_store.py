"""The store: the deadline rule, schema versioning, and two processes writing at once."""

from __future__ import annotations

import multiprocessing
import time
import sqlite3

import pytest

from kata.store import SCHEMA_VERSION, Store, StoreError

T0 = 1_800_000_000.0


def result(points):
    return {"status": "pass" if points == 10 else "fail", "points_earned": points, "points_possible": 10}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "kata.db")
    yield s
    s.close()


def test_official_submission_is_the_last_before_the_deadline(store):
    session, _ = store.start_session("kata", "k", ["k"], minutes=10, now=T0)
    store.add_submission(session.id, "k", "v1", result(2), now=T0 + 60)
    store.add_submission(session.id, "k", "v2", result(7), now=T0 + 600)  # exactly at the deadline
    store.add_submission(session.id, "k", "v3", result(10), now=T0 + 601)  # late
    session = store.session(session.id, now=T0 + 700)
    official = store.official_submission(session, "k")
    assert official.code == "v2" and official.points_earned == 7
    assert session.status == "timed_out"  # it ran out; `kata finish` would make it "finished"


def test_finish_moves_the_cutoff_earlier(store):
    session, _ = store.start_session("kata", "k", ["k"], minutes=10, now=T0)
    store.add_submission(session.id, "k", "v1", result(3), now=T0 + 60)
    store.finish_session(session.id, now=T0 + 120)
    store.add_submission(session.id, "k", "v2", result(10), now=T0 + 180)
    official = store.official_submission(store.session(session.id, T0 + 200), "k")
    assert official.code == "v1"
    assert store.session(session.id, T0 + 200).status == "finished"


def test_visible_checks_never_count_as_submissions(store):
    session, _ = store.start_session("kata", "k", ["k"], minutes=10, now=T0)
    store.add_submission(session.id, "k", "checked", result(10), now=T0 + 30, suite="visible")
    assert store.official_submission(session, "k") is None
    assert [s.code for s in store.submissions(session.id, "k", suite=None)] == ["checked"]


def test_a_live_session_blocks_another_unless_abandoned(store):
    first, _ = store.start_session("exam", "e", ["a", "b"], minutes=90, now=T0)
    with pytest.raises(StoreError, match="still live"):
        store.start_session("kata", "a", ["a"], minutes=5, now=T0 + 1)
    second, abandoned = store.start_session("kata", "a", ["a"], minutes=5, now=T0 + 2, abandon=True)
    assert abandoned.id == first.id
    assert store.session(first.id, T0 + 3).status == "abandoned"
    assert store.live_session(T0 + 3).id == second.id
    # after its deadline a session is no longer live, and a new one may start
    assert store.live_session(T0 + 2 + 5 * 60) is None


def test_schema_version_is_recorded_and_a_newer_one_refused(tmp_path):
    path = tmp_path / "kata.db"
    Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer kata"):
        Store(path)


def test_a_corrupt_file_is_a_clear_error(tmp_path):
    path = tmp_path / "kata.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="the store is damaged .*run `kata doctor`"):
        Store(path)


def _opener(path, start):
    while time.time() < start:
        pass
    s = Store(path)
    s.add_submission(None, "k", "code", result(1), now=T0)
    s.close()


def test_processes_opening_a_new_store_at_once_never_see_it_locked(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(3):
        path = tmp_path / f"kata-{round_}.db"
        start = time.time() + 1.5
        procs = [ctx.Process(target=_opener, args=(path, start)) for _ in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        assert len(Store(path).submissions(suite=None)) == 6


def _writer(path, worker, n):
    s = Store(path)
    for i in range(n):
        s.add_submission(None, f"k{worker}", f"code {worker}-{i}", result(i % 10), now=T0 + i)
        s.reveal_hint(None, f"k{worker}", i, now=T0 + i)
    s.close()


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "kata.db"
    Store(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    s = Store(path)
    assert len(s.submissions(suite=None)) == 300
    assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(s.revealed_hints("k0")) == 150
