"""`--llm-option arena.KEY=VALUE`: the arena's settings, checked once at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from llmjury.family import FamilyOptions

DEFAULT_MODELS = "alpaca-13b,claude-v1,gpt-3.5-turbo,gpt-4,llama-13b,vicuna-13b-v1.3"


class ArenaOptions(FamilyOptions):
    """Paths left unset are found under the suite's data root (`llm_data`), see `datasets.py`."""

    data: str | None = None  # folder of <dataset>/questions.csv (seed 002's data/)
    dataset: str = "mtbench"
    answers: str | None = None  # ';'-separated q_and_as.csv files
    models: str = DEFAULT_MODELS  # names with recorded answers, or provider specs that answer live
    experiment: str = "default"
    arrangement: str | None = None  # a battle_arrangement.csv to reproduce
    rounds: int = Field(1, ge=1)  # more rounds: each battle judged again with a new judge sample
    judge_prompt: Literal["seed", "mtbench-pair-v2"] = "seed"
    swap: bool = True  # judge both answer orders; disagreeing orders make a tie (MT-Bench's rule)
    anchor: str | None = None  # "model=rating" for Bradley-Terry; default: mean 1000
    questions_limit: int | None = Field(None, ge=1)
    mrbench: str | None = None  # an MRBench JSON file (V1 or V3 shape)
    mrbench_name: str | None = None  # default: "mrbench" for the shipped file, else the file's stem
    mrbench_pairs: int = Field(3, ge=1)
    pairs: str | None = None  # a file of pairwise items (JSONL, JSON list or CSV)
    pairs_name: str | None = None  # default: the file's stem
    prd: str | None = None  # PRD's folder (ratings-human/, reviewers/)
    llmbar: str | None = None  # LLMBar's folder (judges/)

    def model_list(self) -> list[str]:
        return [m.strip() for m in self.models.split(",") if m.strip()]

    def answer_files(self) -> list[Path]:
        return [Path(p.strip()) for p in (self.answers or "").split(";") if p.strip()]
