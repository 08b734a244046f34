"""The batching SQLite writer: a write's future completes once committed, one bad write fails alone."""

from __future__ import annotations

import sqlite3

import pytest

from llmjury.writer import BatchWriter


def test_a_committed_write_is_visible_to_another_connection_and_a_bad_one_fails_alone(tmp_path):
    path = tmp_path / "w.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    writer = BatchWriter(path, "test-writer")
    bad = writer.submit(lambda db: db.execute("INSERT INTO missing VALUES (1)"))
    good = writer.submit(lambda db: db.execute("INSERT INTO t VALUES ('a')") and "done")
    assert good.result() == "done"
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        bad.result()
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT k FROM t").fetchall() == [("a",)]
    queued = [writer.submit(lambda db, i=i: db.execute("INSERT INTO t VALUES (?)", (f"q{i}",))) for i in range(50)]
    writer.close()  # commits what is queued before it stops
    assert all(f.done() and f.exception() is None for f in queued)
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT COUNT(*) FROM t").fetchone() == (51,)
