"""Socratic pipelines: responses from both teachers, then k judge runs with positions swapped."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from llmjury.chat import ChatRequest, Message
from llmjury.errors import ProviderError
from llmjury.families.socratic.cases import FAMILY, SocraticOptions, SubsetCase
from llmjury.families.socratic.decision import PARSER_VERSION, parse_decision
from llmjury.families.socratic.dialogue import STUDENT, Turn, cut, generate_dialogue, history, teacher_reply
from llmjury.judging import JudgeRuns, ask_judge
from llmjury.jury import Jury, Outcome
from llmjury.majority import robust_verdict
from llmjury.settings import family_options
from llmjury.verdicts import JudgeConfig, Verdict

# The four aspects of the seed's judge prompt; their definitions live in prompts/socratic/judge_aspect.j2.
ASPECTS = ("Understanding", "Explanation", "Language", "Readability")
PREFERRED = {("a", "A"): "ours", ("b", "A"): "baseline", ("a", "B"): "baseline", ("b", "B"): "ours"}


def options(jury: Jury) -> SocraticOptions:
    return SocraticOptions.model_validate(family_options(jury.settings, FAMILY))


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


async def judge_pair(jury: Jury, case_id: str, turns: list[Turn], ours: str, baseline: str,
                     opts: SocraticOptions, aspect: str | None = None) -> dict[str, Any]:
    """k judge runs on one pair of responses (or, for a jury, an A-B and a B-A vote from each
    juror); returns the runs, the robust verdict, each juror's vote and the raw text."""
    jurors = jury.jurors("judge", FAMILY)
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
    runs, votes, parts = [], [], []
    for juror in jurors:
        answers = await ask_judge(jury, FAMILY, requests, parse_decision, juror=juror)
        parts.append(answers)
        mine = []
        for ours_position, answer in zip(where, answers.answers, strict=True):
            mine.append({"ours_position": ours_position, "decision": answer.parsed, "juror": juror.label,
                         "preferred": preferred(answer.parsed, ours_position) if answer.scored else None,
                         "error": answer.error, "attempts": answer.attempts})
        runs += mine
        own = robust_verdict([r["preferred"] for r in mine if r["preferred"] is not None])
        votes.append({"judge": juror.label, "winner": own.winner if own else None})
    if len(jurors) == 1:
        majority = robust_verdict([r["preferred"] for r in runs if r["preferred"] is not None])
    else:
        majority = robust_verdict([v["winner"] for v in votes if v["winner"] is not None])
    return {"runs": runs, "majority": majority, "answers": JudgeRuns.merged(parts, jury.label("judge", FAMILY)),
            "jurors": votes if len(jurors) > 1 else None, "prompt": requests[0].task}


def to_verdict(case_id: str, jury: Jury, judged: dict[str, Any], attributes: dict[str, Any],
               aspects: dict[str, dict[str, Any]] | None = None) -> Verdict:
    answers, majority = judged["answers"], judged["majority"]
    config = JudgeConfig(provider=answers.provider, prompt=judged["prompt"], runs=len(judged["runs"]),
                         parser=PARSER_VERSION)
    common = dict(case_id=case_id, family=FAMILY, judge=config, attributes=attributes,
                  **answers.verdict_fields(jury))
    if majority is None:
        errors = "; ".join(sorted({r["error"] for r in judged["runs"] if r["error"]}))
        first = next(r["error"] for r in judged["runs"] if r["error"])
        return Verdict(valid=False, error=f"{first.split(':')[0]}: no judge run counted ({errors})",
                       result={"runs": judged["runs"]}, **common)
    result = {"winner": majority.winner, "confidence": majority.confidence, "counted_runs": majority.counted,
              "vote_counts": majority.counts, "runs": judged["runs"]}
    if aspects:
        result["aspects"] = aspects
    if judged["jurors"]:
        result["jurors"] = judged["jurors"]
    return Verdict(result=result, **common)


