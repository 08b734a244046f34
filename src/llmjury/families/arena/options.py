"""`--llm-option arena.KEY=VALUE`: the arena's settings, checked once at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr, model_validator

from llmjury.errors import ConfigError
from llmjury.families.arena.cases import is_live
from llmjury.families.arena.mapping import Frame, PairMapping, parse_columns, parse_labels
from llmjury.family import FamilyOptions
from llmjury.providers.base import ProviderSpec

DEFAULT_MODELS = "alpaca-13b,claude-v1,gpt-3.5-turbo,gpt-4,llama-13b,vicuna-13b-v1.3"


class ArenaOptions(FamilyOptions):
    """Paths left unset are found under the suite's data root (`llm_data`), see `datasets.py`."""

    data: str | None = None  # folder of <dataset>/questions.csv (seed 002's data/)
    dataset: str = "mtbench"
    answers: str | None = None  # ';'-separated q_and_as.csv files
    #: Names with recorded answers, or provider specs that answer live (`NAME=SPEC` names one; a bare
    #: spec is named by its model, `openai:gpt-4o-mini` → `gpt-4o-mini`).
    models: str = DEFAULT_MODELS
    experiment: str = "default"
    arrangement: str | None = None  # a battle_arrangement.csv to reproduce
    rounds: int = Field(1, ge=1)  # each round draws battles_per_round new battles
    battles_per_round: int | None = Field(None, ge=1)  # default: every battle of the arrangement, in one round
    judge_prompt: Literal["seed", "mtbench-pair-v2"] = "seed"
    swap: bool = True  # judge both answer orders; disagreeing orders make a tie (MT-Bench's rule)
    anchor: str | None = None  # "model=rating" for Bradley-Terry; default: mean 1000
    questions_limit: int | None = Field(None, ge=1)
    mrbench: str | None = None  # an MRBench JSON file (V1 or V3 shape)
    mrbench_name: str | None = None  # default: "mrbench" for the shipped file, else the file's stem
    mrbench_pairs: int = Field(3, ge=1)
    pairs: str | None = None  # a file of pairwise items (JSONL, JSON list or CSV)
    pairs_name: str | None = None  # default: the file's stem
    pairs_columns: str | None = None  # PROMPT,ANSWER_A,ANSWER_B[,LABEL]: the file's columns (mapping.py)
    pairs_labels: str | None = None  # VALUE:SIDE,... e.g. 0:a,1:b,2:tie: what each label value means
    pairs_verdicts_ab: str | None = None  # a judge's verdicts with answer A shown first, one row per item
    pairs_verdicts_ba: str | None = None  # the same judge's verdicts with answer B shown first
    pairs_ba_frame: Frame | None = None  # how pairs_verdicts_ba names the answers: as_shown or as_items
    prd: str | None = None  # PRD's folder (ratings-human/, reviewers/)
    llmbar: str | None = None  # LLMBar's folder (judges/)
    #: The live contestants' provider specs, parsed with the options: by the name battles give them.
    _live: dict[str, ProviderSpec] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _parse_live(self) -> ArenaOptions:
        """A live contestant's spec is parsed now, so a typo stops the run at start-up, not every battle;
        two contestants under one name would merge in every table, so that stops it too."""
        names: dict[str, str] = {}
        for entry in self._entries():
            name, spec = contestant(entry)
            if name in names:
                raise ValueError(f"models: {names[name]!r} and {entry!r} are both named {name!r}; name each "
                                 f"live model with NAME=SPEC (e.g. {name}-2={entry.partition('=')[2] or entry})")
            names[name] = entry
            if spec is not None:
                try:
                    self._live[name] = ProviderSpec.parse(spec)
                except ConfigError as exc:
                    raise ValueError(f"models: {exc}") from None
        return self

    @model_validator(mode="after")
    def _check_rounds(self) -> ArenaOptions:
        """A second round of the full arrangement would ask the same judge prompts again: rounds draw new battles."""
        if self.rounds > 1 and self.battles_per_round is None:
            raise ValueError(f"rounds: {self.rounds} rounds need arena.battles_per_round=N: the first round already "
                             "holds every pairing of every question, so each round draws N new battles (new "
                             "pairings and questions) and a run with more rounds pays only for the new ones")
        return self

    @model_validator(mode="after")
    def _check_pairs(self) -> ArenaOptions:
        """The pairwise mapping is read now, so a malformed one stops the run at start-up. Each message
        starts with the key at fault, so the start-up error names the line that set it."""
        for key, parse in (("pairs_columns", parse_columns), ("pairs_labels", parse_labels)):
            value = getattr(self, key)
            if value is not None:
                try:
                    parse(value)
                except ValueError as exc:
                    raise ValueError(f"{key}: {exc}") from None
        if self.pairs_verdicts_ba and self.pairs_ba_frame is None:
            raise ValueError("pairs_verdicts_ba: declare how its labels name the answers with arena.pairs_ba_frame="
                             "as_shown (the order the judge saw: its first answer is the item's answer B) or "
                             "as_items (the item's own answer A and B)")
        return self

    def pair_mapping(self) -> PairMapping:
        """The declared columns and label values of the pairwise file (none declared: the defaults)."""
        return PairMapping(columns=parse_columns(self.pairs_columns) if self.pairs_columns else {},
                           labels=parse_labels(self.pairs_labels) if self.pairs_labels else None)

    def _entries(self) -> list[str]:
        return [m.strip() for m in self.models.split(",") if m.strip()]

    def model_list(self) -> list[str]:
        """The contestants by the names every table gives them."""
        return [contestant(entry)[0] for entry in self._entries()]

    def live(self, model: str) -> ProviderSpec | None:
        """The provider a live contestant names (parsed at start-up); None for a recorded model."""
        return self._live.get(model)

    def live_entries(self) -> list[tuple[str, ProviderSpec]]:
        """Each live contestant's entry as written, with its parsed spec (for start-up's checks)."""
        return [(entry, self._live[name]) for entry in self._entries() if (name := contestant(entry)[0]) in self._live]

    def all_live(self) -> bool:
        return all(name in self._live for name in self.model_list())

    def answer_files(self) -> list[Path]:
        return [Path(p.strip()) for p in (self.answers or "").split(";") if p.strip()]


def contestant(entry: str) -> tuple[str, str | None]:
    """An `arena.models` entry as (name, spec): `NAME=SPEC`, a bare spec (named by its model, without
    the provider's prefix or options), or a recorded model's name (no spec)."""
    head, eq, rest = entry.partition("=")
    if eq and ":" not in head and ";" not in head:
        return head.strip(), rest.strip()
    if is_live(entry):
        return entry.partition(":")[2].partition(";")[0].strip() or entry, entry
    return entry, None
