"""The built-in `custom` family: where a test's own judge calls (`jury.compare`, `jury.score`,
`jury.geval`) record, and how they aggregate.

It defines no dataset and no pipeline. Its verdicts are grouped by kind and by name (the test
function, or the `name=` a call passes): a win rate with a Wilson interval for comparisons (with
the rate of ties and how often both orders agreed), a mean with a t interval for scores. Its
offline answers are documented rules, so a fresh machine runs a user's eval end to end.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from llmjury.chat import ChatRequest, Sample, TokenLogprob, TopLogprob
from llmjury.family import Family, FamilyOptions
from llmjury.judgement.judges import GEvalResult, PairwiseResult, ScoreResult
from llmjury.judgement.verdicts import CUSTOM, Verdict
from llmjury.model import Metric, Result, Section
from llmjury.providers.offline import Heuristic, OfflineAnswers
from llmjury.results.repairs import JudgeRepairs, repairs_by_judge
from llmjury.results.repairs import markdown as repairs_markdown


class CustomOptions(FamilyOptions):
    """The custom family takes no options; any `custom.KEY` is a typo."""


class PairwiseFigures(BaseModel):
    """How often the first response (`a`) won, tied and lost, and how often both orders agreed."""

    win_rate: Metric
    tie_rate: Metric
    loss_rate: Metric
    swap_consistency: Metric


class MeanFigures(BaseModel):
    """The mean score with its t interval."""

    mean: Metric


class CheckResult(Result):
    """Whether a test of your own passed on its case (its assertions held), as the session saw it."""

    passed: bool


class PassFigures(BaseModel):
    """How often a test's assertions held across its cases (Wilson interval)."""

    pass_rate: Metric


class CustomSection(Section):
    """Figures per verdict kind, keyed by name: gate them as `custom.compare.<name>.win_rate`."""

    compare: dict[str, PairwiseFigures] = Field(default_factory=dict)
    score: dict[str, MeanFigures] = Field(default_factory=dict)
    geval: dict[str, MeanFigures] = Field(default_factory=dict)
    check: dict[str, PassFigures] = Field(default_factory=dict)
    #: Per judge: verdicts scored directly, after a repair call, or unscored by cause (`llmjury.results.repairs`).
    repairs: dict[str, JudgeRepairs] = Field(default_factory=dict)


def pairwise_figures(results: Sequence[PairwiseResult]) -> PairwiseFigures:
    """Rates over the scored comparisons of one name (unscored ones are counted by the core)."""
    from llmjury.stats import proportion  # report time only: keeps scipy out of plugin start-up

    n = len(results)
    wins, ties = sum(r.winner == "a" for r in results), sum(r.winner == "tie" for r in results)
    both = [r.consistent for r in results if r.consistent is not None]
    return PairwiseFigures(win_rate=Metric(**proportion(wins, n)), tie_rate=Metric(**proportion(ties, n)),
                           loss_rate=Metric(**proportion(n - wins - ties, n)),
                           swap_consistency=Metric(**proportion(sum(both), len(both))))


def pass_figures(results: Sequence[CheckResult]) -> PassFigures:
    """The pass rate of one test over its cases."""
    from llmjury.stats import proportion  # report time only

    return PassFigures(pass_rate=Metric(**proportion(sum(r.passed for r in results), len(results))))


def mean_figures(scores: Sequence[float], scale: tuple[float, float] | None = None) -> MeanFigures:
    """The mean with its t interval, inside the rubric's scale when known (`llmjury.stats.mean_metric`)."""
    from llmjury.stats import mean_metric  # report time only: keeps numpy out of plugin start-up

    return MeanFigures(mean=Metric(**mean_metric(scores, scale)))


# -- offline answers: rules a reader can check ------------------------------------------------------
ANSWERS = OfflineAnswers()
_RESPONSE = re.compile(r"\[Response (A|B)\]\n(.*?)\n\[End of response \1\]", re.DOTALL)
_SCORED = re.compile(r"\[Response\]\n(.*?)\n\[End of response\]", re.DOTALL)
_SCALE = re.compile(r"scale from (\d+) to (\d+)")
_TEXT = re.compile(r"\nText:\n(.*)\n\nEvaluation Form", re.DOTALL)
_FORM = re.compile(r"\((\d+)-(\d+)\):\s*$")


#: Kana (full and half width) and Han: Japanese and Chinese are written without spaces between words.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
                       r"\U00020000-\U0003134f]")
