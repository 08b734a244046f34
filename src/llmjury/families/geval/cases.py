"""G-Eval cases: one (item, task, criterion) per test; criteria know their scale and human dimension."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict

from llmjury.cases import Case, slug
from llmjury.datasets import dialogue_items
from llmjury.datasets.dialogue_items import DialogueItem
from llmjury.errors import ConfigError
from llmjury.family import FamilyOptions

FAMILY = "geval"
Task = Literal["dialogue", "response"]
TASK_MARKS = {"dialogue": "whole_dialogue", "response": "next_response"}


@dataclass(frozen=True)
class Criterion:
    name: str
    low: int
    high: int
    label: str  # as the evaluation form names it

    @property
    def scale(self) -> range:
        return range(self.low, self.high + 1)


CRITERIA = {
    "overall": Criterion("overall", 1, 5, "Overall Quality"),
    "naturalness": Criterion("naturalness", 1, 3, "Naturalness"),
    "coherence": Criterion("coherence", 1, 3, "Coherence"),
    "engagingness": Criterion("engagingness", 1, 3, "Engagingness"),
    "groundedness": Criterion("groundedness", 0, 1, "Groundedness"),
    "understandability": Criterion("understandability", 0, 1, "Understandability"),
}
PAPER_CRITERIA = ("naturalness", "coherence", "engagingness", "groundedness")
TOPICAL_CHAT_SYSTEMS = ("Original Ground Truth", "Argmax Decoding", "Nucleus Decoding (p = 0.3)",
                        "Nucleus Decoding (p = 0.5)", "Nucleus Decoding (p = 0.7)", "New Human Generated")


class GEvalOptions(FamilyOptions):
    """`--llm-option geval.KEY=VALUE`."""

    model_config = ConfigDict(extra="forbid")
    datasets: str = "topical_chat,dstc9"
    tasks_topical_chat: str = "response"
    tasks_dstc9: str = "dialogue,response"
    criteria_topical_chat: str = "overall,naturalness,coherence,engagingness,groundedness"
    criteria_dstc9: str = "overall"
    topical_chat: str | None = None  # path to a full or restructured Topical-Chat USR file
    dstc9: str | None = None  # path to the full DSTC9 file (original or restructured form)
    dstc9_models: str | None = None  # the aligned models/FlowScore file
    scoring: Literal["auto", "logprobs", "sampling"] = "auto"
    n: int = 20
    temperature: float = 1.0
    top_p: float = 1.0
    top_logprobs: int = 5
    steps_dir: str | None = None  # hand-written evaluation steps: <task>-<criterion>.txt (win over frozen ones)
    frozen_steps: str = str(dialogue_items.FIXTURES / "geval" / "steps")  # generated once, then reused
    deepeval_items: int = 60  # items per dataset compared with deepeval's GEval (one per context first)
    # USR's per-annotator ratings (human ceiling) and gpt-3.5's recorded G-Eval answers (replay):
    # samples ship (no license upstream); point these at the full files for the full figures.
    usr_annotations: str | None = str(dialogue_items.FIXTURES / "usr_sample" / "tc_usr_data.json")
    closer_look: str | None = str(dialogue_items.FIXTURES / "closer_look_sample")

    def listed(self, field: str) -> list[str]:
        return [x.strip() for x in getattr(self, field).split(",") if x.strip()]


class GEvalCase(Case):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    family: str = FAMILY
    item: DialogueItem
    task: Task
    criterion: str

    def marks(self) -> list[str]:
        marks = [FAMILY, f"geval_{self.item.dataset}", TASK_MARKS[self.task], f"criterion_{self.criterion}"]
        if self.item.system_id:
            marks.append(f"system_{slug(self.item.system_id)}")
        return marks


def load_items(dataset: str, options: GEvalOptions) -> list[DialogueItem]:
    if dataset == "topical_chat":
        return dialogue_items.topical_chat(Path(options.topical_chat) if options.topical_chat else None)
    if dataset == "dstc9":
        return dialogue_items.dstc9(Path(options.dstc9) if options.dstc9 else None,
                                    Path(options.dstc9_models) if options.dstc9_models else None)
    raise ConfigError(f"geval.datasets: unknown dataset {dataset!r}; use topical_chat and/or dstc9")


def geval_cases(options: GEvalOptions) -> list[GEvalCase]:
    cases = []
    for dataset in options.listed("datasets"):
        items = load_items(dataset, options)
        for task in options.listed(f"tasks_{dataset}"):
            if task not in TASK_MARKS:
                raise ConfigError(f"geval.tasks_{dataset}: unknown task {task!r}; use dialogue and/or response")
            for criterion in options.listed(f"criteria_{dataset}"):
                if criterion not in CRITERIA:
                    raise ConfigError(f"geval.criteria_{dataset}: unknown criterion {criterion!r}; "
                                      f"use any of {sorted(CRITERIA)}")
                cases += [GEvalCase(id=f"{item.id}-{task}-{criterion}", item=item, task=task, criterion=criterion)
                          for item in items]
    return cases


def markers() -> dict[str, str]:
    names = {"geval_topical_chat": "G-Eval items from Topical-Chat USR", "geval_dstc9": "G-Eval items from DSTC9",
             "whole_dialogue": "whole-dialogue evaluation", "next_response": "next-response evaluation",
             "deepeval": "comparison with deepeval's GEval", "recorded": "scores replayed from a recorded judge"}
    names |= {f"criterion_{c}": f"G-Eval criterion {c}" for c in CRITERIA}
    names |= {f"system_{slug(s)}": f"responses from {s}" for s in TOPICAL_CHAT_SYSTEMS}
    names |= {f"system_chatbot{i}": f"DSTC9 chatbot {i}" for i in range(1, 12)}
    return names
