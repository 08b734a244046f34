"""Socratic pipelines: replies from both teachers (or collected beforehand), then k judge runs
with positions swapped, into typed verdicts (`pairwise`, `human_preference`)."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from llmjury.chat import ChatRequest, Message
from llmjury.errors import ProviderError
from llmjury.families.socratic.cases import RealSubsetCase, ResponsePairCase, SubsetCase, TutorPairCase
from llmjury.families.socratic.decision import DECISION_CHOICE, DECISION_FIELD, PARSER_VERSION, Decision
from llmjury.families.socratic.dialogue import STUDENT, Turn, cut, generate_dialogue, history, teacher_reply
from llmjury.families.socratic.identical import KEY, text_key
from llmjury.families.socratic.options import NAME, SocraticOptions
from llmjury.families.socratic.results import (
    AspectVerdict,
    HumanLabel,
    HumanPreferenceResult,
    JudgedPair,
    JudgeRun,
    JurorVote,
    PairwiseResult,
    Side,
)
from llmjury.judgement.judges import Order, Pairwise, pairwise
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict

# The four aspects of the seed's judge prompt; their definitions live in prompts/socratic/judge_aspect.j2.
ASPECTS = ("Understanding", "Explanation", "Language", "Readability")
PAIRWISE, HUMAN_PREFERENCE = "pairwise", "human_preference"


def positions(key: str, runs: int, mode: str, seed: int) -> list[str]:
    """Where "ours" sits in each run: alternate A/B, random (seeded by the run's seed and `key`), or always A."""
    if mode == "fixed":
        return ["A"] * runs
    if mode == "alternate":
        return ["A" if run % 2 == 0 else "B" for run in range(runs)]
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    return [rng.choice("AB") for _ in range(runs)]


#: `DECISION_CHOICE`'s options: the reply in slot A (0), in slot B (1), or neither.
DECISION_LABELS: dict[str, int | str] = {"a": 0, "b": 1, "c": "tie"}
#: The shared pairwise call hands back plain words; these read them as the results' types. The call
#: only gives the words of DECISION_LABELS and of its `names`, so a miss is a KeyError, never a guess.
DECISIONS: dict[str, Decision] = {"a": "a", "b": "b", "c": "c"}
SIDES: dict[str, Side] = {"ours": "ours", "baseline": "baseline", "tie": "tie"}
#: People's preferences as the annotated pairs spell them.
HUMAN_LABELS: dict[str, HumanLabel] = {"a": "a", "b": "b", "tie": "tie"}


def side(word: str | None) -> Side | None:
    """The side a judge run, juror or majority named, if any."""
    return None if word is None else SIDES[word]


async def judge_pair(jury: Jury, key: str, turns: list[Turn], ours: str, baseline: str,
                     opts: SocraticOptions, aspect: str | None = None) -> Pairwise:
    """k judge runs on one pair of responses (or, for a jury, an A-B and a B-A vote from each juror),
    through the shared pairwise judge call with the seed's prompt and decision parser. `key` seeds
    random positions: a subset's text key, so identical subsets ask the same prompts (paid once)."""
    k = jury.settings.judge_runs if len(jury.jurors("judge", NAME)) == 1 else 2
    orders: list[Order] = ["ab" if ours_position == "A" else "ba"
                           for ours_position in positions(key, k, opts.positions, jury.settings.seed)]
    template = "socratic/judge.j2" if aspect is None else "socratic/judge_aspect.j2"
    variables = {"dialogue_history": history(turns)} | ({} if aspect is None else {"aspect": aspect})
    return await pairwise(jury, NAME, ours, baseline, template=template, orders=orders,
                          slots=("teacher_a_response", "teacher_b_response"), variables=variables,
                          parse=DECISION_CHOICE, labels=DECISION_LABELS, names=("ours", "baseline"),
                          decisions=DECISION_FIELD)


def decision(judged: Pairwise) -> dict[str, Any]:
    """The fields every judged pair records (see `results.JudgedPair`), in the seed's terms: where
    our reply sat in each run and whom the run preferred."""
    m = judged.majority
    decided = {} if m is None else {"winner": m.winner, "confidence": m.confidence, "counted_runs": m.counted,
                                    "vote_counts": m.counts}
    runs = [JudgeRun(ours_position="A" if r.order == "ab" else "B", juror=r.juror, preferred=side(r.winner),
                     decision=None if r.decision is None else DECISIONS[r.decision], error=r.error,
                     attempts=r.attempts) for r in judged.runs]
    jurors = None if judged.jurors is None else [JurorVote(judge=v.judge, winner=side(v.winner))
                                                 for v in judged.jurors]
    return {**decided, "runs": runs, "jurors": jurors}


def to_verdict(case_id: str, kind: str, jury: Jury, judged: Pairwise, result: JudgedPair,
               attributes: dict[str, Any]) -> Verdict:
    """The verdict on one judged pair; unscored, naming the cause, when no judge run counted."""
    return Verdict(case_id=case_id, family=NAME, kind=kind, judge=judged.config(PARSER_VERSION), result=result,
                   attributes=attributes, valid=judged.majority is not None, error=judged.error,
                   cause=judged.cause, **judged.answers.verdict_fields(jury))


def failed(case_id: str, jury: Jury, what: str, exc: ProviderError, result: PairwiseResult,
           attributes: dict[str, Any]) -> Outcome:
    """A reply that could not be produced: an unscored verdict naming the case and cause."""
    config = JudgeConfig(provider=jury.label("judge", NAME), parser=PARSER_VERSION)
    return Outcome([Verdict(case_id=case_id, family=NAME, kind=PAIRWISE, judge=config, valid=False, result=result,
                            error=f"call failed: {what} response: {exc}", attributes=attributes)])


async def candidate_reply(jury: Jury, turns: list[Turn]) -> str:
    """Our tutor: its own system prompt, the dialogue as chat turns (works for LLMs and http: services)."""
    system = jury.render("socratic/candidate_teacher.j2")
    messages = [Message(role="system", content=system.text)] + [
        Message(role="user" if t.speaker == STUDENT else "assistant", content=t.text) for t in turns
    ]
    request = ChatRequest(messages=tuple(messages), task=system.task, **system.generation)
    return (await jury.complete("candidate", NAME, request)).answer()


async def compare(case: SubsetCase, jury: Jury) -> Outcome:
    """Seed 000 steps 1-4 for one subset: dialogue, cut, both teachers' replies, robust judging."""
    plan = case.dialogue
    attributes: dict[str, Any] = {
        "dialogue": plan.index, "cut": case.cut, "persona": plan.persona.id, "year": plan.persona.year,
        "goal_commitment": plan.persona.goal_commitment, "motivation": plan.persona.motivation,
        "self_efficacy": plan.persona.self_efficacy,
    }
    opts = jury.options(NAME, SocraticOptions)
    result = PairwiseResult(source="simulated", dataset="simulated", subject=plan.subject,
                            ours_name=opts.ours_name, baseline_name=opts.baseline_name)
    try:
        context = cut(await generate_dialogue(jury, plan), case.cut)
    except ProviderError as exc:
        return failed(case.id, jury, "dialogue generation", exc, result, attributes)
    return await compare_on(case.id, jury, context, result, attributes)


async def compare_on(case_id: str, jury: Jury, context: list[Turn], result: PairwiseResult,
                     attributes: dict[str, Any]) -> Outcome:
    """Both teachers' replies to a context ending with the student, then robust pairwise judging."""
    try:
        ours = await candidate_reply(jury, context)
    except ProviderError as exc:
        return failed(case_id, jury, "candidate", exc, result, attributes)
    try:
        baseline = await teacher_reply(jury, "baseline", context)
    except ProviderError as exc:
        return failed(case_id, jury, "baseline", exc, result, attributes)
    return await judge_replies(case_id, jury, context, ours, baseline, result, attributes)


async def judge_replies(case_id: str, jury: Jury, context: list[Turn], ours: str, baseline: str,
                        result: PairwiseResult, attributes: dict[str, Any]) -> Outcome:
    """Robust pairwise judging of two replies (and each aspect on its own with `aspects=separate`)."""
    opts = jury.options(NAME, SocraticOptions)
    # The text, not the case id, places the replies: two subsets of the same text then ask the very
    # same judge prompts in every position mode, which the cache answers once (`identical`).
    key = text_key(context, ours, baseline)
    attributes = attributes | {KEY: key}
    judged = await judge_pair(jury, key, context, ours, baseline, opts)
    aspects: dict[str, AspectVerdict | None] | None = None
    if opts.aspects == "separate":
        aspects = {}
        for aspect in ASPECTS:
            m = (await judge_pair(jury, key, context, ours, baseline, opts, aspect)).majority
            aspects[aspect] = None if m is None else AspectVerdict(winner=SIDES[m.winner], confidence=m.confidence,
                                                                   counted_runs=m.counted)
    result = PairwiseResult.model_validate({**result.model_dump(), "ours_chars": len(ours),
                                            "baseline_chars": len(baseline), "aspects": aspects, **decision(judged)})
    verdict = to_verdict(case_id, PAIRWISE, jury, judged, result, attributes)
    return Outcome([verdict], details={"context": history(context), "ours": ours, "baseline": baseline})


async def compare_real(case: RealSubsetCase, jury: Jury) -> Outcome:
    """The same comparison on a real (MathDial) dialogue cut at a student turn."""
    opts = jury.options(NAME, SocraticOptions)
    result = PairwiseResult(source="mathdial", dataset=case.dataset, subject="math",
                            ours_name=opts.ours_name, baseline_name=opts.baseline_name)
    attributes: dict[str, Any] = {"cut": case.cut, "qid": case.qid, "outcome": case.outcome}
    return await compare_on(case.id, jury, case.context(), result, attributes)


async def judge_responses(case: ResponsePairCase, jury: Jury) -> Outcome:
    """Seed 000 step 4 on replies collected beforehand: no tutor is asked, only the judge."""
    opts = jury.options(NAME, SocraticOptions)
    result = PairwiseResult(source="responses", dataset=case.dataset, ours_name=opts.ours_name,
                            baseline_name=opts.baseline_name)
    attributes: dict[str, Any] = {"subset_id": case.subset_id} | ({"same_as": case.same_as} if case.same_as else {})
    return await judge_replies(case.id, jury, case.turns(), case.ours, case.baseline, result, attributes)


async def judge_tutor_pair(case: TutorPairCase, jury: Jury) -> Outcome:
    """The same judge on two annotated tutors' replies; tutor A takes the "ours" slot."""
    opts = jury.options(NAME, SocraticOptions)
    judged = await judge_pair(jury, case.id, case.turns(), case.response_a, case.response_b, opts)
    result = HumanPreferenceResult(dataset=case.dataset, human=HUMAN_LABELS[case.human],
                                   human_by_dimension={d: HUMAN_LABELS[h] for d, h in case.human_by_dimension.items()},
                                   ours_chars=len(case.response_a), baseline_chars=len(case.response_b),
                                   **decision(judged))
    attributes = {"conversation": case.conversation_id, "corpus": case.corpus, "tutor_a": case.tutor_a,
                  "tutor_b": case.tutor_b}
    return Outcome([to_verdict(case.id, HUMAN_PREFERENCE, jury, judged, result, attributes)])
