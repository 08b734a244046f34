"""`llmjury merge`'s reading and refusals: the shards' run folders, checked to be one whole suite, and
what their reports hold (verdicts, usage, load reports, the run's settings) gathered for one report.

A set of shards is refused, naming the shard (its number and folder), when one has no manifest, when
a shard is missing or given twice, when two ran the same test, when their suites or verdict-changing
settings differ, or when one stopped early: a merged report of such a set would be no run's figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmjury.errors import ConfigError
from llmjury.loading import LoadReport, merge
from llmjury.model import RunSummary, read_summary
from llmjury.results.shard_manifest import MANIFEST, ShardManifest, read_manifest
from llmjury.runfiles import LATEST, run_folder


@dataclass(frozen=True)
class ShardFolder:
    """One shard's run folder, its manifest, and its summary when its run judged anything."""

    folder: Path
    manifest: ShardManifest
    summary: RunSummary | None

    def __str__(self) -> str:
        return f"shard {self.manifest.label} ({self.folder})"


def shard_folder(path: Path) -> Path:
    """The run folder a merge argument names: the folder holding `shard.json`, a reports folder's
    `latest`, or the only run folder inside it (as a CI artifact holds one)."""
    if (path / MANIFEST).is_file() or not path.is_dir():
        return path
    latest = path / LATEST
    if latest.is_symlink():  # named by the run folder it points at, as a refusal should name it
        return path / latest.readlink().name
    if latest.exists():
        return run_folder(latest)
    inside = sorted(p.parent for p in path.glob(f"*/{MANIFEST}"))
    if len(inside) > 1:
        raise ConfigError(f"{path}: holds {len(inside)} shard runs ({', '.join(p.name for p in inside)}); "
                          "name each run folder")
    return inside[0] if inside else path


def read_shard(path: Path) -> ShardFolder:
    """One merge argument read: its manifest and its summary; a ConfigError names the folder."""
    if not path.is_dir():
        raise ConfigError(f"{path}: no such folder")
    folder = shard_folder(path)
    manifest = read_manifest(folder)
    file = folder / "summary.json"
    try:
        summary = read_summary(file.read_text(encoding="utf-8"), str(file)) if file.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read ({exc})") from None
    return ShardFolder(folder, manifest, summary)


def check_shards(shards: Sequence[ShardFolder]) -> list[ShardFolder]:
    """The shards are one whole suite, each once, run alike; else a ConfigError naming the shard.
    Returns them in shard order."""
    first = shards[0]
    count = first.manifest.count
    for shard in shards[1:]:
        m = shard.manifest
        if m.count != count:
            raise ConfigError(f"{shard}: one of {m.count} shards, but {first} is one of {count}")
        if m.suite != first.manifest.suite:
            raise ConfigError(f"{shard}: collected other tests than {first} ({m.tests} against "
                              f"{first.manifest.tests}, or different ones): shard one suite, at one commit, "
                              "with the same -k, -m and --llm-sample")
        if m.fingerprint != first.manifest.fingerprint:
            differ = sorted(key for key in m.settings.keys() | first.manifest.settings.keys()
                            if m.settings.get(key) != first.manifest.settings.get(key))
            said = ", ".join(f"{key} {m.settings.get(key)!r} against {first.manifest.settings.get(key)!r}"
                             for key in differ)
            raise ConfigError(f"{shard}: run with other settings than {first} ({said or 'another fingerprint'})")
    seen: dict[int, ShardFolder] = {}
    for shard in shards:
        earlier = seen.setdefault(shard.manifest.shard, shard)
        if earlier is not shard:
            raise ConfigError(f"shard {shard.manifest.label} given twice: {earlier.folder} and {shard.folder}")
    missing = [index for index in range(1, count + 1) if index not in seen]
    if missing:
        names = ", ".join(f"{index}/{count}" for index in missing)
        raise ConfigError(f"shard{'s' if len(missing) > 1 else ''} {names} missing: given "
                          f"{', '.join(map(str, sorted(shards, key=lambda s: s.manifest.shard)))}")
    ordered = sorted(shards, key=lambda s: s.manifest.shard)
    owner: dict[str, ShardFolder] = {}
    for shard in ordered:
        for node in shard.manifest.node_ids:
            other = owner.setdefault(node, shard)
            if other is not shard:
                raise ConfigError(f"{shard} and {other} both ran {node}: not shards of one split")
        if not shard.manifest.complete:
            stopped = (shard.summary.run.stopped or {}).get("by") if shard.summary is not None else None
            raise ConfigError(f"{shard}: its run stopped early ({stopped or 'incomplete'}): run that shard again")
    return ordered


def undefined_families(shards: Sequence[ShardFolder]) -> set[str]:
    """Families the shards' runs judged without a definition (a pipeline of the user's own naming a
    family no project registers): their sections hold the core's counts only, as the merged one will."""
    sections = [(name, section) for shard in shards if shard.summary is not None
                for name, section in shard.summary.families.items()]
    return {name for name, _ in sections} - {name for name, section in sections if section.figures}


def merged_loading(shards: Sequence[ShardFolder]) -> list[LoadReport]:
    """One load report per dataset file, from every shard that loaded it."""
    return merge(report for shard in shards if shard.summary is not None for report in shard.summary.loading)


def merged_run(shards: Sequence[ShardFolder], run_id: str) -> dict[str, Any]:
    """The merged report's `run` section: the shards' common settings, when they ran, and from where."""
    summaries = [shard.summary for shard in shards if shard.summary is not None]
    base = summaries[0].run.model_dump(exclude={"families", "offline", "stopped", "args"}) if summaries else {}
    started = [s.run.started for s in summaries if s.run.started]
    finished = [s.run.finished for s in summaries if s.run.finished]
    return {**base, "id": run_id, "started": min(started, default=None), "finished": max(finished, default=None),
            "workers": sum(s.run.workers for s in summaries),
            "merged_from": [str(shard.folder) for shard in shards], "shards": len(shards)}
