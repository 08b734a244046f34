"""The run store's tables, the same on SQLite and PostgreSQL, and the version that names them.

A store records the version of the tables it was made with; a store made by a newer llmjury is
refused rather than written in a shape it does not expect. Rows that serve one run (claims, the
xdist hand-off, unanswered outcomes, tallies) go when the run ends; samples and spend stay.
"""

from __future__ import annotations

import secrets

from llmjury.errors import ConfigError
from llmjury.store.database import Database
from llmjury.store.location import StoreLocation

SCHEMA_VERSION = 1
_TABLES = [
    """CREATE TABLE IF NOT EXISTS llmjury_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS samples (key TEXT PRIMARY KEY, provider TEXT NOT NULL, task TEXT NOT NULL,
        request TEXT NOT NULL, sample TEXT NOT NULL, run_id TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS unanswered (key TEXT NOT NULL, run_id TEXT NOT NULL, sample TEXT, error TEXT,
        PRIMARY KEY (key, run_id))""",
    # A claim is a lease: its owner's heartbeat moves `expires` on, by the database's clock; `started`
    # marks a call under way (a dead owner's started calls may have been paid).
    """CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL,
        expires DOUBLE PRECISION NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, taken_from TEXT,
        started INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS plans (run_id TEXT NOT NULL, worker INTEGER NOT NULL, pid INTEGER NOT NULL,
        PRIMARY KEY (run_id, worker))""",
    """CREATE TABLE IF NOT EXISTS planned (run_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (run_id, key))""",
    """CREATE TABLE IF NOT EXISTS outcomes (run_id TEXT NOT NULL, key TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (run_id, key))""",
    """CREATE TABLE IF NOT EXISTS tallies (run_group TEXT NOT NULL, worker TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (run_group, worker))""",
    """CREATE TABLE IF NOT EXISTS spend (run_group TEXT PRIMARY KEY, usd DOUBLE PRECISION NOT NULL)""",
    # The Batch API lane (llmjury.running.batch_lane): requests waiting for, or inside, a provider's
    # batch, and the batches themselves; they outlive the run that queued them.
    """CREATE TABLE IF NOT EXISTS batch_items (key TEXT PRIMARY KEY, provider TEXT NOT NULL, lane TEXT NOT NULL,
        task TEXT NOT NULL, request TEXT NOT NULL, sample_index INTEGER NOT NULL, est_tokens INTEGER NOT NULL,
        reserved_usd DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, job TEXT, attempts INTEGER NOT NULL,
        error TEXT, run_id TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS batch_jobs (job TEXT PRIMARY KEY, provider TEXT NOT NULL, remote_id TEXT,
        state TEXT NOT NULL, items INTEGER NOT NULL, holder TEXT, expires DOUBLE PRECISION NOT NULL,
        created DOUBLE PRECISION NOT NULL)""",
]
#: Serialises schema creation on PostgreSQL, whose concurrent `CREATE TABLE IF NOT EXISTS` can fail.
_LOCK_ID = 0x6C6C6D6A757279


def ensure_schema(db: Database) -> None:
    """Create the tables a store lacks and check its version, in one write transaction: raise a
    ConfigError for a store of a version this llmjury does not know, or that refuses the tables
    (a user without the right to create them), naming the store and the cause."""
    try:
        _ensure(db)
    except db.errors as exc:
        raise ConfigError(f"{db}: cannot make or read its tables ({str(exc).strip().splitlines()[0]})") from None


def _ensure(db: Database) -> None:
    db.make_schema()
    db.begin()
    try:
        if db.dialect == "postgresql":
            db.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_ID,))
        _drop_old_claims(db)
        for statement in _TABLES:
            db.execute(statement)
        db.execute("INSERT INTO llmjury_meta VALUES ('schema_version', ?) ON CONFLICT (name) DO NOTHING",
                   (str(SCHEMA_VERSION),))
        db.execute("INSERT INTO llmjury_meta VALUES ('store_id', ?) ON CONFLICT (name) DO NOTHING",
                   (secrets.token_hex(16),))
        (found,) = db.execute("SELECT value FROM llmjury_meta WHERE name = 'schema_version'")[0]
        if int(found) != SCHEMA_VERSION:
            raise ConfigError(f"{db}: its tables are version {found}, this llmjury writes version "
                              f"{SCHEMA_VERSION}; use the llmjury that made it, or another store")
        db.commit()
    except BaseException:
        db.rollback()
        raise


def store_id(db: Database) -> str:
    """The store's own id, made with its tables: the same from any connection, host name or
    fail-over, and no other store's (answers it could not take are kept for it alone,
    llmjury.running.unsaved)."""
    return str(db.execute("SELECT value FROM llmjury_meta WHERE name = 'store_id'")[0][0])


def check_store(location: StoreLocation) -> None:
    """At start-up: the store answers and its tables are of a version this llmjury writes (a
    ConfigError names the cause). A SQLite file that does not exist yet is made when first used."""
    if location.kind == "sqlite" and not location.path.exists():
        return
    db = location.open()
    try:
        ensure_schema(db)
    finally:
        db.close()


def _drop_old_claims(db: Database) -> None:
    """Claims serve one run; a cache from before leases (no `started`) drops its old table."""
    if db.dialect == "sqlite":
        columns = {row[1] for row in db.execute("PRAGMA table_info(claims)")}
    else:
        columns = {row[0] for row in db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'claims' "
            "AND table_schema = current_schema()")}
    if columns and "started" not in columns:
        db.execute("DROP TABLE claims")
