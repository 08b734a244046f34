"""The planning phase: run every collected case's pipeline concurrently before tests assert.

After collection (so `-k`, `-m` and `--llm-sample` have already deselected), each process
submits the pipelines of its share of the selected cases to the engine loop at once, bounded
only by the providers' limits. Tests then ask for their outcome: planned ones are ready;
anything else (another worker's share under `--dist load`) runs then, hitting the shared cache.
A case's share is a hash of pipeline and case id modulo the worker count, so every worker
computes the same partition and no paid call is made twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import Future
from typing import TypeAlias

from tqdm import tqdm

from llmjury.cases import Case
from llmjury.jury import Jury, Outcome

Pipeline: TypeAlias = Callable[[Case, Jury], Awaitable[Outcome]]


def work_key(pipeline: Pipeline, case: Case) -> str:
    return f"{pipeline.__module__}.{pipeline.__qualname__}::{case.id}"


def in_share(key: str, worker_index: int, worker_count: int) -> bool:
    """Deterministic partition of work across xdist workers (stable across processes)."""
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return digest % worker_count == worker_index


class Planner:
    def __init__(self, jury: Jury) -> None:
        self.jury = jury
        self._futures: dict[str, Future[Outcome]] = {}

    def _submit(self, pipeline: Pipeline, case: Case) -> Future[Outcome]:
        key = work_key(pipeline, case)
        if key not in self._futures:
            self._futures[key] = self.jury.engine.submit(pipeline(case, self.jury))
        return self._futures[key]

    def plan(self, work: Iterable[tuple[Pipeline, Case]], *, label: str = "llmjury plan") -> int:
        """Run all `work` concurrently and wait; failures wait for their test to report them."""
        futures = {work_key(p, c): self._submit(p, c) for p, c in work}
        with tqdm(total=len(futures), desc=label, unit="case", disable=None, leave=False) as bar:
            for future in futures.values():
                future.exception()  # waits; a failure is re-raised by outcome() inside its test
                bar.update()
        return len(futures)

    def outcome(self, pipeline: Pipeline, case: Case) -> Outcome:
        """The case's outcome: from the plan if planned here, else computed now."""
        return self._submit(pipeline, case).result()
