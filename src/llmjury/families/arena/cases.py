"""Arena cases: one battle (question, model_a, model_b, round) per test."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Literal

from pydantic import Field

from llmjury.cases import Case, slug
from llmjury.families.arena import layout
from llmjury.family import FamilyOptions

FAMILY = "arena"
FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "arena"
DEFAULT_MODELS = "alpaca-13b,claude-v1,gpt-3.5-turbo,gpt-4,llama-13b,vicuna-13b-v1.3"


class ArenaOptions(FamilyOptions):
    """`--llm-option arena.KEY=VALUE`."""

    data: str = str(FIXTURES / "data")
    dataset: str = "mtbench"
    answers: str = str(FIXTURES / "cache" / "mtbench" / "q_and_as.csv")  # ';'-separated q_and_as.csv files
    models: str = DEFAULT_MODELS  # names with recorded answers, or provider specs that answer live
    experiment: str = "default"
    arrangement: str | None = None  # a battle_arrangement.csv to reproduce
    rounds: int = Field(1, ge=1)  # more rounds: each battle judged again with a new judge sample
    judge_prompt: Literal["seed", "mtbench-pair-v2"] = "seed"
    swap: bool = True  # judge both answer orders; disagreeing orders make a tie (MT-Bench's rule)
    anchor: str | None = None  # "model=rating" for Bradley-Terry; default: mean 1000
    questions_limit: int | None = None
    mrbench_pairs: int = Field(3, ge=1)

    def model_list(self) -> list[str]:
        return [m.strip() for m in self.models.split(",") if m.strip()]

    def answer_files(self) -> list[Path]:
        return [Path(p) for p in self.answers.split(";") if p.strip()]


class BattleCase(Case):
    family: str = FAMILY
    dataset: str
    question: str
    question_index: int
    model_a: str
    model_b: str
    round: int = 0

    def marks(self) -> list[str]:
        return [FAMILY, f"arena_{slug(self.dataset)}"]


def is_live(model: str) -> bool:
    """A model named by a provider spec answers live; a plain name must have recorded answers."""
    return ":" in model


def arrange(options: ArenaOptions) -> list[BattleCase]:
    """Seed 002's arrangement: per question, every pair among the models that answered (C(n1, 2),
    n1 >= 2), in question order then natural combination order; or a given arrangement file."""
    models = options.model_list()
    recorded: dict[str, dict[str, str]] = {}
    for path in options.answer_files():
        for question, row in layout.answers(path).items():
            recorded.setdefault(question, {}).update(row)
    if options.arrangement:
        battles = layout.arrangement(Path(options.arrangement))
        order = list(dict.fromkeys(q for q, _, _ in battles))
    else:
        order = layout.questions(Path(options.data) / options.dataset / "questions.csv")
        if options.questions_limit is not None:
            order = order[: options.questions_limit]
        battles = []
        for question in order:
            answered = [m for m in models if is_live(m) or m in recorded.get(question, {})]
            battles.extend((question, a, b) for a, b in itertools.combinations(answered, 2))
    index = {q: i for i, q in enumerate(order)}
    return [
        BattleCase(id=f"{slug(options.dataset)}-q{index[q]:03d}-{slug(a)}-vs-{slug(b)}"
                      + (f"-r{r}" if options.rounds > 1 else ""),
                   dataset=options.dataset, question=q, question_index=index[q], model_a=a, model_b=b, round=r)
        for r in range(options.rounds) for q, a, b in battles
    ]
