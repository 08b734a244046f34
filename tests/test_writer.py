"""The batching store writer: a write's future completes once committed, one bad write fails alone,
on SQLite and on PostgreSQL."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from llmjury.store.sqlite import PAGE_CACHE_KIB, connect
from llmjury.store.writer import BatchWriter


def test_a_committed_write_is_visible_to_another_connection_and_a_bad_one_fails_alone(store_location):
    db = store_location.open()
    db.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    writer = BatchWriter(store_location.open, "test-writer")
    first = writer.submit(lambda db: [db.execute("INSERT INTO t VALUES ('first')"), "first"][1])
    bad = writer.submit(lambda db: db.execute("INSERT INTO missing VALUES (1)"))
    good = writer.submit(lambda db: [db.execute("INSERT INTO t VALUES ('a')"), "done"][1])
    assert good.result() == "done"
    assert first.result() == "first"
    with pytest.raises(Exception, match=r"no such table|does not exist"):
        bad.result()
    assert sorted(db.execute("SELECT k FROM t")) == [("a",), ("first",)]
    queued = [writer.submit(lambda db, i=i: db.execute("INSERT INTO t VALUES (?)", (f"q{i}",))) for i in range(50)]
    writer.close()  # commits what is queued before it stops
    assert all(f.done() and f.exception() is None for f in queued)
    assert db.execute("SELECT COUNT(*) FROM t") == [(52,)]
    db.close()


def test_a_write_whose_caller_gave_up_is_committed_and_the_writer_goes_on(tmp_path):
    """A run stopped early cancels calls that wait on their cache write: the write lands all the
    same, and the writer thread keeps serving the writes after it."""
    import threading

    from llmjury.store.sqlite import SqliteDatabase

    path = tmp_path / "w.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    writer = BatchWriter(lambda: SqliteDatabase(path), "test-writer")
    writing = threading.Event()
    given_up = threading.Event()

    def slow_write(db: SqliteDatabase) -> None:
        writing.set()
        given_up.wait(timeout=30)  # the caller cancels while its write runs
        db.execute("INSERT INTO t VALUES ('cancelled')")

    abandoned = writer.submit(slow_write)
    assert writing.wait(timeout=30)
    assert abandoned.cancel()
    given_up.set()
    after = writer.submit(lambda db: [db.execute("INSERT INTO t VALUES ('after')"), "done"][1])
    assert after.result(timeout=30) == "done"
    writer.close()
    with sqlite3.connect(path) as other:
        assert sorted(other.execute("SELECT k FROM t").fetchall()) == [("after",), ("cancelled",)]


def _open_at_the_barrier(folder: str, rounds: int, barrier, outcomes) -> None:
    for round_ in range(rounds):
        barrier.wait(timeout=60)
        try:
            connect(Path(folder) / f"new-{round_}.sqlite").close()
            outcomes.put("opened")
        except sqlite3.Error as exc:
            outcomes.put(repr(exc))


def test_a_connection_keeps_a_small_page_cache_not_sqlites_two_megabytes(tmp_path):
    db = connect(tmp_path / "store.sqlite")
    try:
        (kib,) = db.execute("PRAGMA cache_size").fetchone()
    finally:
        db.close()
    assert kib == -PAGE_CACHE_KIB  # negative: KiB, not pages
    assert PAGE_CACHE_KIB < 2000


def test_workers_opening_a_new_file_at_once_all_get_a_connection_in_wal_mode(tmp_path):
    """Two connections switching a new file to WAL at once deadlock, and SQLite fails one at once
    ("database is locked", no busy wait): xdist workers opening a fresh cache together did that.
    Six processes open forty new files, meeting at a barrier before each."""
    workers, rounds = 6, 40
    barrier, outcomes = multiprocessing.Barrier(workers), multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_open_at_the_barrier, args=(str(tmp_path), rounds, barrier, outcomes))
             for _ in range(workers)]
    for proc in procs:
        proc.start()
    failures = [o for o in (outcomes.get(timeout=60) for _ in range(workers * rounds)) if o != "opened"]
    for proc in procs:
        proc.join()
    assert failures == []
    for round_ in range(rounds):
        with sqlite3.connect(tmp_path / f"new-{round_}.sqlite") as db:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_answer_goes_ahead_of_the_writes_queued_before_it(tmp_path):
    """Claims and hand-offs queued in thousands must not hold back a paid answer's commit: an urgent
    write goes in the very next transaction."""
    import threading

    from llmjury.store.sqlite import SqliteDatabase

    order: list[str] = []
    writer = BatchWriter(lambda: SqliteDatabase(tmp_path / "w.sqlite"), "test-writer")
    running, go = threading.Event(), threading.Event()

    def first(db: object) -> None:
        running.set()
        go.wait(timeout=30)
        order.append("first")

    writer.submit(first)
    assert running.wait(timeout=30)
    others = [writer.submit(lambda db, i=i: order.append(f"claim {i}")) for i in range(200)]
    answer = writer.submit(lambda db: order.append("answer"), urgent=True)
    go.set()
    answer.result(timeout=30)
    assert all(f.result(timeout=30) is None for f in others)
    writer.close()
    assert order[:2] == ["first", "answer"] and len(order) == 202


def test_a_transaction_takes_no_new_write_past_its_time_so_an_answer_waits_at_most_one(tmp_path, monkeypatch):
    """With every transaction over its time after one write, an answer queued while a long batch is being
    written is committed right after the write under way, not after the whole batch."""
    from llmjury.store import writer as writer_module
    from llmjury.store.sqlite import SqliteDatabase

    monkeypatch.setattr(writer_module, "TRANSACTION_S", -1.0)
    order: list[str] = []
    writer = BatchWriter(lambda: SqliteDatabase(tmp_path / "w.sqlite"), "test-writer")
    answered: list[object] = []

    def claim(db: object, i: int) -> None:
        order.append(f"claim {i}")
        if i == 0:  # the answer arrives while the batch of claims is being written
            answered.append(writer.submit(lambda db: order.append("answer"), urgent=True))

    import threading

    running, go = threading.Event(), threading.Event()
    writer.submit(lambda db: [running.set(), go.wait(timeout=30)])
    assert running.wait(timeout=30)
    claims = [writer.submit(lambda db, i=i: claim(db, i)) for i in range(50)]
    go.set()
    assert all(f.result(timeout=30) is None for f in claims)
    writer.close()
    assert order[:3] == ["claim 0", "answer", "claim 1"] and len(order) == 51
