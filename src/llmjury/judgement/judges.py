"""Judge calls a test awaits: a pairwise comparison in both orders, a rubric score with structured
output, a G-Eval score and a role's plain answer.

The building blocks: `pairwise`, `structured` and `geval_score`, which a family pipeline calls
with its own template, parser and labels; they return what the judge decided and never build a
verdict. `BoundJury` (llmjury.judgement.bound_jury, what the `jury` fixture gives a test) calls them with the
core prompts and records the verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel

from llmjury.asked import Asked
from llmjury.chat import ChatRequest, Sample, Usage
from llmjury.errors import JudgeParseError, NoLogprobsError, ProviderError, UnscoredCause
from llmjury.judgement.geval_scoring import frequency_weighted, logprob_weighted, parse_score
from llmjury.judgement.judging import JudgeAnswer, JudgeRuns, ask_judge, complete_whole, failed_call, unanswered
from llmjury.judgement.jury import Jury
from llmjury.judgement.verdicts import JudgeConfig
from llmjury.majority import Majority, robust_verdict
from llmjury.model import Result
from llmjury.prompts import RenderedPrompt
from llmjury.reading.choice import Choice, Option
from llmjury.reading.verdict_json import read_model
from llmjury.redact import redact_spec
from llmjury.running.decision_field import DecisionField, Read

CHOICE_PARSER = "core-choice/5"
SCORE_PARSER = "core-structured/3"
GEVAL_PARSER = "core-geval/3"

Order = Literal["ab", "ba"]
Scoring = Literal["auto", "logprobs", "sampling"]
M = TypeVar("M", bound=BaseModel)


# -- typed results (what a verdict records) -------------------------------------------------------
class PairRun(BaseModel):
    """One judge run of a pair: the order shown, what the judge said, and whom that favours."""

    order: Order
    juror: str
    decision: str | None = None
    winner: str | None = None
    error: str | None = None
    attempts: int = 1
    #: The decision (or the cause) comes from a repair call that asked for the decision alone.
    repaired: bool = False
    #: Where the decision was read: a schema's `decision` field, or the text's decision line.
    read: Read | None = None
    #: Why the run holds no decision (None: it decided).
    cause: UnscoredCause | None = None


class JurorVote(BaseModel):
    """A juror's own majority, when several jurors judge one pair."""

    judge: str
    winner: str | None


class PairwiseResult(Result):
    """The robust majority of a pairwise judgement: `winner` is one of the two names or a tie."""

    winner: str
    confidence: str
    counted_runs: int
    vote_counts: dict[str, int]
    consistent: bool | None = None
    runs: list[PairRun]
    jurors: list[JurorVote] | None = None


class ScoreResult(Result):
    """A rubric score read from the judge's validated structured output."""

    score: float
    low: int
    high: int
    output: dict[str, Any]
    attempts: int = 1


class GEvalResult(Result):
    """A G-Eval score: probability-weighted over the score tokens, or frequency-weighted over samples."""

    score: float
    method: Literal["logprobs", "sampling"]
    distribution: dict[str, float]
    samples: int = 1
    parsed: int = 1


class RubricScore(BaseModel):
    """The default structured output of `jury.score`: a short reason, then the score."""

    reasoning: str
    score: int


# -- building blocks for families ------------------------------------------------------------------
#: What `parse_choice` asks for when an answer holds no readable decision (the repair call).
CHOICE_FORMAT = Asked(alternatives=("### A", "### B", "### tie"))
#: `core/compare.j2`'s decisions after "###", and the names a judge gives them.
CHOICE = Choice(CHOICE_PARSER, (Option("a", ("Response A", "A")), Option("b", ("Response B", "B")),
                                Option("tie", ("tie", "a tie", "it's a tie", "it is a tie"))),
                marker="###", expected=CHOICE_FORMAT,
                ties=frozenset({"tie"}))


def parse_choice(text: str) -> str:
    """`a`, `b` or `tie`: the judge's own final decision after "###" (`### A`, `### Response B`,
    `### Final decision: tie`, a `###` heading with the choice on the next line), by the rules of
    `llmjury.reading.choice`."""
    return CHOICE.read(text)


#: `parse_choice`'s decisions: the response shown first (0), shown second (1), or a tie.
CHOICE_LABELS: Mapping[str, int | str] = {"a": 0, "b": 1, "tie": "tie"}
#: The same decisions as a schema field: the values `core/compare.j2` lists after "###".
CHOICE_FIELD = DecisionField({"A": "a", "B": "b", "tie": "tie"}, CHOICE_PARSER)


