"""Cache lookups made in one turn of the engine's loop, sent to the run store as one statement.

A planned run starts every case's pipeline at once, so thousands of lookups are asked in the same
turn of the loop; on PostgreSQL each one alone is a round trip to the server (a replay took over
four times SQLite's time). Each lookup waits for the turn to end, and the turn's keys are read
together (the DataLoader pattern), which costs a lone lookup one turn of the loop.
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
        keys = list(waiting)
        try:
            found: dict[str, StoredRow] = {}
            for start in range(0, len(keys), BATCH):
                found |= self.store.rows(keys[start:start + BATCH])
        except Exception as exc:  # a store that went away: every lookup of the turn learns why
            for futures in waiting.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc)
            return
        for key, futures in waiting.items():
            for future in futures:
                if not future.done():
                    future.set_result(found.get(key))
