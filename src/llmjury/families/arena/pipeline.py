"""The arena's live judge: a battle's two answers (recorded or live), judged in both orders."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from llmjury.chat import ChatRequest, Message
from llmjury.errors import ProviderError
from llmjury.families.arena import datasets
from llmjury.families.arena.arrangement import recorded_answers
from llmjury.families.arena.cases import FAMILY, BattleCase, PairCase, TutorBattleCase
from llmjury.families.arena.judge import (
    OUTCOME_LABELS,
    PAIR_CHOICE,
    PAIR_FIELD,
    PAIR_PARSER,
    SCORE_FIELD,
    SCORE_PARSER,
    agreed_or_tie,
    read_scores,
)
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.results import BATTLE, BattleResult, JurorVote, OrderRun, Winner
from llmjury.judgement.judges import pairwise
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.running.decision_field import DecisionField

#: The shared pairwise call and its vote hand back plain words; these read them as a `Winner`. They
#: only give the words of OUTCOME_LABELS, so a miss is a KeyError, never a guess.
WINNERS: dict[str, Winner] = {"model_a": "model_a", "model_b": "model_b", "tie": "tie",
                              "tie (bothbad)": "tie (bothbad)"}


def options(jury: Jury) -> ArenaOptions:
    return jury.options(FAMILY, ArenaOptions)


async def answer(jury: Jury, opts: ArenaOptions, question: str, model: str) -> str:
    """A model's answer: live from its provider spec, else from the recorded q_and_as files."""
    live = opts.live(model)
    if live is not None:
        request = ChatRequest(messages=(Message(role="user", content=question),), task="arena/question",
                              **jury.prompts.generation("arena/question"))
        return (await jury.engine.complete(live, request, role="contestant")).answer()
    files = tuple(datasets.answer_files(opts, jury.settings))
    recorded = _answers(files).get(question, {})
    if model not in recorded:
        raise ProviderError(model, "no recorded answer for this question in the q_and_as files")
    return recorded[model]


@cache
def _answers(files: tuple[Path, ...]) -> dict[str, dict[str, str]]:
    """Read once per process for every battle; keyed by the files, so different files never mix."""
    return recorded_answers(list(files))


def judge_prompt(opts: ArenaOptions) -> tuple[str, str | None, Callable[[str], str], str, DecisionField]:
    """The judge's template, its system template, the reader of its answer, that reader's version
    and the prompt's decisions as a schema field."""
    if opts.judge_prompt == "mtbench-pair-v2":
        return "arena/mtbench_pair_v2.j2", "arena/mtbench_pair_v2_system.j2", PAIR_CHOICE, PAIR_PARSER, PAIR_FIELD
    return "arena/judge.j2", None, read_scores, SCORE_PARSER, SCORE_FIELD


async def judge_battle(jury: Jury, opts: ArenaOptions, case_id: str, question: str, answer_a: str,
                       answer_b: str, attributes: dict[str, Any]) -> Verdict:
    """Judge in the given order, and swapped when `swap`; a juror whose orders disagree votes a tie
    (MT-Bench's rule), and a jury decides by robust majority over its jurors' votes."""
    template, system, parse, parser, decisions = judge_prompt(opts)
    judged = await pairwise(jury, FAMILY, answer_a, answer_b, template=template, system=system,
                            orders=["ab", "ba"] if opts.swap else ["ab"], slots=("answer_a", "answer_b"),
                            variables={"question": question}, parse=parse, labels=OUTCOME_LABELS,
                            names=("model_a", "model_b"), vote=agreed_or_tie,
                            decisions=decisions)
    # The judge's own words in each order, so the battle records keep both (runs and answers align).
    runs = [OrderRun(order=r.order, winner=None if r.winner is None else WINNERS[r.winner], error=r.error,
                     juror=r.juror, response=a.raw) for r, a in zip(judged.runs, judged.answers.answers, strict=True)]
    votes = [juror_vote(juror, [r.winner for r in runs if r.juror == juror and r.winner is not None])
             for juror in dict.fromkeys(r.juror for r in runs)]
    common: dict[str, Any] = dict(case_id=case_id, family=FAMILY, kind=BATTLE, judge=judged.config(parser),
                                  attributes=attributes, **judged.answers.verdict_fields(jury))
    majority = judged.majority
    if majority is None:
        first_error = next(r.error for r in runs if r.error)
        return Verdict(valid=False, error=first_error, cause=judged.cause, result=BattleResult(runs=runs), **common)
    consistent = all(v.consistent for v in votes if v.winner is not None)
    if judged.jurors is None:
        result = BattleResult(winner=WINNERS[majority.winner], consistent=consistent, counted_runs=majority.counted,
                              runs=runs)
    else:
        result = BattleResult(winner=WINNERS[majority.winner], confidence=majority.confidence,
                              counted_runs=majority.counted, consistent=consistent, jurors=votes, runs=runs)
    return Verdict(result=result, **common)


def juror_vote(juror: str, counted: list[Winner]) -> JurorVote:
    """One juror's vote on a battle from its counted runs: consistent when they all agree."""
    decided = agreed_or_tie(list(counted))
    return JurorVote(judge=juror, counted_runs=len(counted), consistent=len(set(counted)) == 1,
                     winner=WINNERS[decided.winner] if decided else None)


def battle_attributes(case: BattleCase, opts: ArenaOptions) -> dict[str, Any]:
    return {"dataset": case.dataset, "question": case.question, "question_index": case.question_index,
            "model_a": case.model_a, "model_b": case.model_b, "round": case.round, "experiment": opts.experiment,
            "anchor": opts.anchor}


async def battle(case: BattleCase, jury: Jury) -> Outcome:
    """Seed 002's battle: both models' answers, then the judge."""
    opts = options(jury)
    attributes = battle_attributes(case, opts) | {"tstamp": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        answer_a = await answer(jury, opts, case.question, case.model_a)
        answer_b = await answer(jury, opts, case.question, case.model_b)
    except ProviderError as exc:
        config = JudgeConfig(provider=jury.label("judge", FAMILY))
        return Outcome([Verdict(case_id=case.id, family=FAMILY, kind=BATTLE, judge=config, valid=False,
                                error=f"call failed: answer from {exc}", attributes=attributes)])
    attributes |= {"answer_a": answer_a, "answer_b": answer_b}
    verdict = await judge_battle(jury, opts, case.id, case.question, answer_a, answer_b, attributes)
    return Outcome([verdict])


async def judge_tutors(case: TutorBattleCase, jury: Jury) -> Outcome:
    """Two tutors' replies to a student turn, judged like any battle (the question is the dialogue)."""
    opts = options(jury)
    question = jury.render("arena/mrbench_question.j2", history=case.history).text
    attributes = battle_attributes(case, opts) | {"human": case.human}
    verdict = await judge_battle(jury, opts, case.id, question, case.answer_a, case.answer_b, attributes)
    return Outcome([verdict])


async def judge_pair(case: PairCase, jury: Jury) -> Outcome:
    """A pairwise item from the user's file, judged in both orders."""
    opts = options(jury)
    attributes = battle_attributes(case, opts) | {"item": case.item, "human": case.human,
                                                  "answer_a": case.answer_a, "answer_b": case.answer_b}
    verdict = await judge_battle(jury, opts, case.id, case.question, case.answer_a, case.answer_b, attributes)
    return Outcome([verdict])
