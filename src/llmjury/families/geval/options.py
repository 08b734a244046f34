"""`--llm-option geval.KEY=VALUE`: every key and value checked once, at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from llmjury.cases import slug
from llmjury.families.geval.criteria import parse_mapping, unknown
from llmjury.family import FamilyOptions

SHIPPED = ("topical_chat", "dstc9")
#: What G-Eval judges of a dialogue: the whole dialogue, or its last response.
Task = Literal["dialogue", "response"]
TASKS: dict[str, Task] = {"dialogue": "dialogue", "response": "response"}


class GEvalOptions(FamilyOptions):
    """Paths left unset are found under the suite's data root (`llm_data`) where it ships a copy."""

    #: Datasets to judge; default topical_chat,dstc9, or only your rated items when `items` is set.
    datasets: str | None = None
    tasks_topical_chat: str = "response"
    tasks_dstc9: str = "dialogue,response"
    criteria_topical_chat: str = "overall,naturalness,coherence,engagingness,groundedness"
    criteria_dstc9: str = "overall"
    topical_chat: str | None = None  # UniEval's form, seed 004's, or USR's per-annotator release
    dstc9: str | None = None  # the full DSTC9 file (original or restructured form)
    dstc9_models: str | None = None  # the aligned models/FlowScore file
    items: str | None = None  # your rated items (README: "Rated items"), or USR's release of any corpus
    items_name: str | None = None  # their dataset name in ids, markers and reports (default: the file's stem)
    items_tasks: str = "response"
    items_criteria: str | None = None  # default: every criterion the file rates
    items_dimensions: str | None = None  # DIMENSION=CRITERION,... for dimension names G-Eval does not know
    usr_annotations: str | None = None  # USR's per-annotator ratings of Topical-Chat items (human ceiling)
    unieval: str | None = None  # UniEval's recorded predictions on the Topical-Chat items
    closer_look: str | None = None  # folder of gpt-3.5's recorded G-Eval answers (Chiang & Lee)
    dep: str | None = None  # folder of DEP's recorded ratings
    scoring: Literal["auto", "logprobs", "sampling"] = "auto"
    # Bounds checked at start-up: a zero sample count or a negative logprob count is a usage error
    # naming the option, not an empty score or a provider's 400 on every case.
    n: int = Field(20, ge=1)  # samples a score when scoring=sampling
    temperature: float = Field(1.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    top_logprobs: int = Field(5, ge=1)
    steps_dir: str | None = None  # hand-written evaluation steps: <task>-<criterion>.txt (win over frozen ones)
    frozen_steps: str | None = None  # where generated steps are frozen (default: <data root>/geval/steps)
    deepeval_items: int = Field(60, ge=0)  # items per dataset compared with deepeval's GEval (0: none)

    @property
    def items_dataset(self) -> str | None:
        """The name your rated items go by: `items_name`, else the file's stem."""
        if not self.items:
            return None
        return slug(self.items_name or Path(self.items).name.split(".")[0])

    @property
    def selected(self) -> list[str]:
        if self.datasets is not None:
            return self.listed("datasets")
        return [self.items_dataset] if self.items_dataset else list(SHIPPED)

    def tasks(self, dataset: str) -> list[Task]:
        """The tasks to judge on `dataset` (each checked at start-up, when the options are parsed)."""
        return [TASKS[task] for task in self.listed_tasks(dataset)]

    def listed_tasks(self, dataset: str) -> list[str]:
        return self.listed("items_tasks" if dataset == self.items_dataset else f"tasks_{dataset}")

    def criteria(self, dataset: str) -> list[str] | None:
        """The criteria to judge on `dataset`; None: every criterion its file rates."""
        if dataset == self.items_dataset:
            return self.listed("items_criteria") if self.items_criteria else None
        return self.listed(f"criteria_{dataset}")

    @property
    def dimensions(self) -> dict[str, str]:
        return parse_mapping(self.items_dimensions)

    def listed(self, field: str) -> list[str]:
        return [x.strip() for x in (getattr(self, field) or "").split(",") if x.strip()]

    @model_validator(mode="after")
    def _check(self) -> GEvalOptions:
        """Rules across keys. Each message starts with the key at fault (`items_criteria: ...`), so the
        start-up error can name the line that set it."""
        if self.items_dataset in SHIPPED:
            key = "items_name" if self.items_name else "items"
            raise ValueError(f"{key}: {self.items_dataset!r} is a shipped dataset's name; "
                             "name your items after their corpus")
        known = [*SHIPPED, *([self.items_dataset] if self.items_dataset else [])]
        for name in self.selected:
            if name not in known:
                hint = "" if self.items else "; your own rated items: geval.items=PATH"
                raise ValueError(f"datasets: unknown dataset {name!r}; use {', '.join(known)}{hint}")
        for name in self.selected:
            own = name == self.items_dataset
            bad = [task for task in self.listed_tasks(name) if task not in TASKS]
            if bad:
                raise ValueError(f"{'items_tasks' if own else f'tasks_{name}'}: unknown task {bad[0]!r}; "
                                 "use dialogue and/or response")
            if unknown(self.criteria(name) or []):
                raise ValueError(f"{'items_criteria' if own else f'criteria_{name}'}: unknown criterion "
                                 f"{unknown(self.criteria(name) or [])[0]!r}; use any of overall, naturalness, "
                                 "coherence, engagingness, groundedness, understandability")
        try:
            parse_mapping(self.items_dimensions)  # a malformed mapping fails here, at start-up
        except ValueError as exc:
            raise ValueError(f"items_dimensions: {exc}") from None
        return self

