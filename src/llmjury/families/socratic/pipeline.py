"""Socratic pipelines: replies from both teachers (or collected beforehand), then k judge runs
with positions swapped, into typed verdicts (`pairwise`, `human_preference`)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

from llmjury.chat import ChatRequest, Message
from llmjury.errors import ProviderError
from llmjury.families.socratic.cases import RealSubsetCase, ResponsePairCase, SubsetCase, TutorPairCase
from llmjury.families.socratic.decision import PARSER_VERSION, parse_decision
from llmjury.families.socratic.dialogue import STUDENT, Turn, cut, generate_dialogue, history, teacher_reply
from llmjury.families.socratic.options import NAME, SocraticOptions, options_of
from llmjury.families.socratic.results import (
    AspectVerdict,
    HumanPreferenceResult,
    JudgedPair,
    JudgeRun,
    JurorVote,
    PairwiseResult,
)
from llmjury.judging import JudgeRuns, ask_judge
from llmjury.jury import Jury, Outcome
from llmjury.majority import Majority, robust_verdict
from llmjury.verdicts import JudgeConfig, Verdict

# The four aspects of the seed's judge prompt; their definitions live in prompts/socratic/judge_aspect.j2.
ASPECTS = ("Understanding", "Explanation", "Language", "Readability")
PREFERRED = {("a", "A"): "ours", ("b", "A"): "baseline", ("a", "B"): "baseline", ("b", "B"): "ours"}
PAIRWISE, HUMAN_PREFERENCE = "pairwise", "human_preference"


def positions(case_id: str, runs: int, mode: str, seed: int) -> list[str]:
    """Where "ours" sits in each run: alternate A/B, seeded random, or always A."""
    if mode == "fixed":
        return ["A"] * runs
    if mode == "alternate":
        return ["A" if run % 2 == 0 else "B" for run in range(runs)]
    digest = hashlib.sha256(f"{seed}:{case_id}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    return [rng.choice("AB") for _ in range(runs)]


def preferred(decision: str, ours_position: str) -> str:
    return "tie" if decision == "c" else PREFERRED[(decision, ours_position)]


@dataclass(frozen=True)
class Judged:
    """k judge runs on one pair: the runs, their robust verdict, each juror's vote, the raw answers."""

    runs: list[JudgeRun]
    majority: Majority | None
    answers: JudgeRuns
    jurors: list[JurorVote] | None
    prompt: str

    def decision(self) -> dict[str, Any]:
        """The fields every judged pair records (see `results.JudgedPair`)."""
        m = self.majority
        decided = {} if m is None else {"winner": m.winner, "confidence": m.confidence, "counted_runs": m.counted,
                                        "vote_counts": m.counts}
        return {**decided, "runs": self.runs, "jurors": self.jurors}


async def judge_pair(jury: Jury, case_id: str, turns: list[Turn], ours: str, baseline: str,
                     opts: SocraticOptions, aspect: str | None = None) -> Judged:
    """k judge runs on one pair of responses (or, for a jury, an A-B and a B-A vote from each juror)."""
    jurors = jury.jurors("judge", NAME)
    k = jury.settings.judge_runs if len(jurors) == 1 else 2
    where = positions(case_id, k, opts.positions, jury.settings.seed)
    template = "socratic/judge.j2" if aspect is None else "socratic/judge_aspect.j2"
    extra = {} if aspect is None else {"aspect": aspect}
    requests = []
    for ours_position in where:
        a, b = (ours, baseline) if ours_position == "A" else (baseline, ours)
        prompt = jury.render(template, dialogue_history=history(turns), teacher_a_response=a,
                             teacher_b_response=b, **extra)
        requests.append(jury.request(prompt))
    runs: list[JudgeRun] = []
    votes, parts = [], []
    for juror in jurors:
        answers = await ask_judge(jury, NAME, requests, parse_decision, juror=juror)
        parts.append(answers)
        mine = [JudgeRun(ours_position=ours_position, decision=answer.parsed, juror=juror.label,
                         preferred=preferred(answer.parsed, ours_position) if answer.scored else None,
                         error=answer.error, attempts=answer.attempts)
                for ours_position, answer in zip(where, answers.answers, strict=True)]
        runs += mine
        own = robust_verdict([r.preferred for r in mine if r.preferred is not None])
        votes.append(JurorVote(judge=juror.label, winner=own.winner if own else None))
    if len(jurors) == 1:
        majority = robust_verdict([r.preferred for r in runs if r.preferred is not None])
    else:
        majority = robust_verdict([v.winner for v in votes if v.winner is not None])
    return Judged(runs=runs, majority=majority, answers=JudgeRuns.merged(parts, jury.label("judge", NAME)),
                  jurors=votes if len(jurors) > 1 else None, prompt=requests[0].task)


