"""Cache lookups made in one turn of the engine's loop, sent to the run store as one statement.

A planned run starts every case's pipeline at once, so thousands of lookups are asked in the same
turn of the loop; on PostgreSQL each one alone is a round trip to the server (a replay took over
four times SQLite's time). Each lookup waits for the turn to end, and the turn's keys are read
together (the DataLoader pattern), which costs a lone lookup one turn of the loop. On PostgreSQL
the statement runs on a thread: a round trip, or a server that went away for a while (a restart
ridden out, llmjury.store.outage), never holds up the loop and the calls in flight on it.
"""

from __future__ import annotations

import asyncio

from llmjury.running.cache import SampleStore, StoredRow

#: Keys read in one statement at most (a turn with more reads them in several).
BATCH = 2_000


class CoalescedReads:
    """Lookups of one engine loop, batched per turn; made and awaited on that loop only."""

    def __init__(self, store: SampleStore) -> None:
        self.store = store
        self._waiting: dict[str, list[asyncio.Future[StoredRow | None]]] = {}
        self._scheduled = False
        self._off_loop = store.location.kind == "postgres"
        self._reading: set[asyncio.Task[None]] = set()  # reads on a thread, kept until they end

    async def row(self, key: str) -> StoredRow | None:
        """The stored row of `key`, read with the other keys asked in this turn of the loop."""
        future: asyncio.Future[StoredRow | None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, []).append(future)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._read)
        return await future

    def _read(self) -> None:
        waiting, self._waiting, self._scheduled = self._waiting, {}, False
        if self._off_loop:
            task = asyncio.get_running_loop().create_task(self._read_on_thread(waiting))
            self._reading.add(task)
            task.add_done_callback(self._reading.discard)
            return
        try:
            found = self._rows(list(waiting))
        except Exception as exc:  # a store that went away: every lookup of the turn learns why
            _deliver(waiting, {}, exc)
            return
        _deliver(waiting, found, None)

    async def _read_on_thread(self, waiting: dict[str, list[asyncio.Future[StoredRow | None]]]) -> None:
        try:
            found = await asyncio.to_thread(self._rows, list(waiting))
        except Exception as exc:
            _deliver(waiting, {}, exc)
            return
        _deliver(waiting, found, None)

    def _rows(self, keys: list[str]) -> dict[str, StoredRow]:
        found: dict[str, StoredRow] = {}
        for start in range(0, len(keys), BATCH):
            found |= self.store.rows(keys[start:start + BATCH])
        return found


def _deliver(waiting: dict[str, list[asyncio.Future[StoredRow | None]]], found: dict[str, StoredRow],
             error: Exception | None) -> None:
    for key, futures in waiting.items():
        for future in futures:
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(found.get(key))
