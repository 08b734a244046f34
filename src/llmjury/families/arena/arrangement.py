"""Seed 002's arrangement: per question, every pair among the models that answered (C(n1, 2),
n1 >= 2), in question order then natural combination order; or a given arrangement file.

What the arrangement leaves out is counted, never silent: repeated questions (the seed's data
questions may repeat, a run's are unique), q_and_as rows merged because they repeat a question's
text, and battles a model misses for want of a recorded answer.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from llmjury.cases import slug
from llmjury.families.arena import datasets, layout
from llmjury.families.arena.cases import FAMILY, BattleCase, is_live
from llmjury.families.arena.options import ArenaOptions
from llmjury.loading import LoadCounter, LoadReport
from llmjury.running.settings import Settings


def recorded_answers(files: list[Path], counter: LoadCounter | None = None) -> dict[str, dict[str, str]]:
    """{question: {model: answer}} over every q_and_as file, later files adding models."""
    table: dict[str, dict[str, str]] = {}
    for path in files:
        for question, row in layout.answers(path, counter).items():
            table.setdefault(question, {}).update(row)
    return table


def arrange(options: ArenaOptions, settings: Settings) -> tuple[list[BattleCase], LoadReport]:
    """The run's battles (every round) and what arranging them left out."""
    counter = LoadCounter()
    models = options.model_list()
    recorded = recorded_answers(datasets.answer_files(options, settings), counter)
    if options.arrangement:
        source = Path(options.arrangement)
        battles = layout.arrangement(source)
        order = list(dict.fromkeys(q for q, _, _ in battles))
    else:
        source = datasets.questions_file(options, settings)
        listed = layout.question_rows(source)
        order = list(dict.fromkeys(listed))
        counter.drop("repeated question", len(listed) - len(order))
        if options.questions_limit is not None:
            counter.drop("beyond questions_limit", max(len(order) - options.questions_limit, 0))
            order = order[: options.questions_limit]
        battles = []
        for question in order:
            answered = [m for m in models if is_live(m) or m in recorded.get(question, {})]
            counter.drop("battle left out: a model has no (or an empty) recorded answer",
                         _pairs(len(models)) - _pairs(len(answered)))
            battles.extend((question, a, b) for a, b in itertools.combinations(answered, 2))
    index = {q: i for i, q in enumerate(order)}
    name = slug(options.dataset)
    cases = [
        BattleCase(id=f"{name}-q{index[q]:03d}-{slug(a)}-vs-{slug(b)}" + (f"-r{r}" if options.rounds > 1 else ""),
                   dataset=options.dataset, question=q, question_index=index[q], model_a=a, model_b=b, round=r)
        for r in range(options.rounds) for q, a, b in battles
    ]
    return cases, counter.report(FAMILY, options.dataset, source, len(cases))


def _pairs(n: int) -> int:
    return n * (n - 1) // 2
