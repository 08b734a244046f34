"""The PostgreSQL backend (psycopg 3): one store for many machines, CI shards and teammates.

The connection string comes from the environment (`LLMJURY_STORE_DSN`, else libpq's own `PG*`
variables), never from a file the project keeps, so no password lands in an ini or a report.
psycopg is an optional extra (`pip install 'llmjury[postgres]'`): a plain install never imports it.
A connection lost outside a transaction is opened again and the statement run again, for up to the
store's outage limit (llmjury.store.outage); inside one, the transaction's owner runs it again whole.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from llmjury.errors import ConfigError
from llmjury.redact import scrub
from llmjury.store.database import Row
from llmjury.store.notices import CHANNEL, payloads
from llmjury.store.outage import Outage, ride_out

DSN_VARIABLE = "LLMJURY_STORE_DSN"
T = TypeVar("T")


class PostgresDatabase:
    dialect = "postgresql"
    now = "extract(epoch from clock_timestamp())::double precision"

    def __init__(self, dsn: str, outage: Outage | None = None) -> None:
        self.outage = outage or Outage()
        self.outage.check()  # a store this process gave up on: no new connection waits for it again
        try:
            import psycopg
        except ImportError:
            raise ConfigError("--llm-store postgres needs psycopg 3: pip install 'llmjury[postgres]'") from None
        self._psycopg, self._dsn = psycopg, dsn
        self._errors = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
        self.errors: tuple[type[Exception], ...] = (psycopg.Error,)
        self._in_transaction = False
        self._ended: list[str] = []  # keys whose claims the open transaction ended, announced at its commit
        try:
            self._db = self._connect()
        except psycopg.Error as exc:  # no server there, a wrong password, a string that is no connection string
            raise ConfigError(f"--llm-store postgres: cannot connect ({_without_secrets(_first_line(exc), dsn)}); "
                              f"the connection string comes from {DSN_VARIABLE} or libpq's PG* variables") from None
        self._where = f"PostgreSQL store (database {self._db.info.dbname} on {self._db.info.host}:{self._db.info.port})"

    def _connect(self) -> Any:
        # Autocommit, with transactions begun and committed by hand: a read never leaves one open.
        return self._psycopg.connect(self._dsn, autocommit=True)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        def run() -> list[Row]:
            cursor = self._db.execute(_placeholders(sql), params)
            return cursor.fetchall() if cursor.description is not None else []

        return run() if self._in_transaction else self._ride_out(run)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)

        def run() -> None:
            with self._db.cursor() as cursor:
                cursor.executemany(_placeholders(sql), rows)

        return run() if self._in_transaction else self._ride_out(run)

    def keys(self, keys: Sequence[str]) -> tuple[str, Any]:
        return "SELECT unnest(?::text[]) AS key", list(keys)

    def notify_ended(self, keys: Sequence[str]) -> None:
        """Announced with the transaction's commit, all its writes' keys together (a statement a
        write cost a put a third more)."""
        self._ended.extend(keys)
        if not self._in_transaction:
            self._announce()

    def _announce(self) -> None:
        ended, self._ended = self._ended, []
        for payload in payloads(ended):
            self.execute("SELECT pg_notify(?, ?)", (CHANNEL, payload))

    def begin(self) -> None:
        """Begin on a live connection: one lost since the last statement is opened again first."""
        self._ride_out(lambda: self._db.execute("BEGIN"))
        self._in_transaction = True

    def lost(self, exc: BaseException) -> bool:
        """Whether `exc` is the server gone (a restart, a dropped network): worth a new connection."""
        return isinstance(exc, self._psycopg.OperationalError) and (self._db.closed or bool(self._db.broken))

    def _reconnect(self) -> None:
        if self._db.closed or self._db.broken:
            self._db.close()
            self._db = self._connect()

    def _ride_out(self, work: Callable[[], T]) -> T:
        return ride_out(work, lost=self.lost, reconnect=self._reconnect, outage=self.outage, where=str(self))

    def make_schema(self) -> None:
        """Create the schema the connection's search_path names first, when it does not exist yet
        (`options=-csearch_path=NAME` keeps a team's runs apart: its tables are made on first use,
        in that schema, even where a later entry such as `public` exists)."""
        ((path,),) = self.execute("SELECT current_setting('search_path')")
        first = next((schema_name(entry) for entry in str(path).split(",")
                      if entry.strip() and entry.strip() != '"$user"'), None)
        if first is None:
            raise ConfigError(f"{self}: its search_path ({path}) names no schema to keep the store's tables in")
        if self.execute("SELECT 1 FROM pg_namespace WHERE nspname = ?", (first,)):
            return  # no CREATE asked for: a user without that right may use a schema made for it
        from psycopg import sql

        self._db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(first)))

    def commit(self) -> None:
        try:
            self._announce()
            self._db.execute("COMMIT")
        finally:
            self._in_transaction = False

    def rollback(self) -> None:
        self._in_transaction = False
        self._ended = []
        if not (self._db.closed or self._db.broken):  # a lost connection took its transaction with it
            self._db.execute("ROLLBACK")

    def retryable(self, exc: BaseException) -> bool:
        """A deadlock the server broke, or a lost connection: the whole transaction is run again (its
        `begin` waits for the server to come back). A COMMIT lost in flight may have been applied:
        every write of the store may be applied twice."""
        return isinstance(exc, self._errors) or self.lost(exc)

    def close(self) -> None:
        self._db.close()

    def __str__(self) -> str:
        return self._where


def schema_name(entry: str) -> str:
    """A search_path entry as PostgreSQL reads it: a quoted name as written, else lower-cased."""
    entry = entry.strip()
    if len(entry) > 1 and entry.startswith('"') and entry.endswith('"'):
        return entry[1:-1].replace('""', '"')
    return entry.lower()


@functools.lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    """The store's statements use `?`; psycopg binds `%s` (no statement has a literal `?` or `%`)."""
    return sql.replace("?", "%s")


#: Connection settings whose values a connection error may show as they are (they name the server).
SHOWN_SETTINGS = frozenset({"host", "hostaddr", "port", "dbname", "user", "application_name", "connect_timeout"})


def _without_secrets(message: str, dsn: str) -> str:
    """`message` with every value of the connection string masked but the server's name: libpq
    quotes what it could not read (`invalid percent-encoded token: "<the password>"`, `invalid sslmode
    value: "..."`). When the string cannot be read at all, every quoted part of it that is no setting's
    name is masked."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        settings = conninfo_to_dict(dsn)
        secret = {str(value) for key, value in settings.items() if key not in SHOWN_SETTINGS and value}
    except psycopg.Error:  # not a connection string: anything it quotes from it may be secret
        secret = {token for token in re.findall(r'"([^"]+)"', message)
                  if token in dsn and not re.search(rf"(^|[\s?&]){re.escape(token)}=", dsn)}
    return scrub(message, secret)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
