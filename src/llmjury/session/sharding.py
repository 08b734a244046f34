"""`--llm-shard I/N`: keep this shard's tests after collection, and write its manifest (`shard.json`)
beside the run's report, for `llmjury merge`.

A test goes to a shard by the planner's stable hash (sha256, the same on every machine and process)
of its case, family and id, so every test of one case runs in one shard and the shard's figures for
that case are whole; a test without a case goes by its node id. Every xdist worker collects the same
tests and keeps the same ones, so `-n` composes with a shard. The key is not the planner's work key,
so within a shard the workers' shares stay even.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from llmjury.judgement.planner import in_share
from llmjury.model import Usage, read_summary
from llmjury.portable import shown
from llmjury.results.shard_manifest import MANIFEST, ShardManifest, fingerprint, suite_digest, verdict_settings
from llmjury.runfiles import write_text
from llmjury.running.settings import Settings
from llmjury.running.shard import Shard
from llmjury.session.item_verdicts import case_of

#: The key of a worker's `workeroutput` that carries its selection to the controller.
SHARD_OUTPUT = "llmjury_shard"


def shard_key(item: pytest.Item) -> str:
    """What decides a test's shard: its case (all of a case's tests together), else its node id."""
    case = case_of(item)
    return f"case::{case.family}::{case.id}" if case is not None else f"test::{item.nodeid}"


def in_shard(item: pytest.Item, shard: Shard) -> bool:
    return in_share(shard_key(item), shard.index - 1, shard.count)


@dataclass(frozen=True)
class Selected:
    """What one collecting process saw: the digest and count of every test before shard selection,
    and the node ids it kept (plain data: it crosses xdist in `workeroutput`)."""

    suite: str
    tests: int
    node_ids: list[str]


def select(items: Sequence[pytest.Item], shard: Shard) -> tuple[list[pytest.Item], list[pytest.Item], Selected]:
    """The shard's tests, the others, and what the manifest says of them."""
    held = [in_shard(item, shard) for item in items]
    kept = [item for item, here in zip(items, held, strict=True) if here]
    dropped = [item for item, here in zip(items, held, strict=True) if not here]
    selected = Selected(suite_digest(item.nodeid for item in items), len(items), sorted(i.nodeid for i in kept))
    return kept, dropped, selected


class ShardSelection:
    """In every process that collects: deselect the other shards' tests."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.selected: Selected | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> Generator[None]:
        """A wrapper, so the shard is cut from what every other selection (-k, -m, --llm-sample) left."""
        result = yield
        kept, dropped, self.selected = select(items, self.shard)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        output: dict[str, Any] | None = getattr(config, "workeroutput", None)
        if output is not None:
            output[SHARD_OUTPUT] = asdict(self.selected)
        return result


class ShardRun(ShardSelection):
    """Where the run reports (xdist's controller, or the only process): write `shard.json` into the run
    folder once the report is written (the controller's session end runs first, `tryfirst`)."""

    def __init__(self, shard: Shard, settings: Settings, run_id: str) -> None:
        super().__init__(shard)
        self.settings, self.run_id = settings, run_id
        self.written: Path | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist's controller collects nothing: a worker's selection (every worker's is the same)."""
        output = getattr(node, "workeroutput", None) or {}  # a crashed worker has none
        if self.selected is None and SHARD_OUTPUT in output:
            self.selected = Selected(**output[SHARD_OUTPUT])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """The run folder is written: add the manifest (with its usage and spend) beside the summary."""
        if self.selected is None or session.config.option.collectonly:
            return  # stopped before collection ended, or nothing ran
        run_dir = self.settings.reports / self.run_id
        file = run_dir / "summary.json"
        summary = read_summary(file.read_text(encoding="utf-8"), str(file)) if file.is_file() else None
        settings = verdict_settings(self.settings)
        manifest = ShardManifest(
            shard=self.shard.index, count=self.shard.count, run_id=self.run_id,
            fingerprint=fingerprint(self.selected.suite, settings), suite=self.selected.suite,
            tests=self.selected.tests, settings=settings, node_ids=self.selected.node_ids,
            complete=summary.complete if summary is not None else not session.shouldstop,
            usage=summary.usage if summary is not None else Usage(),
            spend_usd=summary.usage.total_cost_usd if summary is not None else 0.0)
        write_text(run_dir / MANIFEST, manifest.model_dump_json(indent=2))
        self.written = run_dir / MANIFEST

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say which part of the suite ran, at any `-n` (xdist's controller prints no "deselected")."""
        if self.written is not None and self.selected is not None:
            where = shown(self.written, terminalreporter.config.rootpath)
            terminalreporter.write_line(f"llmjury shard {self.shard}: {len(self.selected.node_ids)} of "
                                        f"{self.selected.tests} tests; merge the shards' run folders with "
                                        f"`llmjury merge` ({where})")