#: Their punctuation and spaces (an ideographic space, 。、「」, full-width ，！？): no word.
_CJK_MARKS = re.compile(r"[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def word_count(text: str) -> int:
    """Words as the offline rules count them: what spaces part, and in Japanese and Chinese two
    characters a word (a whole answer in either had no space in it and counted one word)."""
    text = _CJK_MARKS.sub(" ", text)
    unspaced = len(_UNSPACED.findall(text))
    return len(_UNSPACED.sub(" ", text).split()) + (unspaced + 1) // 2


def length_score(text: str, low: int, high: int) -> int:
    """Offline rule for scores: one point above the scale's floor per three words, capped at the top."""
    return min(high, low + word_count(text) // 3)


@ANSWERS.answer("core/compare.j2")
def prefer_longer(request: ChatRequest, rng: random.Random) -> str:
    """Offline rule for comparisons: the response with more words wins; equal lengths tie."""
    found = dict(_RESPONSE.findall(request.messages[-1].content))
    a, b = (word_count(found.get(side, "")) for side in ("A", "B"))
    decision = "A" if a > b else "B" if b > a else "tie"
    return f"Offline rule: the longer response wins ({a} vs {b} words).\n### {decision}"


@ANSWERS.answer("core/score.j2")
def score_by_length(request: ChatRequest, rng: random.Random) -> str:
    """Offline rule for rubric scores: `length_score` of the response, every other field filled
    by its JSON type so any output model validates."""
    text = request.messages[-1].content
    scale, response = _SCALE.search(text), _SCORED.search(text)
    low, high = (int(scale[1]), int(scale[2])) if scale else (1, 5)
    score = length_score(response[1] if response else "", low, high)
    filler = {"string": "offline rule: longer responses score higher", "integer": score, "number": score,
              "boolean": True, "array": [], "object": {}}
    properties: Mapping[str, Any] = (request.json_schema or {}).get("properties", {"score": {}})
    answer = {key: score if key == "score" else filler.get(spec.get("type", "string"))
              for key, spec in properties.items()}
    return json.dumps(answer)


@ANSWERS.answer("core/geval.j2")
def rate_by_length(request: ChatRequest, rng: random.Random) -> Sample | str:
    """Offline rule for G-Eval: `length_score` of the text, as a distribution over the score
    tokens when logprobs are asked for, else that score or a neighbour (seeded by the request)."""
    text = request.messages[-1].content
    form, body = _FORM.search(text), _TEXT.search(text)
    low, high = (int(form[1]), int(form[2])) if form else (1, 5)
    best = length_score(body[1] if body else "", low, high)
    weights = {s: 0.6 if s == best else 0.2 for s in range(low, high + 1) if abs(s - best) <= 1}
    total = sum(weights.values())
    if request.logprobs:
        top = [TopLogprob(token=str(s), logprob=math.log(w / total))
               for s, w in sorted(weights.items(), key=lambda kv: -kv[1])]
        return Sample(text=str(best), finish_reason="stop",
                      logprobs=[TokenLogprob(token=str(best), logprob=top[0].logprob, top=top)])
    return str(rng.choices(list(weights), weights=list(weights.values()))[0])


class Custom(Family[CustomOptions, CustomSection]):
    name = CUSTOM
    options = CustomOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType(
        {"compare": PairwiseResult, "score": ScoreResult, "geval": GEvalResult, "check": CheckResult})
    section = CustomSection
    #: Per test (or `name=`): compared with a baseline and gated as `custom.check.test_answer.pass_rate.delta`;
    #: `loss_rate` too, since comparing an answer with its reference rarely wins, and a regression shows as losses.
    headline = ("compare.*.win_rate", "compare.*.loss_rate", "score.*.mean", "geval.*.mean", "check.*.pass_rate")

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> CustomSection:
        """Scored verdicts by kind and name; unscored ones are the core's counts."""
        groups: dict[tuple[str, str], list[Any]] = {}
        for verdict in verdicts:
            if verdict.valid and verdict.result is not None:
                groups.setdefault((verdict.kind, str(verdict.attributes.get("name", ""))), []).append(verdict.result)
        section = CustomSection(repairs=repairs_by_judge(verdicts))
        for (kind, name), results in sorted(groups.items()):
            if kind == "compare":
                section.compare[name] = pairwise_figures(results)
            elif kind == "check":
                section.check[name] = pass_figures(results)
            else:
                scales = {(r.low, r.high) for r in results if isinstance(r, ScoreResult)}
                scale = next(iter(scales)) if len(scales) == 1 else None  # one rubric scale: the bounds
                getattr(section, kind)[name] = mean_figures([r.score for r in results], scale)
        return section

    def markdown(self, section: Section) -> str:
        """How each judge's verdicts were reached; the figures are the generic metric table's."""
        assert isinstance(section, CustomSection)
        return repairs_markdown(section.repairs)


FAMILY = Custom()
