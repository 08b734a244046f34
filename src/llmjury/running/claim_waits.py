"""Claims made as calls are made, and waiting for calls other processes claimed: every waited key
looked up in one statement a poll.

A process claims a request only when it is about to call it: within a window of CLAIM_WINDOW times
its concurrency for the provider, held from the claim until the answer is committed. A process
that dies thus holds no more claims than that, and another takes them over within one lease; a
window wider than the concurrency lets the next claims be made while the last answers are written.

A process that finds a sample claimed by another (of this run or another, on this machine or
another) waits for its outcome rather than pay for the call again. Polled one key at a time, a
waiting machine spent more of the store's time and its own CPU than the machine doing the work:
thousands of statements a second. Here a single poller per process reads the state of every
waited key (its answer, its claim, this run's unanswered outcome) in one statement every `POLL_S`,
however many keys wait: at most 1/POLL_S statements a second for a waiting process.

On PostgreSQL the poller is woken instead: the transactions that end claims announce their keys
(llmjury.store.notices), and a look follows at once when one of the waited keys ended, or when a
key is newly waited for (its end may have been announced just before), no sooner than `POLL_S`
after the last. Between announcements it looks every `QUIET_POLL_S`, for the holders
that die (their leases run out unannounced); while it cannot listen, every `POLL_S`. It listens
while it waits and `LINGER_S` after: every claim that ends anywhere in the database wakes a
listener, which a process that waits for nothing should not pay for (about 70 us a notification),
and a pause between two waits should not cost a new connection.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass

from llmjury.running.cache import SampleStore, StoredRow, Watched
from llmjury.running.limits import CASE, PrioritySlots
from llmjury.store.notices import EndedClaims

#: Requests a process may have claimed and not yet ended, per provider, in units of its concurrency.
CLAIM_WINDOW = 2

#: Seconds between two looks at the waited keys (one statement each time, for all of them), at least.
POLL_S = 0.25
#: Seconds between two looks while the store announces ended claims and none of the waited keys ended.
QUIET_POLL_S = 2.0
#: Seconds a listening process keeps its connection once it waits for nothing, for the next wait.
LINGER_S = 5.0
#: Keys looked up in one statement at most (more are looked up in several).
BATCH = 2_000


class ClaimWindows:
    """A process's claim windows, one per provider; made and used on the engine loop only."""

    def __init__(self) -> None:
        self._windows: dict[str, PrioritySlots] = {}

    def place(self, provider: str, concurrency: int) -> AbstractAsyncContextManager[None]:
        """Held from a request's claim until its outcome is committed (earlier cases go first)."""
        if provider not in self._windows:
            self._windows[provider] = PrioritySlots(CLAIM_WINDOW * concurrency)
        return self._windows[provider].held(CASE.get())


@dataclass
class _Waiter:
    written_by: str | None  # only an answer this run wrote counts (a call asked afresh), else any
    future: asyncio.Future[StoredRow | None]


class ClaimWaits:
    """The waits of one engine loop; made, awaited and polled on that loop only."""

    def __init__(self, store: SampleStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self._waiting: dict[str, list[_Waiter]] = {}
        self._poller: asyncio.Task[None] | None = None
        #: Looks at the store so far (one statement each): what the tests count.
        self.polls = 0
        self._looked = 0.0  # time.monotonic() of the last look
        #: Announced ends of claims (PostgreSQL), listened to from the first wait on; else None.
        self.notices: EndedClaims | None = None
        self._listener: asyncio.Task[None] | None = None
        self._woken = asyncio.Event()  # a look is due: a waited key was announced, or newly waited for

    async def settled(self, key: str, written_by: str | None = None) -> StoredRow | None:
        """Once `key`'s claim has ended: its stored answer (None when the holder let go without
        one, died, or ended the call unanswered: the caller reads this run's outcome, or claims)."""
        future: asyncio.Future[StoredRow | None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, []).append(_Waiter(written_by, future))
        self._woken.set()  # its end may have been announced before it was waited for: look once
        if self._poller is None or self._poller.done():
            self._looked = max(self._looked, time.monotonic())  # its holder has just claimed it
            self._listen()
            self._poller = asyncio.get_running_loop().create_task(self._poll())
        return await future

    def _listen(self) -> None:
        """Listen for ended claims while keys are waited for, where the store announces them."""
        if self._listener is not None or self.store.location.kind != "postgres":
            return
        self.notices = EndedClaims(self.store.location.dsn, self._heard, self._woken.set)
        self._listener = asyncio.get_running_loop().create_task(self.notices.run())

    def _stop_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
        self._listener, self.notices = None, None

    async def _still_waiting(self) -> bool:
        """Whether keys are waited for; while listening, once none is, up to LINGER_S for the next."""
        if not self._waiting and self._listener is not None:
            self._woken.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), LINGER_S)
        return bool(self._waiting)

    def _heard(self, keys: list[str]) -> None:
        if any(key in self._waiting for key in keys):
            self._woken.set()

    async def _next_look(self) -> None:
        """Until the next look: a waited key announced ended (or a quiet spell), else a poll's interval."""
        if self.notices is not None and self.notices.listening:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), QUIET_POLL_S)
            self._woken.clear()
        await asyncio.sleep(max(0.0, self._looked + POLL_S - time.monotonic()))
        self._looked = time.monotonic()

    async def _poll(self) -> None:
        try:
            await self._looks()
        finally:
            self._stop_listening()

    async def _looks(self) -> None:
        while await self._still_waiting():
            await self._next_look()
            keys = [key for key, waiters in self._waiting.items() if any(not w.future.done() for w in waiters)]
            if not keys:
                self._waiting.clear()
                continue
            try:
                found: dict[str, Watched] = {}
                for start in range(0, len(keys), BATCH):
                    self.polls += 1
                    found |= await asyncio.to_thread(self.store.watch, keys[start:start + BATCH], self.run_id)
            except Exception as exc:  # a store that stayed away past its outage limit: every waiter learns why
                for waiters in self._waiting.values():
                    for waiter in waiters:
                        if not waiter.future.done():
                            waiter.future.set_exception(exc)
                self._waiting.clear()
                break
            for key in keys:
                self._settle(key, found.get(key, Watched(None, False, False)))

    def _settle(self, key: str, state: Watched) -> None:
        still: list[_Waiter] = []
        for waiter in self._waiting.pop(key, []):
            if waiter.future.done():
                continue  # its caller gave up (a stopped run)
            answered = state.row is not None and (waiter.written_by is None or state.row[1] == waiter.written_by)
            if answered:
                waiter.future.set_result(state.row)
            elif state.ended or not state.held:
                waiter.future.set_result(None)
            else:
                still.append(waiter)
        if still:
            self._waiting[key] = still