@dataclass
class Pairwise:
    """What `pairwise` decided: every run, the robust majority (None when no run counted), each
    juror's vote for a jury, and the runs' raw text and usage."""

    runs: list[PairRun]
    majority: Majority | None
    answers: JudgeRuns
    jurors: list[JurorVote] | None
    prompt: str
    #: The orders asked with no counted run (every call failed or was refused, or no answer was
    #: readable): the other order alone is not the position-balanced decision asked for.
    lost: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool | None:
        """Whether the majorities of the two orders agree (None unless both orders were scored)."""
        by_order = {}
        for order in ("ab", "ba"):
            majority = robust_verdict([r.winner for r in self.runs if r.order == order and r.winner is not None])
            if majority is None:
                return None
            by_order[order] = majority.winner
        return by_order["ab"] == by_order["ba"]

    @property
    def error(self) -> str | None:
        """Why no decision stands: no run counted, or none of one order (naming the first cause and
        every distinct one)."""
        if self.majority is not None:
            return None
        lost = self.lost
        runs = [r for r in self.runs if r.order in lost] if lost else self.runs
        errors = sorted({r.error for r in runs if r.error})
        first = next((r.error for r in runs if r.error), "no runs")
        if lost:
            return f"{first.split(':')[0]}: no judge run of order {'/'.join(lost)} counted ({'; '.join(errors)})"
        return f"{first.split(':')[0]}: no judge run counted ({'; '.join(errors)})"

    @property
    def cause(self) -> UnscoredCause | None:
        """The cause of the run `error` names first (None when a decision stands)."""
        if self.majority is not None:
            return None
        runs = [r for r in self.runs if r.order in self.lost] if self.lost else self.runs
        return next((r.cause for r in runs if r.error), None)

    def config(self, parser: str) -> JudgeConfig:
        """The judge configuration a verdict on this pair records (`parser` names the decision's reader)."""
        return JudgeConfig(provider=self.answers.provider, prompt=self.prompt, runs=len(self.runs), parser=parser,
                           **self.answers.sampling)

    def result(self) -> PairwiseResult | None:
        if self.majority is None:
            return None
        m = self.majority
        return PairwiseResult(winner=m.winner, confidence=m.confidence, counted_runs=m.counted,
                              vote_counts=m.counts, consistent=self.consistent, runs=self.runs, jurors=self.jurors)


async def pairwise(jury: Jury, family: str, first: str, second: str, *, template: str, orders: Sequence[Order],
                   slots: tuple[str, str] = ("response_a", "response_b"), variables: Mapping[str, Any] | None = None,
                   parse: Callable[[str], str] = CHOICE, labels: Mapping[str, int | str] = CHOICE_LABELS,
                   names: tuple[str, str] = ("a", "b"), system: str | None = None, role: str = "judge",
                   round_index: int = 0, vote: Callable[[list[str]], Majority | None] = robust_verdict,
                   decisions: DecisionField | None = None) -> Pairwise:
    """Judge `first` against `second` once per entry of `orders` ("ab": first shown in slot 0).

    `parse` reads a decision from the judge's text (a `llmjury.reading.choice.Choice` reads it with
    the template's own labels, language and format as its `reading.toml` declares them); `labels`
    maps it to the slot it favours (0 or 1) or to an outcome that needs no swapping ("tie",
    "tie (bothbad)"); a winner is named by `names`. `vote` turns one juror's counted winners into
    its decision (the robust majority by default; MT-Bench's "both orders agree, else a tie" for
    the arena). `decisions` names the prompt's decisions as a schema field, asked for where the
    provider takes one (llmjury.running.decision_field); `parse` still reads free text. One juror: its
    decision is the verdict. Several (`spec+spec`, `spec*k`): the jury decides by robust
    majority over the jurors' decisions. `system` names a system-prompt template;
    `round_index` asks for fresh samples (a later round).
    """
    if isinstance(parse, Choice):  # the template's own labels, language and format (prompts' reading.toml)
        parse = parse.declared(jury.prompts.reading(template))
    requests = []
    for order in orders:
        shown = (first, second) if order == "ab" else (second, first)
        prompt = jury.render(template, **dict(variables or {}), **dict(zip(slots, shown, strict=True)))
        requests.append(jury.request(prompt, system=jury.render(system) if system else None))
    jurors = jury.jurors(role, family)
    runs: list[PairRun] = []
    votes: list[JurorVote] = []
    parts: list[JudgeRuns] = []
    for juror in jurors:
        answers = await ask_judge(jury, family, requests, parse, role=role, juror=juror, round_index=round_index,
                                  decisions=decisions)
        parts.append(answers)
        mine = [_pair_run(order, juror.label, answer, labels, names)
                for order, answer in zip(orders, answers.answers, strict=True)]
        runs += mine
        # A decision from one order alone is not the position-balanced one asked for: a juror with an
        # order none of whose runs counted (failed, refused, or unreadable after its repair) has no vote.
        balanced = {r.order for r in mine if r.winner is not None} >= set(orders)
        own = vote([r.winner for r in mine if r.winner is not None]) if balanced else None
        votes.append(JurorVote(judge=juror.label, winner=own.winner if own else None))
    lost: list[str] = [order for order in dict.fromkeys(orders)
                       if not any(r.order == order and r.winner is not None for r in runs)]
    if len(lost) == len(set(orders)):
        lost = []  # no order counted: the runs' own errors say why, not an order's
    majority = own if len(jurors) == 1 else robust_verdict([v.winner for v in votes if v.winner is not None])
    return Pairwise(runs=runs, majority=majority, answers=JudgeRuns.merged(parts, jury.label(role, family)),
                    jurors=votes if len(jurors) > 1 else None, prompt=requests[0].task if requests else "",
                    lost=lost)


