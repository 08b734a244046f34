"""Word from a PostgreSQL store that claims have ended (LISTEN/NOTIFY), so a process waiting on another
process's calls looks at the store when one of its keys ends, not only on a timer.

Every transaction that ends claims (an answer stored, an outcome settled, a claim handed back) says
which keys in a notification on `CHANNEL`; PostgreSQL delivers it when the transaction commits, to
every connection listening in the database. A waiting process listens on a connection of its own,
on its engine's loop (psycopg's async connection): no thread, and cancelled with the loop's tasks.
A lost connection is opened again; until it is, and for whatever it missed meanwhile, the waiter
polls as it does on SQLite, which has no such channel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator

#: The channel claims' ends are announced on (one per database: a waiter ignores keys it does not wait for).
CHANNEL = "llmjury_claims_ended"
#: Bytes of keys in one notification (PostgreSQL takes at most 8,000 a payload).
PAYLOAD_BYTES = 7_000
#: Seconds before a lost listening connection is opened again.
RECONNECT_S = 1.0


def payloads(keys: Iterable[str]) -> Iterator[str]:
    """The keys as notification payloads, one key a line, each payload under PAYLOAD_BYTES."""
    lines: list[str] = []
    size = 0
    for key in keys:
        if lines and size + len(key.encode()) + 1 > PAYLOAD_BYTES:
            yield "\n".join(lines)
            lines, size = [], 0
        lines.append(key)
        size += len(key.encode()) + 1
    if lines:
        yield "\n".join(lines)


class EndedClaims:
    """Listens for ended claims while `run` runs (a task on the engine's loop); `heard` gets each
    notification's keys, `changed` is called whenever listening starts or stops (what was missed
    while it did not must be looked up)."""

    def __init__(self, dsn: str, heard: Callable[[list[str]], None], changed: Callable[[], None]) -> None:
        self._dsn, self._heard, self._changed = dsn, heard, changed
        self.listening = False
        #: Connections opened so far (a lost one is opened again): what the tests count.
        self.connections = 0

    async def run(self) -> None:
        """Listen until cancelled, opening the connection again whenever it is lost."""
        import psycopg

        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                        self._dsn, autocommit=True, application_name="llmjury-claims-listener") as connection:
                    await connection.execute(f"LISTEN {CHANNEL}")
                    self.connections += 1
                    self._listen(True)
                    async for notice in connection.notifies():
                        self._heard(notice.payload.split("\n"))
            except psycopg.Error:
                pass  # a restart, a dropped network: polled meanwhile, listened to again below
            finally:
                self._listen(False)
            await asyncio.sleep(RECONNECT_S)

    def _listen(self, listening: bool) -> None:
        if listening != self.listening:
            self.listening = listening
            self._changed()
