"""A small family for the comparison and workflow tests: a candidate replies under a system prompt
from the prompt library (so a shadow `llm_prompts` folder changes it), and a judge says whether
the reply is polite. Offline, the candidate repeats its prompt's last line and the judge hears
"please"; against a fake server the judge can be a coin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import ChatRequest, Message, chat
from llmjury.family import CaseLoad, CaseSet, Family, FamilyOptions, Metric, Result, Section
from llmjury.intervals import IntervalKind
from llmjury.providers.offline import OfflineAnswers
from llmjury.running.settings import Settings

JUDGE_TEMPERATURE = 0.7


class Options(FamilyOptions):
    cases: int = 30


class Question(Case):
    family: str = "polite"
    text: str


def questions(options: Options, settings: Settings) -> CaseLoad:
    """`polite.cases` numbered questions."""
    return [Question(id=f"q{i:02d}", text=f"question {i}") for i in range(options.cases)], []


class Polite(Result):
    polite: bool
    length: int


class PoliteSection(Section):
    polite_rate: Metric | None = None
    #: The longest reply: a maximum, not a mean of per-case values (no interval in a comparison).
    longest_reply: Metric | None = None
    #: The share of all reply characters written in polite replies: a ratio of sums, smooth but no
    #: mean of per-case values (compared by re-aggregation).
    polite_share_of_text: Metric | None = None


async def judge(case: Question, jury: Any) -> Outcome:
    system = jury.render("polite/candidate.j2")
    asked = ChatRequest(messages=(Message(role="system", content=system.text), Message(role="user", content=case.text)),
                        task=system.task)
    reply = (await jury.complete("candidate", "polite", asked)).answer()
    question = chat(("user", f"Is this reply polite? Answer yes or no.\n\n{reply}"), task="polite/judge",
                    temperature=JUDGE_TEMPERATURE)
    completion = await jury.complete("judge", "polite", question)
    answer = completion.text.strip().lower()
    config = JudgeConfig(provider=completion.provider, prompt="polite/judge@1", temperature=JUDGE_TEMPERATURE,
                         parser="yes-no/1")
    valid = answer in ("yes", "no")
    return Outcome([Verdict(case_id=case.id, family="polite", kind="polite", judge=config, valid=valid,
                            result=Polite(polite=answer == "yes", length=len(reply)) if valid else None,
                            error=None if valid else f"unparseable: {answer[:40]!r}", raw=[answer],
                            attributes={"question": case.text, "answer": reply})])


ANSWERS = OfflineAnswers()


@ANSWERS.answer("polite/candidate.j2")
def offline_candidate(request: ChatRequest, rng: Any) -> str:
    return f"About {request.messages[-1].content}: {request.messages[0].content.strip().splitlines()[-1]}"


@ANSWERS.answer("polite/judge")
def offline_judge(request: ChatRequest, rng: Any) -> str:
    return "yes" if "please" in request.messages[-1].content.lower() else "no"


class PoliteFamily(Family[Options, PoliteSection]):
    name = "polite"
    options = Options
    results: Mapping[str, type[Result]] = {"polite": Polite}
    section = PoliteSection
    headline = ("polite_rate", "longest_reply", "polite_share_of_text")
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = {
        "polite_rate": "proportion", "longest_reply": "non_smooth", "polite_share_of_text": "smooth"}

    def case_sets(self) -> Mapping[str, CaseSet[Options]]:
        return {"questions": CaseSet(questions, judge)}

    def offline(self) -> Mapping[str, Any]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> PoliteSection:
        from llmjury.stats import proportion

        scored = [v.result for v in verdicts if v.valid and isinstance(v.result, Polite)]
        longest = Metric(value=max((r.length for r in scored), default=None), n=len(scored), method="max")
        characters = sum(r.length for r in scored)
        share = Metric(value=sum(r.length for r in scored if r.polite) / characters if characters else None,
                       n=len(scored), method="ratio of sums")
        return PoliteSection(polite_rate=Metric(**proportion(sum(r.polite for r in scored), len(scored))),
                             longest_reply=longest, polite_share_of_text=share)


FAMILY = PoliteFamily()