def _pair_run(order: Order, juror: str, answer: JudgeAnswer, labels: Mapping[str, int | str],
              names: tuple[str, str]) -> PairRun:
    if not answer.scored:
        return PairRun(order=order, juror=juror, error=answer.error, attempts=answer.attempts,
                       repaired=answer.repaired, cause=answer.cause)
    decision = str(answer.parsed)
    if decision not in labels:
        return PairRun(order=order, juror=juror, decision=decision, attempts=answer.attempts, repaired=answer.repaired,
                       error=f"unparseable: decision {decision!r} is none of {sorted(labels)}", cause="out_of_scale")
    label = labels[decision]
    if isinstance(label, int):
        slot = label if order == "ab" else 1 - label
        winner = names[slot]
    else:
        winner = label
    return PairRun(order=order, juror=juror, decision=decision, winner=winner, attempts=answer.attempts,
                   repaired=answer.repaired, read=answer.read)


def schema_parser(schema: type[M], parser: str = SCORE_PARSER) -> Callable[[str], M]:
    """A parser validating the judge's JSON against `schema` (`llmjury.reading.verdict_json`: a ```json
    fence is tolerated; a repeated key or two score fields that disagree are ambiguous, never read)."""

    def parse(text: str) -> M:
        return read_model(text, schema, parser)

    return parse


async def structured(jury: Jury, family: str, prompt: RenderedPrompt, schema: type[M], *,
                     check: Callable[[M], str | None] = lambda _: None, role: str = "judge",
                     retries: int | None = None, parser: str = SCORE_PARSER) -> JudgeRuns:
    """One judge answer as `schema`, asked through the provider's structured-output support; an
    answer that does not validate, or that `check` rejects (it returns the cause), is asked again
    (`retries` times, the run's `parse_retries` by default). `check` is the value's own check (a score
    on the scale asked): what it rejects is unscored as `out_of_scale`. `parser` names the reader in errors."""
    validate = schema_parser(schema, parser)

    def parse(text: str) -> M:
        value = validate(text)
        cause = check(value)
        if cause:
            raise JudgeParseError(parser, text, cause, kind="out_of_scale",
                                  expected=Asked(fields=tuple(schema.model_fields)))
        return value

    request = jury.request(prompt, json_schema=schema.model_json_schema(), schema_name=schema.__name__)
    return await ask_judge(jury, family, [request], parse, role=role, retries=retries)


@dataclass
class GEvalScoring:
    """A G-Eval score (or why there is none) with the raw answers and what they cost."""

    result: GEvalResult | None
    error: str | None
    raw: list[str]
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    latency_s: float = 0.0
    sampling: dict[str, Any] = field(default_factory=dict)
    #: How many samples a repair call decided (`JudgeRuns.repaired`); the logprob path makes none.
    repaired: int = 0
    #: Why there is no score (None: scored).
    cause: UnscoredCause | None = None
    #: How many samples a repair call could not decide (`JudgeRuns.repair_failed`).
    repair_failed: int = 0


