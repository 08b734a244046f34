"""What one batch output file (or one batch's inline responses) answered, line by line."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from llmjury.chat import Sample
from llmjury.errors import BatchFileError, validation_cause


@dataclass(frozen=True)
class LineFailure:
    """A request the batch did not answer (expired, failed, refused by the server): the lane may send it again."""

    key: str
    code: str
    message: str


Decoded = tuple[str, Sample | LineFailure]


@dataclass
class BatchResults:
    """Answers and failures by request key; lines that could not be read at all are listed apart,
    so one broken line costs one answer, not the file."""

    samples: dict[str, Sample] = field(default_factory=dict)
    failures: dict[str, LineFailure] = field(default_factory=dict)
    malformed: list[BatchFileError] = field(default_factory=list)

    def add(self, decoded: Decoded) -> None:
        """File one decoded line under its key."""
        key, outcome = decoded
        if isinstance(outcome, LineFailure):
            self.failures[key] = outcome
        else:
            self.samples[key] = outcome


def read_jsonl(path: Path, decode: Callable[[str], Decoded]) -> BatchResults:
    """Decode every non-blank line of `path`; a line `decode` cannot read is kept as a BatchFileError
    naming the file and the line number."""
    with path.open(encoding="utf-8") as lines:
        return read_lines(lines, str(path), decode)


def read_lines(lines: Iterable[str], source: str, decode: Callable[[str], Decoded],
               into: BatchResults | None = None) -> BatchResults:
    """Decode every non-blank line (of a file, or of one downloaded by a batch client) into `into` or
    new results; a line `decode` cannot read is kept as a BatchFileError naming `source` and the line."""
    results = BatchResults() if into is None else into
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            results.add(decode(text))
        except ValidationError as exc:
            results.malformed.append(BatchFileError(source, number, validation_cause(exc, "line", every=True)))
        except ValueError as exc:
            results.malformed.append(BatchFileError(source, number, str(exc)))
    return results
