"""The socratic family's options (`--llm-option socratic.KEY=VALUE`) and the data files it reads."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from llmjury.family import Dataset, FamilyOptions

NAME = "socratic"


class SocraticOptions(FamilyOptions):
    """Defaults are seed 000's setup; every path is the user's file, else the suite's shipped copy."""

    dialogues: int = Field(100, ge=1)
    subsets: int = Field(200, ge=1)
    turns: int = Field(4, ge=1)
    positions: Literal["alternate", "random", "fixed"] = "alternate"
    aspects: Literal["overall", "separate"] = "overall"
    ours_name: str = "ours"
    baseline_name: str = "baseline"
    mrbench: str | None = None
    mrbench_format: Literal["auto", "v1", "v3"] = "auto"
    mrbench_name: str | None = None
    mrbench_pairs: int = Field(1, ge=1)
    mathdial: str | None = None
    mathdial_name: str | None = None
    mathdial_subsets: int = Field(100, ge=0)
    responses: str | None = None
    responses_name: str | None = None
    subsets_dir: str | None = None


DATASETS = (
    Dataset("mrbench", "mrbench", "tutor dialogues with human annotations of each tutor's reply (MRBench V1 or V3)",
            default="mrbench/MRBench_V1.json", formats=("mrbench-v1", "mrbench-v3")),
    Dataset("mathdial", "mathdial", "real teacher-student dialogues cut at student turns (MathDial JSON Lines)",
            default="mathdial/test.jsonl", formats=("mathdial",)),
    Dataset("responses", "responses", "pre-collected candidate and baseline replies to dialogue contexts "
            "(seed 000's endpoint responses file, or JSON Lines / CSV rows)",
            formats=("seed000-endpoint-responses", "rows")),
    Dataset("subsets", "subsets_dir", "seed 000's subsets folder: the dialogues a responses file's replies answer",
            formats=("seed000-subsets",)),
)

