"""The adversarial corpus of judge answers and the one way it is run end to end, shared by
`tests/test_adversarial.py` (which asserts) and `bench/adversarial.py` (which prints the counts).

Each row says what the judge decided (`truth`, None when it decided nothing) and what a parser
must read (`expected`: the truth, or None for unscored). End to end, a fake OpenAI-compatible
server answers each row through its family's judge call path; asked for its decision alone (the
repair call), it gives its real decision in the prompt's format. The verdict parsers' rows also run
in schema mode (`FIELDS`, llmjury.running.decision_field): the same free text to a schema request, and each
text as the reasoning of a schema answer whose decision field holds the truth.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llmjury.errors import JudgeParseError
from llmjury.families.arena.judge import OUTCOME_LABELS, PAIR_FIELD, SCORE_FIELD, parse_pair, read_scores
from llmjury.families.qa_quality.evaluation import DIMENSIONS, QualityEvaluation
from llmjury.families.socratic.decision import DECISION_FIELD, parse_decision
from llmjury.judgement.geval_scoring import parse_score
from llmjury.judgement.judges import CHOICE_FIELD, CHOICE_LABELS, RubricScore, parse_choice, schema_parser
from llmjury.jurors import JurySpec
from llmjury.running.engine import Engine
from llmjury.testing import FakeOpenAI
from llmjury.testing.fake_openai import ServerBehaviour

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "adversarial" / "judge_answers.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
PARSERS: dict[str, Callable[[str], Any]] = {
    "socratic": parse_decision,
    "arena_scores": read_scores,
    "mtbench_pair": parse_pair,
    "geval": lambda text: parse_score(text, range(1, 6)),
    "core_choice": parse_choice,
    "structured": lambda text: schema_parser(RubricScore)(text).score,
    "qa_quality": lambda text: [getattr(schema_parser(QualityEvaluation)(text), d).score for d in DIMENSIONS],
}
#: The verdict parsers whose judges ask for a schema field where the provider takes one.
FIELDS = {"socratic": DECISION_FIELD, "core_choice": CHOICE_FIELD, "mtbench_pair": PAIR_FIELD,
          "arena_scores": SCORE_FIELD}
#: The family whose verdicts each parser decides (`core_choice` is `jury.compare`, `structured` `jury.score`).
FAMILY_OF = {"socratic": "socratic", "arena_scores": "arena", "mtbench_pair": "arena", "geval": "geval",
             "core_choice": "custom", "structured": "custom", "qa_quality": "qa_quality"}
#: The counts per parser, in the closing note's order.
COLUMNS = ("entries", "kept", "flips", "wrongly_scored", "unscored", "lost", "repaired")
REPAIR_ASK = "Your answer above has no decision"


def parsed(parser: str, text: str) -> Any:
    """What `parser` reads from `text`, or None when it refuses (unscored)."""
    try:
        return PARSERS[parser](text)
    except JudgeParseError:
        return None


def repair_answer(parser: str, truth: Any) -> str:
    """What a judge asked for its decision alone says: its real decision in the prompt's format."""
    if truth is None:
        return "I cannot say."
    return {
        "socratic": lambda: f"### ({truth})",
        "core_choice": lambda: f"### {truth.upper() if truth != 'tie' else 'tie'}",
        "mtbench_pair": lambda: {"model_a": "[[A]]", "model_b": "[[B]]", "tie": "[[C]]"}[truth],
        "arena_scores": lambda: "- Score of Model 1: {}\n- Score of Model 2: {}".format(
            *{"model_a": (1, 0), "model_b": (0, 1), "tie": (1, 1), "tie (bothbad)": (0, 0)}[truth]),
        "geval": lambda: str(truth),
        "structured": lambda: json.dumps({"reasoning": "repaired", "score": truth}),
        "qa_quality": lambda: json.dumps({**{d: {"score": s, "reasoning": "r"}
                                             for d, s in zip(DIMENSIONS, truth, strict=True)},
                                          "overall_quality": "medium"}),
    }[parser]()


def corpus_server(rows: list[dict[str, Any]], parser: str, as_field: bool = False) -> FakeOpenAI:
    """A server answering each row's prompt (`item-<i>-` in it) with the row's text, and a repair
    call with the row's real decision; `as_field`: the text as a schema answer's reasoning, with
    the row's real decision in its decision field."""
    def reply(body: dict[str, Any], index: int) -> str:
        messages = body["messages"]
        found = re.search(r"item-(\d+)-", "\n".join(m["content"] for m in messages))
        assert found is not None, "every corpus prompt names its row"
        row = rows[int(found.group(1))]
        if messages[-1]["content"].startswith(REPAIR_ASK):
            return repair_answer(parser, row["truth"])
        if as_field:
            value = next(v for v, decision in FIELDS[parser].values.items() if decision == row["truth"])
            return json.dumps({"reasoning": row["text"], "decision": value})
        return row["text"]

    return FakeOpenAI(reply, behaviour=ServerBehaviour(digit_tokens=True))


