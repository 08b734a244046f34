"""The few things the run store asks of a database, so one set of SQL serves SQLite and PostgreSQL.

Statements are written once, with `?` placeholders and `INSERT ... ON CONFLICT`, which both
databases speak; a backend supplies only what differs: its clock, how a list of keys becomes rows,
how a write transaction starts, and which failures are worth trying the transaction again for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

Row = tuple[Any, ...]


class Database(Protocol):
    """One connection to the run store's database; used by one thread at a time."""

    #: "sqlite" or "postgresql": named in messages and in `bench/store.py`.
    dialect: str
    #: An SQL expression for the database's clock, in seconds since the epoch: leases are timed by
    #: it, never by the clocks of the machines that share the store.
    now: str
    #: The driver's own errors (a statement the server refused), told apart from the program's.
    errors: tuple[type[Exception], ...]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement; its rows (none for a statement that returns none)."""
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        ...

    def keys(self, keys: Sequence[str]) -> tuple[str, Any]:
        """A subquery yielding one row (`key`) per key, and the parameter it binds."""
        ...

    def begin(self) -> None:
        """Start a write transaction (SQLite takes its write lock here, not at the first write)."""
        ...

    def notify_ended(self, keys: Sequence[str]) -> None:
        """Tell the processes waiting on `keys` that their claims ended, once the transaction commits
        (llmjury.store.notices); a database with no such channel says nothing, and is polled."""
        ...

    def make_schema(self) -> None:
        """Make the namespace the store's tables go in, where the database has one to make."""
        ...

    def commit(self) -> None:
        ...

    def rollback(self) -> None:
        ...

    def lost(self, exc: BaseException) -> bool:
        """Whether `exc` is the connection to the server lost (llmjury.store.outage rides it out)."""
        ...

    def retryable(self, exc: BaseException) -> bool:
        """Whether a failed transaction may simply be run again (a deadlock the server broke, a lost
        connection: the next `begin` waits for the server to come back)."""
        ...

    def close(self) -> None:
        ...
