"""`--llm-option qa_quality.KEY=VALUE`: which Q&A data to grade and what a `remove` grade does."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from llmjury.family import FamilyOptions


class QAOptions(FamilyOptions):
    """Defaults are seed 001's BatchConfig where it has one; a path left unset falls back to the copy
    under the data root (`llm_data`), if the suite ships one."""

    export: str | None = None  # a folder of course folders of Slack JSON (seed 001's export)
    semeval: str | None = None  # SemEval-2016 subtask A question-comment pairs with human labels
    pairs: str | None = None  # your own Q&A pairs: JSON Lines, a JSON list or CSV (README: "Q&A pairs")
    pairs_name: str | None = Field(None, min_length=1)  # the pairs' dataset name; the file's stem otherwise
    format: Literal["auto", "pairs", "semeval"] = "auto"  # the shape of the `pairs` file; auto: told by its fields
    on_remove: Literal["fail", "xfail"] = "fail"  # what a pair graded `remove` does to its test
    max_retries: int = Field(3, ge=1)  # judge attempts for invalid structured output (seed: max_retries)
    output_tokens: int = Field(150, ge=1)  # expected output tokens a pair, for the dry-run estimate (seed 8.2)
