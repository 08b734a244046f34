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
from llmjury.families.arena.cases import FAMILY, BattleCase, PairCase, TutorBattleCase, is_live
from llmjury.families.arena.judge import PAIR_PARSER, SCORE_PARSER, parse_pair, parse_scores, swap, winner_from_scores
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.results import BATTLE, BattleResult, JurorVote, OrderRun, Winner
from llmjury.judging import JudgeRuns, ask_judge
from llmjury.jury import Jury, Outcome
from llmjury.majority import robust_verdict
from llmjury.settings import family_options
from llmjury.verdicts import JudgeConfig, Verdict


def options(jury: Jury) -> ArenaOptions:
    return ArenaOptions.model_validate(family_options(jury.settings, FAMILY))


async def answer(jury: Jury, opts: ArenaOptions, question: str, model: str) -> str:
    """A model's answer: live from its provider spec, else from the recorded q_and_as files."""
    if is_live(model):
        request = ChatRequest(messages=(Message(role="user", content=question),), task="arena/question",
                              **jury.prompts.generation("arena/question"))
        return (await jury.engine.complete(model, request)).answer()
    files = tuple(datasets.answer_files(opts, jury.settings))
    recorded = _answers(files).get(question, {})
    if model not in recorded:
        raise ProviderError(model, "no recorded answer for this question in the q_and_as files")
    return recorded[model]


@cache
def _answers(files: tuple[Path, ...]) -> dict[str, dict[str, str]]:
    """Read once per process for every battle; keyed by the files, so different files never mix."""
    return recorded_answers(list(files))


def judge_request(jury: Jury, opts: ArenaOptions, question: str, first: str, second: str) -> ChatRequest:
    if opts.judge_prompt == "mtbench-pair-v2":
        system = jury.render("arena/mtbench_pair_v2_system.j2")
        prompt = jury.render("arena/mtbench_pair_v2.j2", question=question, answer_a=first, answer_b=second)
        return jury.request(prompt, system=system)
    return jury.request(jury.render("arena/judge.j2", question=question, answer_a=first, answer_b=second))


def parse_outcome(prompt_kind: str) -> tuple[Callable[[str], str], str]:
    if prompt_kind == "mtbench-pair-v2":
        return parse_pair, PAIR_PARSER
    return (lambda text: winner_from_scores(*parse_scores(text))), SCORE_PARSER


async def judge_battle(jury: Jury, opts: ArenaOptions, case_id: str, question: str, answer_a: str,
                       answer_b: str, attributes: dict[str, Any], round_index: int = 0) -> Verdict:
    """Judge in the given order, and swapped when `swap`; a juror whose orders disagree votes a tie
    (MT-Bench's rule), and a jury decides by robust majority over its jurors' votes."""
    requests = [judge_request(jury, opts, question, answer_a, answer_b)]
    if opts.swap:
        requests.append(judge_request(jury, opts, question, answer_b, answer_a))
    parse, parser = parse_outcome(opts.judge_prompt)
    jurors = jury.jurors("judge", FAMILY)
    runs: list[OrderRun] = []
    votes: list[JurorVote] = []
    parts: list[JudgeRuns] = []
    for juror in jurors:
        asked = await ask_judge(jury, FAMILY, requests, parse, round_index=round_index, juror=juror)
        parts.append(asked)
        outcomes: list[Winner | None] = [None if not a.scored else (a.parsed if i == 0 else swap(a.parsed))
                                         for i, a in enumerate(asked.answers)]
        runs += [OrderRun(order="ab" if i == 0 else "ba", winner=o, error=a.error, juror=juror.label)
                 for i, (o, a) in enumerate(zip(outcomes, asked.answers, strict=True))]
        counted = [o for o in outcomes if o is not None]
        votes.append(JurorVote(judge=juror.label, counted_runs=len(counted), consistent=len(set(counted)) == 1,
                               winner=None if not counted else counted[0] if len(set(counted)) == 1 else "tie"))
    merged = JudgeRuns.merged(parts, jury.label("judge", FAMILY))
    config = JudgeConfig(provider=merged.provider, prompt=requests[0].task, runs=len(merged.answers), parser=parser,
                         **requests[0].sampling)
    common: dict[str, Any] = dict(case_id=case_id, family=FAMILY, kind=BATTLE, judge=config, attributes=attributes,
                                  **merged.verdict_fields(jury))
    decided = [v.winner for v in votes if v.winner is not None]
    if not decided:
        first_error = next(a.error for a in merged.answers if a.error)
        return Verdict(valid=False, error=first_error, result=BattleResult(runs=runs), **common)
    consistent = all(v.consistent for v in votes if v.winner is not None)
    if len(jurors) == 1:
        result = BattleResult(winner=decided[0], consistent=consistent, counted_runs=votes[0].counted_runs, runs=runs)
    else:
        majority = robust_verdict(decided)
        result = BattleResult(winner=majority.winner, confidence=majority.confidence, counted_runs=majority.counted,
                              consistent=consistent, jurors=votes, runs=runs)
    return Verdict(result=result, **common)


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
    verdict = await judge_battle(jury, opts, case.id, case.question, answer_a, answer_b, attributes, case.round)
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
