"""The Elo arena family (seed 002): battles between systems' answers, judged in both orders, rated
by Bradley-Terry and Elo with intervals, and judges measured against people (MRBench, PRD, LLMBar,
and pairwise items a user brings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

from llmjury.cases import RECORDED_MARKERS
from llmjury.families.arena import datasets, recorded
from llmjury.families.arena.cases import FAMILY as NAME
from llmjury.families.arena.offline import ANSWERS
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.results import (
    BATTLE,
    HUMAN,
    LLMBAR,
    PRD,
    RECORDED,
    ArenaSection,
    BattleResult,
    HumanLabel,
    LLMBarReplay,
    PRDReplay,
    RecordedVerdict,
)
from llmjury.family import CaseSet, Dataset, Family, FamilyOptions, OptionSpec, Replayed
from llmjury.intervals import IntervalKind
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Result
from llmjury.providers.offline import Heuristic
from llmjury.running.settings import Settings


class Arena(Family[ArenaOptions, ArenaSection]):
    name = NAME
    options = ArenaOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({
        BATTLE: BattleResult, HUMAN: HumanLabel, RECORDED: RecordedVerdict, LLMBAR: LLMBarReplay, PRD: PRDReplay})
    section = ArenaSection
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({"judge": "the judge (--llm-judge)"})
    headline = ("rating", "swap_consistency")
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = {
        "rating": "rating", "elo": "rating", "rank": "rank", "swap_consistency": "proportion",
        "tie_rate": "proportion", "longer_wins_rate": "proportion"}
    datasets: ClassVar[tuple[Dataset, ...]] = datasets.DATASETS
    markers: ClassVar[Mapping[str, str]] = MappingProxyType(RECORDED_MARKERS)

    def case_sets(self) -> Mapping[str, CaseSet[ArenaOptions]]:
        from llmjury.families.arena import case_sets

        return case_sets.case_sets()

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> ArenaSection:
        from llmjury.families.arena import report

        return report.aggregate(verdicts)

    def markdown(self, section: ArenaSection) -> str:
        from llmjury.families.arena import report

        return report.markdown(section)

    def files(self, section: ArenaSection, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.arena import files

        return files.files(section, verdicts)

    def dataset_paths(self, options: FamilyOptions, settings: Settings) -> dict[str, Path]:
        """As the contract's, with `answers` (a ';'-separated list) standing for its first file."""
        paths = super().dataset_paths(options, settings)
        files = ArenaOptions.model_validate(options.model_dump()).answer_files()
        if files:
            paths["answers"] = files[0]
        return paths

    def provider_specs(self, options: ArenaOptions) -> Sequence[OptionSpec]:
        """The live contestants of `models`, so an `http:` model's body template is checked at start-up."""
        return [OptionSpec("models", entry, spec) for entry, spec in options.live_entries()]

    def replay(self, path: Path, options: FamilyOptions) -> Replayed:
        """Pairwise items with labels or recorded per-order verdicts, seed 002 outcome or record
        files, Chatbot Arena logs or MT-Bench judgements, told apart by their fields."""
        return recorded.read(path, ArenaOptions.model_validate(options.model_dump()))

    hidden_from_tables = ("leaderboards", "llmbar", "prd")


FAMILY = Arena()