async def judge_row(jury: Any, parser: str, i: int, schema: bool = False) -> tuple[Any, bool]:
    """One row through its family's judge call path: (decision or None, decided by a repair call)."""
    from llmjury.judgement.judges import geval_score, pairwise, structured

    item = f"item-{i}-"
    pair = {
        "socratic": dict(template="socratic/judge.j2", slots=("teacher_a_response", "teacher_b_response"),
                         variables={"dialogue_history": item}, parse=parse_decision,
                         labels={"a": 0, "b": 1, "c": "c"}, names=("a", "b")),
        "core_choice": dict(template="core/compare.j2", variables={"criteria": "correct", "question": item},
                            parse=parse_choice, labels=CHOICE_LABELS, names=("a", "b")),
        "mtbench_pair": dict(template="arena/mtbench_pair_v2.j2", system="arena/mtbench_pair_v2_system.j2",
                             slots=("answer_a", "answer_b"), variables={"question": item}, parse=parse_pair,
                             labels=OUTCOME_LABELS, names=("model_a", "model_b")),
        "arena_scores": dict(template="arena/judge.j2", slots=("answer_a", "answer_b"), variables={"question": item},
                             parse=read_scores, labels=OUTCOME_LABELS, names=("model_a", "model_b")),
    }
    if parser in pair:
        judged = await pairwise(jury, "custom", "first", "second", orders=["ab"], **pair[parser],
                                decisions=FIELDS[parser] if schema else None)
        (run,) = judged.runs
        return run.winner, run.repaired
    if parser == "geval":
        prompt = jury.render("core/geval.j2", criterion="Coherence", steps="1. Read.", context="", text=item,
                             form="Coherence", low=1, high=5)
        scored = await geval_score(jury, "custom", prompt, range(1, 6), scoring="sampling", n=1)
        return (round(scored.result.score, 6) if scored.result else None), scored.repaired > 0
    if parser == "structured":
        prompt = jury.render("core/score.j2", response=item, rubric="correct", question="", low=1, high=5,
                             fields="- reasoning: string\n- score: integer")
        (answer,) = (await structured(jury, "custom", prompt, RubricScore)).answers
        return (answer.parsed.score if answer.scored else None), answer.repaired
    prompt = jury.render("qa_quality/judge.j2", qa=item)
    (answer,) = (await structured(jury, "custom", prompt, QualityEvaluation)).answers
    return ([getattr(answer.parsed, d).score for d in DIMENSIONS] if answer.scored else None), answer.repaired


def run_corpus(make_engine: Callable[[], Engine], parser: str, schema: bool = False,
               as_field: bool = False) -> tuple[Counter[str], list[str]]:
    """Every row of `parser` end to end: the counts (`COLUMNS`) and a line per row read wrongly
    (a flip, a score from no decision, or a clear decision lost). `schema`: the verdict judge asks
    for its decision field; `as_field`: the rows where the judge decided, answered as the field."""
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    counts: Counter[str] = Counter({column: 0 for column in COLUMNS})
    wrong: list[str] = []
    with corpus_server(ROWS, parser, as_field) as server:
        engine = make_engine()
        engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
        jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
        mine = [i for i, row in enumerate(ROWS) if row["parser"] == parser and not (as_field and row["truth"] is None)]

        async def every_row() -> list[tuple[Any, bool]]:
            return await asyncio.gather(*(judge_row(jury, parser, i, schema) for i in mine))

        for i, (decision, repaired) in zip(mine, engine.run(every_row()), strict=True):
            row = ROWS[i]
            counts["entries"] += 1
            if decision is None:
                counts["unscored"] += 1
                if row["expected"] is not None:
                    counts["lost"] += 1
                    wrong.append(f"{i} {row['note']}: lost the clear decision {row['expected']!r}")
                continue
            counts["repaired"] += bool(repaired)
            if decision == row["truth"]:
                counts["kept"] += 1
            elif row["truth"] is None:
                counts["wrongly_scored"] += 1
                wrong.append(f"{i} {row['note']}: scored {decision!r} where the judge decided nothing")
            else:
                counts["flips"] += 1
                wrong.append(f"{i} {row['note']}: {decision!r} != {row['truth']!r}")
        if parser in FIELDS:  # the structured parsers ask for their own schema in either mode
            formats = {(r.get("response_format") or {}).get("type") for r in server.requests}
            assert formats == ({"json_schema"} if schema else {None}), formats
    return counts, wrong
