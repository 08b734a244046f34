"""Socratic cases: subsets of simulated dialogues, and MRBench tutor pairs, as test cases."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, Field

from llmjury.cases import Case, slug
from llmjury.errors import ConfigError
from llmjury.families.socratic.data import Persona, opening_questions, personas
from llmjury.family import FamilyOptions

FAMILY = "socratic"
MAX_CUT_MARKER = 20


class SocraticOptions(FamilyOptions):
    """`--llm-option socratic.KEY=VALUE`; defaults are seed 000's setup."""

    dialogues: int = Field(100, ge=1)
    subsets: int = Field(200, ge=1)
    turns: int = Field(4, ge=1)
    positions: Literal["alternate", "random", "fixed"] = "alternate"
    aspects: Literal["overall", "separate"] = "overall"
    ours_name: str = "ours"
    baseline_name: str = "baseline"
    mrbench: str | None = None  # path to MRBench_V1.json; the shipped copy otherwise
    mrbench_pairs: int = Field(1, ge=1)  # tutor pairs judged per conversation
    mathdial: str | None = None  # path to a MathDial JSONL file; the shipped test split otherwise
    mathdial_subsets: int = Field(100, ge=0)  # real dialogue subsets compared


class DialoguePlan(BaseModel):
    """Everything that determines one simulated dialogue, fixed at collection time."""

    index: int
    persona: Persona
    subject: str
    question: str
    turns: int
    seed: int


class SubsetCase(Case):
    """A simulated dialogue cut after its `cut`-th student utterance."""

    family: str = FAMILY
    dialogue: DialoguePlan
    cut: int

    def marks(self) -> list[str]:
        p = self.dialogue.persona
        marks = [FAMILY, "simulated", self.dialogue.subject, f"year_{p.year}",
                 f"goal_commitment_{p.goal_commitment}", f"motivation_{p.motivation}",
                 f"self_efficacy_{p.self_efficacy}"]
        return marks + ([f"cut_{self.cut}"] if self.cut <= MAX_CUT_MARKER else [])


def simulated_cases(options: SocraticOptions, seed: int) -> list[SubsetCase]:
    """N dialogue plans and M subsets cut at random student turns, all seeded (seed 000 steps 1-2)."""
    rng = random.Random(seed)
    people, questions = personas(), opening_questions()
    plans = []
    for index in range(options.dialogues):
        subject, question = rng.choice(questions)
        plans.append(DialoguePlan(index=index, persona=rng.choice(people), subject=subject, question=question,
                                  turns=options.turns, seed=seed * 1_000_003 + index))
    slots = [(d, cut) for d in range(options.dialogues) for cut in range(1, options.turns + 1)]
    if options.subsets > len(slots):
        raise ConfigError(f"socratic.subsets={options.subsets}: {options.dialogues} dialogues of "
                          f"{options.turns} turns allow at most {len(slots)} distinct subsets")
    chosen = sorted(rng.sample(slots, options.subsets))
    return [
        SubsetCase(id=f"sim-d{d:03d}-cut{cut}-{slug(plans[d].subject)}-{plans[d].persona.id}",
                   dialogue=plans[d], cut=cut)
        for d, cut in chosen
    ]


def markers() -> dict[str, str]:
    """Every marker socratic cases carry, for registration under --strict-markers."""
    names = {"simulated": "socratic cases from simulated student dialogues",
             "mrbench": "cases from MRBench's human-annotated tutor responses",
             "mathdial": "socratic cases cut from real MathDial tutoring dialogues"}
    for subject in dict(opening_questions()):
        names[subject] = f"opening question about {subject.replace('_', ' ')}"
    for year in range(1, 5):
        names[f"year_{year}"] = f"simulated student in year {year}"
    for dim in ("goal_commitment", "motivation", "self_efficacy"):
        for level in ("low", "high"):
            names[f"{dim}_{level}"] = f"simulated student with {level} {dim.replace('_', ' ')}"
    for cut in range(1, MAX_CUT_MARKER + 1):
        names[f"cut_{cut}"] = f"dialogue cut after student turn {cut}"
    return names
