"""Socratic cases: simulated dialogue subsets, real (MathDial) subsets, annotated tutor pairs
(MRBench) and pre-collected reply pairs, each a test case with its markers."""

from __future__ import annotations

import random

from pydantic import Field

from llmjury.cases import Case, slug
from llmjury.errors import ConfigError
from llmjury.families.socratic.data import opening_questions, personas
from llmjury.families.socratic.dialogue import DialoguePlan, Turn
from llmjury.families.socratic.options import NAME, SocraticOptions

MAX_CUT_MARKER = 20


class SubsetCase(Case):
    """A simulated dialogue cut after its `cut`-th student utterance."""

    family: str = NAME
    dialogue: DialoguePlan
    cut: int

    def marks(self) -> list[str]:
        p = self.dialogue.persona
        marks = [NAME, "simulated", self.dialogue.subject, f"year_{p.year}",
                 f"goal_commitment_{p.goal_commitment}", f"motivation_{p.motivation}",
                 f"self_efficacy_{p.self_efficacy}"]
        return marks + ([f"cut_{self.cut}"] if self.cut <= MAX_CUT_MARKER else [])


class RealSubsetCase(Case):
    """A real (MathDial) dialogue cut after its `cut`-th student turn."""

    family: str = NAME
    dataset: str
    qid: str
    turns: list[tuple[str, str]]
    cut: int
    outcome: str

    def marks(self) -> list[str]:
        return [NAME, "mathdial", slug(self.dataset)]

    def context(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.turns]


class TutorPairCase(Case):
    """Two tutors' replies to one annotated conversation, with the people's preference between them."""

    family: str = NAME
    dataset: str
    conversation_id: str
    corpus: str
    history: list[tuple[str, str]]
    tutor_a: str
    tutor_b: str
    response_a: str
    response_b: str
    human: str
    human_by_dimension: dict[str, str]

    def marks(self) -> list[str]:
        return [NAME, "mrbench", slug(self.dataset)]

    def turns(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.history]


class ResponsePairCase(Case):
    """A dialogue context with our tutor's and the baseline's replies already collected."""

    family: str = NAME
    dataset: str
    subset_id: str
    history: list[tuple[str, str]]
    ours: str
    baseline: str
    #: Other subset ids whose dialogue and replies are this item's, text for text: judged and counted once.
    same_as: list[str] = Field(default_factory=list)

    def marks(self) -> list[str]:
        return [NAME, "responses", slug(self.dataset)]

    def turns(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.history]


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