def failed(case: SubsetCase | Any, jury: Jury, what: str, exc: ProviderError, attributes: dict[str, Any]) -> Outcome:
    """A response that could not be produced: an unscored verdict naming the case and cause."""
    config = JudgeConfig(provider=jury.label("judge", FAMILY), parser=PARSER_VERSION)
    return Outcome([Verdict(case_id=case.id, family=FAMILY, judge=config, valid=False,
                            error=f"call failed: {what} response: {exc}", attributes=attributes)])


async def candidate_reply(jury: Jury, turns: list[Turn]) -> str:
    """Our tutor: its own system prompt, the dialogue as chat turns (works for LLMs and http: services)."""
    system = jury.render("socratic/candidate_teacher.j2")
    messages = [Message(role="system", content=system.text)] + [
        Message(role="user" if t.speaker == STUDENT else "assistant", content=t.text) for t in turns
    ]
    completion = await jury.complete("candidate", FAMILY, ChatRequest(messages=tuple(messages), task=system.task))
    return completion.text.strip()


async def compare(case: SubsetCase, jury: Jury) -> Outcome:
    """Seed 000 steps 1-4 for one subset: dialogue, cut, both teachers' replies, robust judging."""
    plan = case.dialogue
    attributes: dict[str, Any] = {
        "source": "simulated", "dialogue": plan.index, "cut": case.cut, "subject": plan.subject,
        "persona": plan.persona.id, "year": plan.persona.year,
        "goal_commitment": plan.persona.goal_commitment, "motivation": plan.persona.motivation,
        "self_efficacy": plan.persona.self_efficacy,
    }
    try:
        context = cut(await generate_dialogue(jury, plan), case.cut)
    except ProviderError as exc:
        return failed(case, jury, "dialogue generation", exc, attributes)
    return await compare_on(case, jury, context, attributes)


async def compare_on(case: Any, jury: Jury, context: list[Turn], attributes: dict[str, Any]) -> Outcome:
    """Both teachers' replies to a context ending with the student, then robust pairwise judging."""
    opts = options(jury)
    attributes |= {"ours_name": opts.ours_name, "baseline_name": opts.baseline_name}
    try:
        ours = await candidate_reply(jury, context)
    except ProviderError as exc:
        return failed(case, jury, "candidate", exc, attributes)
    try:
        baseline = await teacher_reply(jury, "baseline", context)
    except ProviderError as exc:
        return failed(case, jury, "baseline", exc, attributes)
    attributes |= {"ours_chars": len(ours), "baseline_chars": len(baseline)}
    judged = await judge_pair(jury, case.id, context, ours, baseline, opts)
    aspects = None
    if opts.aspects == "separate":
        aspects = {}
        for aspect in ASPECTS:
            per = await judge_pair(jury, case.id, context, ours, baseline, opts, aspect)
            m = per["majority"]
            aspects[aspect] = None if m is None else {"winner": m.winner, "confidence": m.confidence,
                                                      "counted_runs": m.counted}
    verdict = to_verdict(case.id, jury, judged, attributes, aspects)
    return Outcome([verdict], details={"context": history(context), "ours": ours, "baseline": baseline})


async def compare_real(case: Any, jury: Jury) -> Outcome:
    """The same comparison on a real (MathDial) dialogue cut at a student turn."""
    attributes: dict[str, Any] = {"source": "mathdial", "cut": case.cut, "qid": case.qid, "outcome": case.outcome,
                                  "subject": "math"}
    return await compare_on(case, jury, case.context(), attributes)


async def judge_tutor_pair(case: Any, jury: Jury) -> Outcome:
    """The same judge on two real tutors' replies; tutor A takes the "ours" slot."""
    opts = options(jury)
    attributes = {"source": "mrbench", "conversation": case.conversation_id, "dataset": case.dataset,
                  "tutor_a": case.tutor_a, "tutor_b": case.tutor_b, "human": case.human,
                  "ours_chars": len(case.response_a), "baseline_chars": len(case.response_b)}
    judged = await judge_pair(jury, case.id, case.turns(), case.response_a, case.response_b, opts)
    return Outcome([to_verdict(case.id, jury, judged, attributes)])
