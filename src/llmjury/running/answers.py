"""What one process got in this run, by sample key: the answers it paid for, and the answers a later
request of the run reads again that the store cannot give it.

A paid answer the store will hold is kept here only until its write is committed; from then on a
later request reads it back from the store like any cached answer, so the run's answers do not add
up in memory (`bench/growth.py`). It still counts as paid in this run, not as cached: `paid` keeps
its key for the whole run. A run that asks afresh (refresh mode, a role under test) reads back only
what it wrote: should another such run overwrite the key meanwhile, a later request pays again. An
answer another process paid for is not held at all: it was read from the store, which gives it back
alike. An answer no store holds (a provider never cached, a run with no store, a refused or empty
answer of a batch) stays for the whole run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import Future

from llmjury.chat import Sample
from llmjury.errors import PermanentProviderError


class RunAnswers:
    """Answers by key, read on the engine's loop; a committed write lets go of its answer from the
    store's writer thread, hence the lock."""

    def __init__(self) -> None:
        self._held: dict[str, Sample] = {}
        self._paid: set[str] = set()  # keys of samples this process paid for in this run
        self._lock = threading.Lock()

    def get(self, key: str) -> Sample | None:
        """The answer held for `key`, or None (the store may have it)."""
        with self._lock:
            return self._held.get(key)

    def paid(self, key: str) -> bool:
        """Did this process pay for `key`'s sample in this run?"""
        return key in self._paid

    def keep_paid(self, answers: Mapping[str, Sample]) -> None:
        """Answers this process paid for, held for the whole run unless the store takes them (`stored`)."""
        self._paid.update(answers)
        with self._lock:
            self._held.update(answers)

    def stored(self, key: str, sample: Sample, write: Future[None]) -> None:
        """The store holds `sample` once `write` is committed: let go of it then (a failed write keeps it)."""
        write.add_done_callback(lambda done: self._committed(key, sample, done))

    def add_paid(self, keys: list[str]) -> None:
        """Keys whose samples this process paid for (a batch it collected), read from the store."""
        self._paid.update(keys)

    def _committed(self, key: str, sample: Sample, write: Future[None]) -> None:
        if write.cancelled() or write.exception() is not None:
            return
        with self._lock:
            if self._held.get(key) is sample:
                del self._held[key]


def ended_outcome(provider: str, ended: Sample | str | None) -> Sample | None:
    """This run's unanswered outcome of a call as the caller's own: a refused or empty answer, or the
    failure raised again, naming the process it happened in."""
    if isinstance(ended, str):
        raise PermanentProviderError(provider, f"{ended} (the call failed in another process of this run)")
    return ended
