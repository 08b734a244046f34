"""Seed 002's arrangement: per question, every pair among the models that answered (C(n1, 2),
n1 >= 2), in question order then natural combination order; or a given arrangement file.

Rounds (`arena.rounds`, `arena.battles_per_round=N`) draw battles from that arrangement: one seeded
shuffle of it (by the run's seed and the dataset), round r taking its r-th slice of N. A run with
more rounds therefore holds every battle of a run with fewer, under the same case ids, and adds new
pairings and questions: their judge calls are the only new ones (the rest replay from the cache).
Without `battles_per_round` the one round is the whole arrangement in its own order.

What the arrangement leaves out is counted, never silent: repeated questions (the seed's data
questions may repeat, a run's are unique), q_and_as rows merged because they repeat a question's
text, and battles a model misses for want of a recorded answer.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from llmjury.cases import slug
from llmjury.errors import ConfigError
from llmjury.families.arena import datasets, layout
from llmjury.families.arena.cases import FAMILY, BattleCase
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
    recorded_models = [m for m in models if options.live(m) is None]
    if recorded_models and not recorded and not options.arrangement:
        raise ConfigError(f"arena.models: {', '.join(recorded_models)} need(s) recorded answers, and arena.answers is "
                          f"unset and the data root has no q_and_as.csv for dataset {options.dataset!r}; name each "
                          "model by a provider spec (NAME=openai:MODEL) to have it answer, or give recorded answers "
                          "with arena.answers=q_and_as.csv")
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
            answered = [m for m in models if options.live(m) is not None or m in recorded.get(question, {})]
            counter.drop("battle left out: a model has no (or an empty) recorded answer",
                         _pairs(len(models)) - _pairs(len(answered)))
            battles.extend((question, a, b) for a, b in itertools.combinations(answered, 2))
    index = {q: i for i, q in enumerate(order)}
    name = slug(options.dataset)
    drawn = rounds(battles, options, settings.seed)
    counter.drop("battle not drawn in any round (rounds x battles_per_round)", len(battles) - len(drawn))
    cases = [BattleCase(id=f"{name}-q{index[q]:03d}-{slug(a)}-vs-{slug(b)}", dataset=options.dataset, question=q,
                        question_index=index[q], model_a=a, model_b=b, round=r) for r, (q, a, b) in drawn]
    return cases, counter.report(FAMILY, options.dataset, source, len(cases))


def rounds(battles: list[tuple[str, str, str]], options: ArenaOptions,
           seed: int) -> list[tuple[int, tuple[str, str, str]]]:
    """The battles each round draws, as (round, battle): the whole arrangement in one round, or
    `battles_per_round` a round from one seeded shuffle, so later rounds only add battles."""
    if options.battles_per_round is None:
        return [(0, battle) for battle in battles]
    shuffled = list(dict.fromkeys(battles))
    random.Random(f"{seed}:{options.dataset}").shuffle(shuffled)
    per = options.battles_per_round
    return [(i // per, battle) for i, battle in enumerate(shuffled[: per * options.rounds])]


def _pairs(n: int) -> int:
    return n * (n - 1) // 2
