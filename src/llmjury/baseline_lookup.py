"""What the search for a pull request's baseline found: the run it came from, or why there is none.

The workflow's download step writes it as `lookup.json` in the baseline folder whatever happens, so
a pull request that could not be compared says why ("not compared" is an outcome of its own, never
a silent pass), and one that was compared names the commit, run and age of its baseline.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from llmjury.errors import ConfigError

#: The file the download step writes into the baseline folder.
LOOKUP = "lookup.json"

#: Why a run was not compared with a baseline:
#: `first` main has never kept a baseline (no run of the workflow on it has the artifact);
#: `expired` main kept baselines but every one has expired (the artifact's retention days);
#: `unavailable` main has a baseline that could not be fetched (an error of `gh`, a failed download);
#: `absent` no baseline folder and no lookup (a local run of the compare step);
#: `judges_differ` a baseline was found, but its judges are not this run's;
#: `no_key` the run's judge has no key (a fork's pull request gets no secrets).
Reason = Literal["first", "expired", "unavailable", "absent", "judges_differ", "no_key"]


class BaselineLookup(BaseModel):
    """The outcome of the baseline search, as `lookup.json` holds it."""

    #: Was a baseline run downloaded into the folder?
    found: bool
    #: Why not, when not found.
    reason: Reason | None = None
    #: The words a step summary and an annotation use.
    message: str = ""
    #: The baseline's run on GitHub Actions: its id, web address, commit and when it was created.
    run_id: int | None = None
    run_url: str | None = None
    commit: str | None = None
    created_at: str | None = None
    #: The branch searched and the pull request's merge base with it, when known.
    branch: str | None = None
    merge_base: str | None = None
    #: Was the run the one of the merge base (else the newest older run that kept a baseline)?
    at_merge_base: bool = False
    #: The llmjury version that made the baseline (from its summary.json), to install the same.
    llmjury_version: str | None = None

    def age(self, now: datetime | None = None) -> str:
        """The baseline's age in words (`3 days`, `5 hours`), or "" when its date is unknown."""
        if not self.created_at:
            return ""
        try:
            then = datetime.fromisoformat(self.created_at.replace("Z", "+00:00"))
        except ValueError:
            return ""
        seconds = ((now or datetime.now(UTC)) - then).total_seconds()
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
            if seconds >= size:
                count = int(seconds // size)
                return f"{count} {unit}{'s' if count != 1 else ''}"
        return "less than a minute"

    def origin(self) -> str:
        """The baseline's origin in one line: commit, run and age."""
        parts = []
        if self.commit:
            where = "the merge base" if self.at_merge_base else (self.branch or "main")
            parts.append(f"commit {self.commit[:12]} ({where})")
        if self.run_id is not None:
            parts.append(f"run {self.run_id}" + (f" <{self.run_url}>" if self.run_url else ""))
        if self.age():
            parts.append(f"{self.age()} old")
        return ", ".join(parts)


def read_lookup(folder: Path) -> BaselineLookup | None:
    """The lookup a baseline folder holds, or None; an unreadable one is a ConfigError naming it."""
    file = folder / LOOKUP
    if not file.is_file():
        return None
    try:
        return BaselineLookup.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        raise ConfigError(f"{file}: not a baseline lookup ({exc})") from None


def write_lookup(folder: Path, lookup: BaselineLookup) -> Path:
    """Write `lookup.json` into the baseline folder (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / LOOKUP
    file.write_text(lookup.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
    return file
