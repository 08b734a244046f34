"""What `--llm-sequential` was given: the batch between looks and the scales of mean figures."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Cases per batch: the gates are looked at after each.
BATCH = 20


@dataclass(frozen=True)
class SequentialSettings:
    """A sequential run's settings, resolved once at start-up (llmjury.session.sequential_options)."""

    batch: int = BATCH
    #: The scale of a gated mean figure other than [0, 1], by metric path (`custom.score.helpful.mean`).
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
