"""What a run leaves in the providers' batches, said at its end; a run that leaves some ends green.

A run that submits and does not wait (`--llm-batch submit`, or the file lane) leaves cases
pending: their tests are skipped with the cause `batch pending`, and the run's last lines say how
many requests wait where and how to collect them. Its gates are not applied to its exit status
while requests are pending (the decision belongs to the run that collects them); the report
still shows them as evaluated on what was scored.
"""

from __future__ import annotations

from typing import Any

import pytest

from llmjury.results.exit_status import GateExit
from llmjury.running.batch_queue import BatchQueue
from llmjury.running.settings import Settings


class BatchStatus:
    """Registered in the process that reports, when a provider of the run has a batch lane."""

    def __init__(self, settings: Settings, run_id: str, gate_exit: GateExit) -> None:
        self.settings, self.run_id, self.gate_exit = settings, run_id, gate_exit
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After the controller decided the gates: count what the store still holds in batches."""
        location = self.settings.answers(self.run_id)
        if location.kind == "sqlite" and not location.path.exists():
            return
        queue = BatchQueue(location)
        try:
            pending = queue.pending()
        finally:
            queue.close()
        waiting = {provider: states for provider, states in pending.items()
                   if sum(n for state, n in states.items() if state != "failed")}
        for provider, states in waiting.items():
            where = ", ".join(f"{count} {state}" for state, count in states.items())
            self.lines.append(f"llmjury batch: {provider}: {where}")
        if waiting:
            again = "the same command without --llm-batch submit" if self.settings.batch_mode == "submit" \
                else "the same command"
            self.lines.append(f"llmjury batch: run {again} on the same store to collect what is in a provider's "
                              "batch; the file lane's requests: `llmjury batch export`, run them, `llmjury batch "
                              "import`, then run again (`llmjury batch status` shows what is left)")
            if self.gate_exit.status:
                self.lines.append("llmjury batch: the gates are not applied to the exit status while requests "
                                  "are pending")
                self.gate_exit.status = 0

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say, at the very end, what waits in batches and how to collect it."""
        for line in self.lines:
            terminalreporter.write_line(line, yellow=True)