async def geval_score(jury: Jury, family: str, prompt: RenderedPrompt, scale: range, *, scoring: Scoring = "auto",
                      n: int = 20, temperature: float = 1.0, top_p: float = 1.0, top_logprobs: int = 5,
                      role: str = "judge", prefix: str = "") -> GEvalScoring:
    """G-Eval's scoring: weight the score tokens by their probabilities when the provider returns
    logprobs (`auto`, `logprobs`), else ask n samples and weight each score by its frequency. `prefix`
    is how an error names the `scoring` and `n` settings (`geval.` for a family's options; none for
    `jury.geval`'s arguments)."""
    if scoring in ("auto", "logprobs"):
        request = jury.request(prompt, logprobs=True, top_logprobs=top_logprobs)
        try:
            request, completion, cut = await complete_whole(jury, role, family, request)
        except ProviderError as exc:
            failure, failed = failed_call(exc)
            return GEvalScoring(None, failure, [], 0, 0, False, sampling=request.sampling, cause=failed)
        sample = completion.samples[0]
        usage = sum((s.usage for s in (*cut, sample)), Usage())
        # Sampling stands in for logprobs only where the provider gives none: an answer that has
        # logprobs but no readable score is unscored, not 20 more calls. Forced logprobs from a server
        # that sends none: every later answer would lack them too, so the first one stops the run.
        if not sample.logprobs and scoring == "logprobs" and sample.outcome is None:
            raise NoLogprobsError(_no_logprobs(jury, role, family, prefix))
        if sample.logprobs or scoring == "logprobs":
            weighted = logprob_weighted(sample, scale) if sample.outcome is None else None
            result = None if weighted is None else GEvalResult(
                score=weighted[0], method="logprobs", distribution={str(k): v for k, v in weighted[1].items()})
            error, cause = _logprob_cause(sample, scale, request) if weighted is None else (None, None)
            return GEvalScoring(result, error, [*(s.text for s in cut), sample.text], usage.prompt_tokens,
                                usage.completion_tokens, completion.cached[0], completion.latency_s, request.sampling,
                                cause=cause)
    request = jury.request(prompt, temperature=temperature, top_p=top_p)
    runs = await ask_judge(jury, family, [request] * n, lambda text: parse_score(text, scale), role=role)
    scores = [cast(float, a.parsed) for a in runs.answers if a.scored]  # parse_score's value for a scored answer
    result = None
    if scores:
        score, distribution = frequency_weighted(scores, scale)
        result = GEvalResult(score=score, method="sampling", samples=len(runs.answers), parsed=len(scores),
                             distribution={str(k): v for k, v in distribution.items()})
    error = None if scores else next(a.error for a in runs.answers if a.error)
    return GEvalScoring(result, error, runs.raw, runs.usage.prompt_tokens, runs.usage.completion_tokens, runs.cached,
                        runs.latency_s, request.sampling, runs.repaired, None if scores else runs.cause,
                        runs.repair_failed)


def _no_logprobs(jury: Jury, role: str, family: str, prefix: str) -> str:
    """Why forced logprobs gave no score: the server sends none, which no answer text can change."""
    spec = jury.spec(role, family)
    urls = sorted({url for j in spec.jurors if (url := j.spec.text_option("base_url"))})
    server = spec.label + (f" at {', '.join(urls)}" if urls else "")
    return redact_spec(f"no logprobs: {server} answered without logprobs, and {prefix}scoring=logprobs forces "
                       f"them; set {prefix}scoring=auto (logprobs where a server gives them, else {prefix}n sampled "
                       f"answers) or {prefix}scoring=sampling; the run stops at this first answer")


def _logprob_cause(sample: Sample, scale: range, request: ChatRequest) -> tuple[str, UnscoredCause]:
    """Why a logprob-scored answer has no score: no answer to read (cut off again, filtered, ...), its
    parse error, or no clean token at the score."""
    if sample.outcome is not None:
        return unanswered(sample, sample.outcome, request), sample.outcome
    try:
        value = parse_score(sample.text, scale)
    except JudgeParseError as exc:
        return f"unparseable: {exc.cause}", exc.kind
    if not float(value).is_integer():
        return f"unparseable: the score {value} is a fraction, and logprobs weigh whole-number score tokens", \
            "out_of_scale"
    return "unparseable: no score on the scale with logprobs at its token", "no_decision"
