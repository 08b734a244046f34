"""A shard's manifest, `shard.json` in its run folder: which shard it was, of which suite, run how, and
which tests it ran, so `llmjury merge` can tell a whole set of shards from a wrong one.

The suite's fingerprint covers the tests collected before shard selection (after `-k`, `-m` and
`--llm-sample`) and the settings that change verdicts, so shards of different commits, selections,
judges or seeds are refused instead of merged into figures no single run would give.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from llmjury.errors import ConfigError, validation_cause
from llmjury.model import Usage
from llmjury.redact import redact_spec
from llmjury.running.settings import Settings

MANIFEST = "shard.json"
MANIFEST_VERSION: Literal[1] = 1


class ShardManifest(BaseModel):
    """One shard's run, as `shard.json` holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The manifest's format (another is refused, not misread).
    version: Literal[1] = MANIFEST_VERSION
    #: The shard's number (from 1) and the number of shards.
    shard: int
    count: int
    #: The run folder's name (the shard's run id).
    run_id: str
    #: sha256 of `suite` and `settings` together: equal across the shards of one suite.
    fingerprint: str
    #: sha256 of every test collected before shard selection, and how many there were.
    suite: str
    tests: int
    #: The settings that change verdicts, as the fingerprint saw them (specs redacted).
    settings: dict[str, Any]
    #: The node ids this shard selected, sorted.
    node_ids: list[str]
    #: Whether the shard's run finished every selected test (a stopped one cannot be merged).
    complete: bool = True
    usage: Usage = Usage()
    #: The run's estimated spend in US dollars.
    spend_usd: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.shard}/{self.count}"


def verdict_settings(settings: Settings) -> dict[str, Any]:
    """The settings that change what a run's verdicts are: who judges and answers, how often, on which
    cases and seed, read how, from which cache mode, with which of the project's prompt templates;
    with the llmjury version that judged."""
    try:
        llmjury = version("llmjury")
    except PackageNotFoundError:  # run from a source tree that was never installed
        llmjury = "unknown"
    return {
        "llmjury": llmjury,
        "judge": redact_spec(settings.judge.text),
        "roles": {role: redact_spec(spec.text) for role, spec in sorted(settings.roles.items())},
        "under_test": sorted(settings.under_test),
        "replay_under_test": settings.replay_under_test,
        "judge_runs": settings.judge_runs,
        "judge_output": settings.judge_output,
        "seed": settings.seed,
        "sample": settings.sample,
        "options": dict(sorted(settings.options.items())),
        "cache_mode": settings.cache_mode.value,
        "item_failures": settings.item_failures,
        "prompts": None if settings.prompts is None else folder_digest(settings.prompts),
    }


def folder_digest(folder: Path) -> str:
    """The files of a folder (the project's prompt templates), by relative path and content: a shard
    with another prompt asks its judges something else."""
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    return digest({str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() for path in files})


def digest(value: Any) -> str:
    """sha256 of `value`'s canonical JSON: the same on every machine and process."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def suite_digest(node_ids: Iterable[str]) -> str:
    """The collected tests' digest, whatever order collection gave them in."""
    return digest(sorted(node_ids))


def fingerprint(suite: str, settings: dict[str, Any]) -> str:
    return digest({"suite": suite, "settings": settings})


def read_manifest(folder: Path) -> ShardManifest:
    """A run folder's `shard.json`; a ConfigError names the folder when there is none or it cannot be read."""
    file = folder / MANIFEST
    if not file.is_file():
        raise ConfigError(f"{folder}: no {MANIFEST}: not the run folder of a shard (run pytest with "
                          "--llm-shard I/N to make one)")
    try:
        return ShardManifest.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read ({exc})") from None
    except ValidationError as exc:
        raise ConfigError(f"{file}: not a shard manifest ({validation_cause(exc)})") from None
