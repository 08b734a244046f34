"""A run read back from disk, for comparison: its verdict records and, from a run folder, its summary.

Kept apart from the comparison's statistics so the plugin can check a `--llm-baseline` at start-up
without importing numpy or scipy.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from llmjury.baseline_lookup import BaselineLookup, read_lookup
from llmjury.errors import ConfigError
from llmjury.model import RunSummary, read_summary
from llmjury.runfiles import run_folder, verdicts_file


@dataclass(frozen=True)
class SavedRun:
    """A run read back from disk: its verdict records and, from a run folder, its summary."""

    path: Path
    records: list[dict[str, Any]]
    summary: RunSummary | None
    #: From a baseline folder the workflow fetched into: what the search found (`lookup.json`).
    lookup: BaselineLookup | None = None

    @property
    def missing(self) -> BaselineLookup | None:
        """The lookup of a baseline that was looked for and not found (so nothing can be compared)."""
        return self.lookup if self.lookup is not None and not self.lookup.found else None


#: Inside a baseline folder, the run the workflow keeps (beside `lookup.json` and the cache).
RUN = "run"


def load_run(path: Path, what: str) -> SavedRun:
    """A run folder (holding `verdicts.jsonl`, and `summary.json` when present) or a `verdicts.jsonl`,
    or a baseline folder (`lookup.json`, and the run under `run/` when one was found); a ConfigError
    names `what` (the option or argument), the file and the line that cannot be read."""
    lookup = read_lookup(path) if path.is_dir() else None
    if lookup is not None:
        if not lookup.found:
            return SavedRun(path=path, records=[], summary=None, lookup=lookup)
        return replace(load_run(path / RUN, what), lookup=lookup)
    try:  # the run layout's own lookup: gzipped or plain verdicts, a `latest` pointer file
        file = verdicts_file(path)
    except ConfigError as exc:
        raise ConfigError(f"{what} {exc}") from None
    if not file.is_file():
        raise ConfigError(f"{what} {path}: no such run folder or verdicts.jsonl file")
    records: list[dict[str, Any]] = []
    try:
        with (gzip.open if file.name.endswith(".gz") else open)(file, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{what} {file}:{number}: not a verdict record ({exc.msg})") from None
                if not isinstance(record, dict) or not {"case_id", "family", "judge"} <= record.keys():
                    raise ConfigError(f"{what} {file}:{number}: not a verdict record "
                                      "(needs case_id, family and judge)")
                records.append(record)
    except (OSError, UnicodeDecodeError, EOFError) as exc:  # EOFError: a truncated gzip file
        raise ConfigError(f"{what} {file}: cannot be read ({str(exc) or 'truncated'})") from None
    summary = None
    folder = run_folder(path)
    if folder.is_dir() and (folder / "summary.json").is_file():
        try:
            text = (folder / "summary.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{what} {folder / 'summary.json'}: cannot be read ({exc})") from None
        summary = read_summary(text, f"{what} {folder / 'summary.json'}")
    return SavedRun(path=path, records=records, summary=summary)
