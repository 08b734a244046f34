"""Verdicts a family at a time: the verdict files of a run (or of a suite's shards) read once, their
lines sorted into one temporary file per family, so a report built from them holds one family's
records at a time, never the whole suite's (`llmjury merge`, `llmjury report`).

Every line is parsed on that first pass, so a bad line stops the command, naming its file and line,
before any report is written. The lines are kept as they were written: the merged verdicts file is
the sources' lines in their order, copied rather than parsed and encoded again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from llmjury.errors import ConfigError
from llmjury.runfiles import read_verdicts, verdict_blocks, verdict_lines


class VerdictSpill:
    """The verdicts of `sources` (run folders or verdicts files, in order), sorted by family into
    files under `folder` (the caller's temporary folder, removed by it)."""

    def __init__(self, sources: Sequence[Path], folder: Path) -> None:
        self.sources = list(sources)
        #: Verdicts per family, in the order the families first appear.
        self.counts: dict[str, int] = {}
        self._files: dict[str, Path] = {}
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            outs: dict[str, TextIO] = {}
            for source in self.sources:
                for block in verdict_blocks(source):
                    for number, line, record in block:
                        family = record.get("family")
                        if not isinstance(family, str) or not family:
                            raise ConfigError(f"{source} line {number}: a verdict record names no family")
                        out = outs.get(family)
                        if out is None:  # numbered: a family's name is the run's data, not a safe file name
                            self._files[family] = folder / f"family-{len(self._files)}.jsonl"
                            out = outs[family] = stack.enter_context(self._files[family].open("w", encoding="utf-8"))
                        out.write(line if line.endswith("\n") else line + "\n")
                        self.counts[family] = self.counts.get(family, 0) + 1

    @property
    def families(self) -> list[str]:
        """The families with verdicts, by name (the order of a summary's sections)."""
        return sorted(self.counts)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def records(self, family: str) -> list[dict[str, Any]]:
        """One family's verdict records, in the sources' order."""
        return read_verdicts(self._files[family]) if family in self._files else []

    def lines(self) -> Iterator[str]:
        """Every verdict line of the sources, in their order, as written (each ending in a newline)."""
        for source in self.sources:
            yield from verdict_lines(source)
