"""Verdicts a family at a time: the verdict files of a run (or of a suite's shards) read once, their
lines sorted into one temporary file per family, so a report built from them holds one family's
records at a time, never the whole suite's (`llmjury merge`, `llmjury report`).

Every line is parsed on that first pass and checked for the fields every report counts (a case id, a
family, whether it was scored, its judge), so a bad line stops the command, naming its file and
line, before any report is written; a record its family's model refuses is named the same way when
its family is read back. The lines are kept as they were written: the merged verdicts file is the
sources' lines in their order, copied rather than parsed and encoded again.
"""

from __future__ import annotations

import contextlib
import shutil
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from llmjury.errors import ConfigError, validation_cause
from llmjury.family import AnyFamily
from llmjury.judgement.verdicts import Verdict
from llmjury.runfiles import (
    FileEnd,
    gzip_member,
    read_verdicts,
    replacing,
    verdict_blocks,
    verdict_files,
    verdict_lines,
)


class VerdictSpill:
    """The verdicts of `sources` (run folders or verdicts files, in order), sorted by family into
    files under `folder` (the caller's temporary folder, removed by it)."""

    def __init__(self, sources: Sequence[Path], folder: Path) -> None:
        self.sources = verdict_files(sources)  # errors name the file, not its folder
        #: Verdicts per family, in the order the families first appear.
        self.counts: dict[str, int] = {}
        self._files: dict[str, Path] = {}
        #: Where each of a family's records came from, in its order: the source's index and line number.
        self._origins: dict[str, tuple[array[int], array[int]]] = {}
        #: Per source: gzipped, and every line of it a record ending in a newline (`write` joins it as it is).
        self._joinable: list[bool] = []
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            outs: dict[str, TextIO] = {}
            for index, source in enumerate(self.sources):
                count, end = 0, FileEnd()
                for block in verdict_blocks(source, end):
                    for number, line, record in block:
                        count += 1
                        family = record.get("family")
                        if not isinstance(family, str) or not family:
                            raise ConfigError(f"{source} line {number}: a verdict record names no family")
                        if problem := _unreadable(record):
                            raise ConfigError(f"{source} line {number}: a {family} verdict record {problem}")
                        out = outs.get(family)
                        if out is None:  # numbered: a family's name is the run's data, not a safe file name
                            self._files[family] = folder / f"family-{len(self._files)}.jsonl"
                            self._origins[family] = (array("H"), array("L"))
                            out = outs[family] = stack.enter_context(self._files[family].open("w", encoding="utf-8"))
                        out.write(line if line.endswith("\n") else line + "\n")
                        self.counts[family] = self.counts.get(family, 0) + 1
                        indexes, numbers = self._origins[family]
                        indexes.append(index)
                        numbers.append(number)
                self._joinable.append(source.name.endswith(".gz") and 0 < count == end.line and end.newline)

    @property
    def families(self) -> list[str]:
        """The families with verdicts, by name (the order of a summary's sections)."""
        return sorted(self.counts)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def records(self, family: str) -> list[dict[str, Any]]:
        """One family's verdict records, in the sources' order."""
        return read_verdicts(self._files[family]) if family in self._files else []

    def typed(self, family: AnyFamily, records: list[dict[str, Any]]) -> list[Verdict]:
        """`records` (the family's, as `records` gave them) typed by its model, in their order, the list
        emptied as they are typed: a record's dicts go as its verdict comes (they share its texts).
        A record the model refuses is a ConfigError naming the record's file and line, and why."""
        typed = []
        pending = records
        pending.reverse()  # popped from the end: in their order
        for index in range(len(pending)):
            try:
                typed.append(family.typed(pending.pop()))
            except (ValidationError, ConfigError) as exc:
                indexes, numbers = self._origins[family.name]
                where = f"{self.sources[indexes[index]]} line {numbers[index]}"
                raise ConfigError(f"{where}: not a {family.name} verdict record ({_cause(exc)})") from None
        return typed

    def lines(self) -> Iterator[str]:
        """Every verdict line of the sources, in their order, as written (each ending in a newline)."""
        for source in self.sources:
            yield from verdict_lines(source)

    def write(self, path: Path) -> None:
        """`lines()` gzipped into `path`: the sources' own bytes one after the other when each is gzipped
        and every line of it is a record, else `lines()` compressed again as one member (the bytes a
        report of the same verdicts held in memory writes)."""
        with replacing(path) as out:
            if self.sources and all(self._joinable):
                for source in self.sources:
                    with source.open("rb") as part:
                        shutil.copyfileobj(part, out)
            else:
                gzip_member(out, self.lines())


def _unreadable(record: dict[str, Any]) -> str | None:
    """What a record lacks of the fields every report counts, or None."""
    judge = record.get("judge")
    if not isinstance(record.get("case_id"), str):
        return "has no case_id (a string)"
    if not isinstance(record.get("valid"), bool):
        return f"has valid {record.get('valid')!r}, not true or false"
    if not isinstance(judge, dict) or not isinstance(judge.get("provider"), str):
        return "names no judge provider (judge.provider)"
    if not isinstance(record.get("error"), str | None):
        return f"has error {record.get('error')!r}, not a string or null"
    return None


def _cause(exc: ValidationError | ConfigError) -> str:
    """The first thing a family's model refused, as `field.path: message`."""
    if isinstance(exc, ConfigError):
        return str(exc)
    return validation_cause(exc, "record")
