"""Judge calls a test awaits: a pairwise comparison in both orders, a rubric score with structured
output, a G-Eval score and a role's plain answer.

Two layers. `pairwise`, `structured` and `geval_score` are the building blocks a family pipeline
calls with its own template, parser and labels; they return what the judge decided and never
build a verdict. `BoundJury` (what the `jury` fixture gives a test) renders the core prompts in
`prompts/core/`, calls the blocks, records one typed verdict per call on the running test and
returns it. An unscored judgement never raises: the test sees `.scored` and `.error`, and the
report counts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from llmjury.chat import ChatRequest, Message
from llmjury.decision_field import DecisionField, Read
from llmjury.decision_line import BOLD, DuplicateKeyError, compile_line, fold, looks_alike, own_lines, strict_json
from llmjury.errors import JudgeParseError, ProviderError
from llmjury.geval_scoring import frequency_weighted, logprob_weighted, parse_score
from llmjury.judging import JudgeAnswer, JudgeRuns, ask_judge
from llmjury.jury import Jury
from llmjury.majority import Majority, robust_verdict
from llmjury.model import Result
from llmjury.prompts import RenderedPrompt
from llmjury.verdicts import JudgeConfig, Verdict

#: The family a test's judge calls record under when the run defines no other (see `llmjury.custom`).
CUSTOM = "custom"
CHOICE_PARSER = "core-choice/3"
SCORE_PARSER = "core-structured/2"
GEVAL_PARSER = "core-geval/2"

Order = Literal["ab", "ba"]
Scoring = Literal["auto", "logprobs", "sampling"]
M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=Result)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


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
CHOICE_FORMAT = "### A\nor\n### B\nor\n### tie"
_LABEL = r"(?:(?:final\s+)?(?:decision|verdict|answer)\s*:?\s*)?"
_CHOICE = rf"(?:response\s+)?{BOLD}(?P<choice>A|B|tie){BOLD}"
_CHOICE_LINE = compile_line(rf"###\s*{BOLD}\s*{_LABEL}{BOLD}\s*{_CHOICE}")
_CHOICE_ALONE = compile_line(_CHOICE)
_CHOICE_HEADING = compile_line(rf"###\s*{BOLD}\s*{_LABEL}")
_CHOICE_ELSEWHERE = re.compile(rf"###\s*{BOLD}\s*{_LABEL}{BOLD}\s*(?:response\s+)?{BOLD}(?:A|B|tie)\b", re.IGNORECASE)


def parse_choice(text: str) -> str:
    """`a`, `b` or `tie` from the final line of the judge's own words (quotations blanked), as the
    prompt asks it after "###": `### A`, `### Response B`, `### tie` (an optional `Final decision:`
    label allowed), or a `###` heading line followed by the choice alone. Extra words on that line,
    a look-alike letter, or a second `### A|B|tie` anywhere else in the answer are ambiguous:
    JudgeParseError, never a guess."""
    lines = own_lines(text)
    if not lines:
        raise JudgeParseError(CHOICE_PARSER, text, 'no final decision after "###"', expected=CHOICE_FORMAT)
    last, used = lines[-1].text, 1
    match = _CHOICE_LINE.match(last)
    if match is None and len(lines) > 1 and _CHOICE_HEADING.match(lines[-2].text):
        match, used = _CHOICE_ALONE.match(last), 2
    if match is None:
        cause = "look-alike characters on the decision line" if looks_alike(last) else (
            f"the final line {last.strip()[:80]!r} is not '### A', '### B' or '### tie'")
        raise JudgeParseError(CHOICE_PARSER, text, cause, expected=CHOICE_FORMAT)
    for line in lines[:-used]:
        if _CHOICE_ELSEWHERE.search(fold(line.text)):
            raise JudgeParseError(CHOICE_PARSER, text, f"a second decision-shaped line {line.text.strip()[:80]!r}",
                                  expected=CHOICE_FORMAT)
    return match.group("choice").lower()


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
    #: The orders asked whose every call failed or was refused: no answer came back to read.
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
        """Why no decision stands: no run counted, or every run of one order failed (naming the first
        cause and every distinct one)."""
        if self.majority is not None:
            return None
        lost = self.lost
        runs = [r for r in self.runs if r.order in lost] if lost else self.runs
        errors = sorted({r.error for r in runs if r.error})
        first = next((r.error for r in runs if r.error), "no runs")
        if lost:
            return f"{first.split(':')[0]}: no judge run of order {'/'.join(lost)} counted ({'; '.join(errors)})"
        return f"{first.split(':')[0]}: no judge run counted ({'; '.join(errors)})"

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
                   parse: Callable[[str], str] = parse_choice, labels: Mapping[str, int | str] = CHOICE_LABELS,
                   names: tuple[str, str] = ("a", "b"), system: str | None = None, role: str = "judge",
                   round_index: int = 0, vote: Callable[[list[str]], Majority | None] = robust_verdict,
                   decisions: DecisionField | None = None) -> Pairwise:
    """Judge `first` against `second` once per entry of `orders` ("ab": first shown in slot 0).

    `parse` reads a decision from the judge's text; `labels` maps it to the slot it favours (0
    or 1) or to an outcome that needs no swapping ("tie", "tie (bothbad)"); a winner is named
    by `names`. `vote` turns one juror's counted winners into its decision (the robust majority
    by default; MT-Bench's "both orders agree, else a tie" for the arena). `decisions` names the
    prompt's decisions as a schema field, asked for where the provider takes one
    (llmjury.decision_field); `parse` still reads free text. One juror: its
    decision is the verdict. Several (`spec+spec`, `spec*k`): the jury decides by robust
    majority over the jurors' decisions. `system` names a system-prompt template;
    `round_index` asks for fresh samples (a later round).
    """
    requests = []
    for order in orders:
        shown = (first, second) if order == "ab" else (second, first)
        prompt = jury.render(template, **dict(variables or {}), **dict(zip(slots, shown, strict=True)))
        requests.append(jury.request(prompt, system=jury.render(system) if system else None))
    jurors = jury.jurors(role, family)
    runs: list[PairRun] = []
    votes: list[JurorVote] = []
    parts: list[JudgeRuns] = []
    answered: set[Order] = set()
    for juror in jurors:
        answers = await ask_judge(jury, family, requests, parse, role=role, juror=juror, round_index=round_index,
                                  decisions=decisions)
        parts.append(answers)
        answered |= {order for order, answer in zip(orders, answers.answers, strict=True) if answer.raw}
        mine = [_pair_run(order, juror.label, answer, labels, names)
                for order, answer in zip(orders, answers.answers, strict=True)]
        runs += mine
        own = vote([r.winner for r in mine if r.winner is not None])
        votes.append(JurorVote(judge=juror.label, winner=own.winner if own else None))
    # A decision from the other order alone is not the position-balanced one asked for: an order
    # whose every call failed leaves the comparison unscored (an order the judge answered without
    # deciding stays the robust majority's to outvote).
    lost = [order for order in dict.fromkeys(orders) if order not in answered] if answered else []
    majority = None if lost else own if len(jurors) == 1 else robust_verdict(
        [v.winner for v in votes if v.winner is not None])
    return Pairwise(runs=runs, majority=majority, answers=JudgeRuns.merged(parts, jury.label(role, family)),
                    jurors=votes if len(jurors) > 1 else None, prompt=requests[0].task if requests else "",
                    lost=lost)


def _pair_run(order: Order, juror: str, answer: JudgeAnswer, labels: Mapping[str, int | str],
              names: tuple[str, str]) -> PairRun:
    if not answer.scored:
        return PairRun(order=order, juror=juror, error=answer.error, attempts=answer.attempts,
                       repaired=answer.repaired)
    decision = str(answer.parsed)
    if decision not in labels:
        return PairRun(order=order, juror=juror, decision=decision, attempts=answer.attempts, repaired=answer.repaired,
                       error=f"unparseable: decision {decision!r} is none of {sorted(labels)}")
    label = labels[decision]
    if isinstance(label, int):
        slot = label if order == "ab" else 1 - label
        winner = names[slot]
    else:
        winner = label
    return PairRun(order=order, juror=juror, decision=decision, winner=winner, attempts=answer.attempts,
                   repaired=answer.repaired, read=answer.read)


def schema_parser(schema: type[M], parser: str = SCORE_PARSER) -> Callable[[str], M]:
    """A parser validating the judge's JSON against `schema` (a ```json fence is tolerated); an
    object with a repeated key (`{"score": 2, "score": 5}`) is refused, never read by its last value."""

    def parse(text: str) -> M:
        body = _FENCE.sub("", text.strip())
        try:
            data = strict_json(body)
        except DuplicateKeyError as exc:
            raise JudgeParseError(parser, text, f"json: {exc}", expected=expected) from exc
        except ValueError:
            data = None  # malformed JSON: the schema's validation below names the fault
        if boolean := _boolean_number(schema, data):  # pydantic's lax mode reads true as 1
            raise JudgeParseError(parser, text, f"{boolean}: a boolean is not a number", expected=expected)
        try:
            return schema.model_validate_json(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "json"
            raise JudgeParseError(parser, text, f"{where}: {first['msg']}", expected=expected) from exc

    expected = f"one JSON object with the fields {', '.join(schema.model_fields)}, and nothing else"
    return parse


def _boolean_number(schema: type[BaseModel], data: Any) -> str | None:
    """The first numeric field the judge answered with true or false, if any."""
    if not isinstance(data, dict):
        return None
    return next((name for name, spec in schema.model_fields.items()
                 if isinstance(data.get(name), bool) and spec.annotation in (int, float, int | None, float | None)),
                None)


async def structured(jury: Jury, family: str, prompt: RenderedPrompt, schema: type[M], *,
                     check: Callable[[M], str | None] = lambda _: None, role: str = "judge",
                     retries: int | None = None, parser: str = SCORE_PARSER) -> JudgeRuns:
    """One judge answer as `schema`, asked through the provider's structured-output support; an
    answer that does not validate, or that `check` rejects (it returns the cause), is asked again
    (`retries` times, the run's `parse_retries` by default). `parser` names the reader in errors."""
    validate = schema_parser(schema, parser)

    def parse(text: str) -> M:
        value = validate(text)
        cause = check(value)
        if cause:
            raise JudgeParseError(parser, text, cause,
                                  expected=f"one JSON object with the fields {', '.join(schema.model_fields)}")
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


async def geval_score(jury: Jury, family: str, prompt: RenderedPrompt, scale: range, *, scoring: Scoring = "auto",
                      n: int = 20, temperature: float = 1.0, top_p: float = 1.0, top_logprobs: int = 5,
                      role: str = "judge") -> GEvalScoring:
    """G-Eval's scoring: weight the score tokens by their probabilities when the provider returns
    logprobs (`auto`, `logprobs`), else ask n samples and weight each score by its frequency."""
    if scoring in ("auto", "logprobs"):
        request = jury.request(prompt, logprobs=True, top_logprobs=top_logprobs)
        try:
            completion = await jury.complete(role, family, request)
        except ProviderError as exc:
            return GEvalScoring(None, f"call failed: {exc}", [], 0, 0, False, sampling=request.sampling)
        sample = completion.samples[0]
        # Sampling stands in for logprobs only where the provider gives none: an answer that has
        # logprobs but no readable score is unscored, not 20 more calls.
        if sample.logprobs or scoring == "logprobs":
            weighted = logprob_weighted(sample, scale) if sample.problem is None else None
            result = None if weighted is None else GEvalResult(
                score=weighted[0], method="logprobs", distribution={str(k): v for k, v in weighted[1].items()})
            error = None if weighted is not None else sample.problem or _logprob_cause(sample.text, scale)
            return GEvalScoring(result, error, [sample.text], sample.usage.prompt_tokens,
                                sample.usage.completion_tokens, completion.cached[0], completion.latency_s,
                                request.sampling)
    request = jury.request(prompt, temperature=temperature, top_p=top_p)
    runs = await ask_judge(jury, family, [request] * n, lambda text: parse_score(text, scale), role=role)
    scores = [a.parsed for a in runs.answers if a.scored]
    result = None
    if scores:
        score, distribution = frequency_weighted(scores, scale)
        result = GEvalResult(score=score, method="sampling", samples=len(runs.answers), parsed=len(scores),
                             distribution={str(k): v for k, v in distribution.items()})
    error = None if scores else next(a.error for a in runs.answers if a.error)
    return GEvalScoring(result, error, runs.raw, runs.usage.prompt_tokens, runs.usage.completion_tokens, runs.cached,
                        runs.latency_s, request.sampling, runs.repaired)


def _logprob_cause(text: str, scale: range) -> str:
    """Why a logprob-scored answer has no score: its parse error, or no clean token at the score."""
    try:
        parse_score(text, scale)
    except JudgeParseError as exc:
        return f"unparseable: {exc.cause}"
    return "unparseable: no score on the scale with logprobs at its token"


# -- what a test awaits -----------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Judgement(Generic[R]):
    """A judge call's outcome: the verdict it recorded and, when scored, its typed result."""

    verdict: Verdict

    def __repr__(self) -> str:
        """Short, because pytest prints it under a failed assertion."""
        brief = self.brief() if self.scored else f"unscored: {self.error}"
        return f"{type(self).__name__}({brief})"

    def brief(self) -> str:
        return repr(self.result)

    @property
    def scored(self) -> bool:
        return self.verdict.valid

    @property
    def error(self) -> str | None:
        return self.verdict.error

    @property
    def result(self) -> R | None:
        return self.verdict.result  # type: ignore[return-value]


@dataclass(frozen=True, repr=False)
class Comparison(Judgement[PairwiseResult]):
    def brief(self) -> str:
        assert self.result is not None
        return f"winner={self.winner!r}, consistent={self.consistent}, votes={self.result.vote_counts}"

    @property
    def winner(self) -> str | None:
        """"a", "b" or "tie"; None when unscored."""
        return self.result.winner if self.result else None

    @property
    def consistent(self) -> bool | None:
        """Whether both orders agreed (None when either order went unscored)."""
        return self.result.consistent if self.result else None


@dataclass(frozen=True, repr=False)
class Score(Judgement[ScoreResult]):
    output: BaseModel | None = None  # the judge's validated structured output

    def brief(self) -> str:
        return f"score={self.score}, output={self.output!r}"

    @property
    def score(self) -> float | None:
        return self.result.score if self.result else None


@dataclass(frozen=True, repr=False)
class GEvalScore(Judgement[GEvalResult]):
    def brief(self) -> str:
        assert self.result is not None
        return f"score={self.result.score:.3f}, method={self.result.method!r}"

    @property
    def score(self) -> float | None:
        return self.result.score if self.result else None


class BoundJury(Jury):
    """The jury one test sees: the run's providers and cache, plus judge calls that record their
    verdicts on that test (under `family`, with `name` grouping them in the report)."""

    def __init__(self, jury: Jury, record: Callable[[Verdict], None], *, case_id: str, name: str,
                 test: str, family: str = CUSTOM) -> None:
        super().__init__(jury.engine, jury.settings, jury.prompts, jury.prices)
        self._record = record
        self.case_id, self.name, self.test, self.family = case_id, name, test, family

    async def ask(self, role: str, prompt: str, *, system: str | None = None, **params: Any) -> str:
        """A role's plain answer to `prompt`, sampled as generation.toml's `core/ask` entry says unless
        `params` say otherwise. A failed call, a refusal or an empty answer raises a ProviderError
        naming the cause: there is nothing to judge, and the test fails saying why."""
        messages = [Message(role="user", content=prompt)]
        if system is not None:
            messages.insert(0, Message(role="system", content=system))
        request = ChatRequest(messages=tuple(messages), task="core/ask", **{**self.prompts.generation("core/ask"),
                                                                             **params})
        return (await self.complete(role, self.family, request)).answer()

    async def compare(self, a: str, b: str, *, criteria: str, question: str = "", runs: int | None = None,
                      name: str | None = None) -> Comparison:
        """Which of `a` and `b` is better by `criteria`: k runs (`--llm-runs`) in each order, robust majority."""
        k = self.settings.judge_runs if runs is None else runs
        if k < 1:
            raise ValueError(f"jury.compare(runs={k}): at least one run per order")
        several = len(self.jurors("judge", self.family)) > 1
        orders: list[Order] = ["ab", "ba"] if several else ["ab"] * k + ["ba"] * k
        judged = await pairwise(self, self.family, a, b, template="core/compare.j2", orders=orders,
                                variables={"criteria": criteria, "question": question}, decisions=CHOICE_FIELD)
        verdict = self._verdict("compare", judged.config(CHOICE_PARSER), judged.result(), judged.error,
                                judged.answers.verdict_fields(self), name, criteria=criteria, question=question,
                                a=a, b=b)
        return Comparison(verdict)

    async def score(self, answer: str, *, rubric: str, question: str = "", scale: tuple[int, int] = (1, 5),
                    output: type[BaseModel] = RubricScore, name: str | None = None) -> Score:
        """`answer` graded on `rubric` as structured output (`output`, a pydantic model with an
        integer `score` field), validated and asked again once when invalid."""
        if "score" not in output.model_fields:
            raise TypeError(f"jury.score(output={output.__name__}): the model needs a `score` field")
        low, high = scale
        fields = "\n".join(f"- {key}: {spec.get('type', 'value')}"
                           for key, spec in output.model_json_schema().get("properties", {}).items())
        prompt = self.render("core/score.j2", response=answer, rubric=rubric, question=question, low=low,
                             high=high, fields=fields)

        def in_scale(value: BaseModel) -> str | None:
            got = value.score  # type: ignore[attr-defined]
            return None if low <= got <= high else f"score {got} is outside {low}-{high}"

        runs = await structured(self, self.family, prompt, output, check=in_scale)
        (parsed,) = runs.answers
        config = JudgeConfig(provider=runs.provider, prompt=prompt.task, parser=SCORE_PARSER, scoring="rubric",
                             **runs.sampling)
        result = None
        if parsed.scored:
            result = ScoreResult(score=float(parsed.parsed.score), low=low, high=high,
                                 output=parsed.parsed.model_dump(mode="json"), attempts=parsed.attempts)
        verdict = self._verdict("score", config, result, parsed.error, runs.verdict_fields(self), name,
                                rubric=rubric, question=question, answer=answer)
        return Score(verdict, output=parsed.parsed if parsed.scored else None)

    async def geval(self, text: str, *, criterion: str, steps: str | Sequence[str], context: str = "",
                    scale: tuple[int, int] = (1, 5), scoring: Scoring = "auto", n: int = 20,
                    name: str | None = None) -> GEvalScore:
        """G-Eval on `text`: the criterion and its evaluation steps in the form-filling prompt,
        scored by logprobs where the provider gives them (`auto`), else over n samples."""
        low, high = scale
        listed = steps if isinstance(steps, str) else "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
        form = criterion.split(":")[0].split("(")[0].strip() or "Score"
        prompt = self.render("core/geval.j2", criterion=criterion, steps=listed, context=context, text=text,
                             form=form, low=low, high=high)
        scored = await geval_score(self, self.family, prompt, range(low, high + 1), scoring=scoring, n=n)
        method = scored.result.method if scored.result else scoring
        config = JudgeConfig(provider=self.label("judge", self.family), prompt=prompt.task, parser=GEVAL_PARSER,
                             scoring=method, n=n if method == "sampling" else 1, **scored.sampling)
        usage = {"raw": scored.raw, "prompt_tokens": scored.prompt_tokens,
                 "completion_tokens": scored.completion_tokens, "cached": scored.cached,
                 "cost_usd": self.cost(config.provider, scored.prompt_tokens, scored.completion_tokens),
                 "repaired": scored.repaired}
        verdict = self._verdict("geval", config, scored.result, scored.error, usage, name, criterion=criterion,
                                context=context, text=text)
        return GEvalScore(verdict)

    def _verdict(self, kind: str, config: JudgeConfig, result: Result | None, error: str | None,
                 fields: Mapping[str, Any], name: str | None, **attributes: Any) -> Verdict:
        verdict = Verdict(case_id=self.case_id, family=self.family, kind=kind, judge=config, result=result,
                          valid=result is not None, error=None if result is not None else error or "no result",
                          attributes={"name": name or self.name, "test": self.test, **attributes}, **fields)
        self._record(verdict)
        return verdict
