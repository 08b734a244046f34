"""The controller's xdist hooks: what it hands each worker, and what it gathers as they go down.

Registered only when xdist is installed (its hooks would be 'unknown' otherwise), and only in the
controller. What the workers hand back (llmjury.session.worker) is kept in `FromWorkers`, read at the
session end by llmjury.session.controller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from llmjury.model import StoreFacts
from llmjury.session.collection import STARTUP_ERROR
from llmjury.session.stops import STOPPED

#: The keys of a worker's `workeroutput` that carry its figures (written by llmjury.session.worker).
LEDGER, ROLES, LOADING, ADAPTATIONS = "llmjury_ledger", "llmjury_roles", "llmjury_loading", "llmjury_adaptations"
#: What a worker's store went through (llmjury.model.StoreFacts, as a dict).
STORE = "llmjury_store"


@dataclass
class FromWorkers:
    """What the controller learned from its workers: how many, how far they got, and their figures."""

    workers: int = 0
    collected: int = 0  # the most tests a worker collected: xdist's controller collects nothing itself
    #: Workers that went down with an error (a crash), as their causes.
    crashed: list[str] = field(default_factory=list)
    ledgers: list[dict[str, dict[str, float]]] = field(default_factory=list)
    roles: list[dict[str, Any]] = field(default_factory=list)
    loading: list[dict[str, Any]] = field(default_factory=list)
    #: What providers learned their servers do differently (ignore n, refuse json_schema), by provider.
    adaptations: dict[str, dict[str, str]] = field(default_factory=dict)
    #: What each worker's store went through (an outage ridden out, answers kept or handed back).
    store: list[StoreFacts] = field(default_factory=list)

    def learned(self, adaptations: dict[str, dict[str, str]]) -> None:
        """Merge what one process's providers learned into the run's."""
        for provider, learned in adaptations.items():
            self.adaptations.setdefault(provider, {}).update(learned)


class XdistController:
    """The controller's side of the workers' hand-back."""

    def __init__(self, run_id: str, returns: FromWorkers) -> None:
        self.run_id, self.returns = run_id, returns

    def pytest_configure_node(self, node: Any) -> None:
        """Each worker joins this run: the same run id for its cache rows, board and hand-off, and its
        place among the run's workers. The place is counted here, not read from its id: xdist numbers
        the workers of every session of a process on (a second in-process run's are gw2 and gw3), and
        a share read from `gw3` with 2 workers planned nothing while every test waited for it."""
        count = int(node.workerinput.get("workercount") or 1)
        node.workerinput["llmjury_run_id"] = self.run_id
        node.workerinput["llmjury_worker_index"] = self.returns.workers % count  # a replaced worker takes a place
        self.returns.workers += 1

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """How many tests were selected, which the controller cannot count itself."""
        self.returns.collected = max(self.returns.collected, len(ids))

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A worker is done (or crashed): keep its figures, and its crash as a cause of an incomplete run."""
        if error is not None:
            name = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.returns.crashed.append(f"worker {name} went down: {str(error).strip().splitlines()[-1][:300]}")
        output = getattr(node, "workeroutput", None) or {}  # a crashed worker has none
        if output.get(STOPPED):  # what stopped a worker early (a store out of reach) stops the run
            self.returns.crashed.append(str(output[STOPPED]))
        if LEDGER in output:
            self.returns.ledgers.append(output[LEDGER])
            self.returns.roles.append(output.get(ROLES, {}))
        self.returns.loading.extend(output.get(LOADING, []))
        self.returns.learned(output.get(ADAPTATIONS, {}))
        if STORE in output:
            self.returns.store.append(StoreFacts.model_validate(output[STORE]))


class WorkerStartupErrors:
    """The controller's side of a worker's start-up error (llmjury.session.collection): it ends the run as a
    usage error, exit 4, as it would at `-n 0`."""

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist's controller never collects, so a worker's collection-time error arrives here."""
        message = (getattr(node, "workeroutput", None) or {}).get(STARTUP_ERROR)
        if message:
            raise pytest.UsageError(message)