def to_verdict(case_id: str, kind: str, jury: Jury, judged: Judged, result: JudgedPair,
               attributes: dict[str, Any]) -> Verdict:
    """The verdict on one judged pair; unscored, naming the cause, when no judge run counted."""
    config = JudgeConfig(provider=judged.answers.provider, prompt=judged.prompt, runs=len(judged.runs),
                         parser=PARSER_VERSION, **judged.answers.sampling)
    verdict = Verdict(case_id=case_id, family=NAME, kind=kind, judge=config, result=result, attributes=attributes,
                      **judged.answers.verdict_fields(jury))
    if judged.majority is None:
        errors = "; ".join(sorted({r.error for r in judged.runs if r.error}))
        first = next(r.error for r in judged.runs if r.error)
        return verdict.model_copy(update={"valid": False,
                                          "error": f"{first.split(':')[0]}: no judge run counted ({errors})"})
    return verdict


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
    opts = options_of(jury.settings)
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
    opts = options_of(jury.settings)
    judged = await judge_pair(jury, case_id, context, ours, baseline, opts)
    aspects: dict[str, AspectVerdict | None] | None = None
    if opts.aspects == "separate":
        aspects = {}
        for aspect in ASPECTS:
            m = (await judge_pair(jury, case_id, context, ours, baseline, opts, aspect)).majority
            aspects[aspect] = None if m is None else AspectVerdict(winner=m.winner, confidence=m.confidence,
                                                                   counted_runs=m.counted)
    result = PairwiseResult.model_validate({**result.model_dump(), "ours_chars": len(ours),
                                            "baseline_chars": len(baseline), "aspects": aspects, **judged.decision()})
    verdict = to_verdict(case_id, PAIRWISE, jury, judged, result, attributes)
    return Outcome([verdict], details={"context": history(context), "ours": ours, "baseline": baseline})


async def compare_real(case: RealSubsetCase, jury: Jury) -> Outcome:
    """The same comparison on a real (MathDial) dialogue cut at a student turn."""
    opts = options_of(jury.settings)
    result = PairwiseResult(source="mathdial", dataset=case.dataset, subject="math",
                            ours_name=opts.ours_name, baseline_name=opts.baseline_name)
    attributes: dict[str, Any] = {"cut": case.cut, "qid": case.qid, "outcome": case.outcome}
    return await compare_on(case.id, jury, case.context(), result, attributes)


async def judge_responses(case: ResponsePairCase, jury: Jury) -> Outcome:
    """Seed 000 step 4 on replies collected beforehand: no tutor is asked, only the judge."""
    opts = options_of(jury.settings)
    result = PairwiseResult(source="responses", dataset=case.dataset, ours_name=opts.ours_name,
                            baseline_name=opts.baseline_name)
    attributes: dict[str, Any] = {"subset_id": case.subset_id}
    return await judge_replies(case.id, jury, case.turns(), case.ours, case.baseline, result, attributes)


async def judge_tutor_pair(case: TutorPairCase, jury: Jury) -> Outcome:
    """The same judge on two annotated tutors' replies; tutor A takes the "ours" slot."""
    opts = options_of(jury.settings)
    judged = await judge_pair(jury, case.id, case.turns(), case.response_a, case.response_b, opts)
    result = HumanPreferenceResult(dataset=case.dataset, human=case.human, human_by_dimension=case.human_by_dimension,
                                   ours_chars=len(case.response_a), baseline_chars=len(case.response_b),
                                   **judged.decision())
    attributes = {"conversation": case.conversation_id, "corpus": case.corpus, "tutor_a": case.tutor_a,
                  "tutor_b": case.tutor_b}
    return Outcome([to_verdict(case.id, HUMAN_PREFERENCE, jury, judged, result, attributes)])
