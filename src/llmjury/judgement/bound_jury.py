"""What a test awaits: `BoundJury`, the `jury` fixture's value, and the judgements its calls return.

`BoundJury` renders the core prompts in `prompts/core/`, calls the judging blocks of llmjury.judgement.judges,
records one typed verdict per call on the running test and returns it. An unscored judgement never
raises: the test sees `.scored` and `.error`, and the report counts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from llmjury.chat import ChatRequest, Message
from llmjury.errors import provider_fault
from llmjury.fingerprints import criteria_fingerprint
from llmjury.judgement.judges import (
    CHOICE_FIELD,
    CHOICE_PARSER,
    GEVAL_PARSER,
    SCORE_PARSER,
    GEvalResult,
    Order,
    PairwiseResult,
    RubricScore,
    ScoreResult,
    Scoring,
    geval_score,
    pairwise,
    structured,
)
from llmjury.judgement.jury import Jury
from llmjury.judgement.verdicts import CUSTOM, JudgeConfig, Verdict
from llmjury.model import Result

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

R = TypeVar("R", bound=Result)


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
        ab: list[Order] = ["ab"]
        ba: list[Order] = ["ba"]
        orders = ab + ba if several else ab * k + ba * k
        judged = await pairwise(self, self.family, a, b, template="core/compare.j2", orders=orders,
                                variables={"criteria": criteria, "question": question}, decisions=CHOICE_FIELD)
        verdict = self._verdict("compare", judged.config(CHOICE_PARSER), judged.result(), judged.error,
                                {**judged.answers.verdict_fields(self), "cause": judged.cause}, name,
                                criteria=criteria, question=question, a=a, b=b)
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
        graded: BaseModel | None = parsed.parsed if parsed.scored else None
        result = None
        if parsed.scored:
            assert graded is not None  # a scored answer of `structured` is its validated model
            result = ScoreResult(score=float(graded.score), low=low, high=high,  # type: ignore[attr-defined]
                                 output=graded.model_dump(mode="json"), attempts=parsed.attempts)
        verdict = self._verdict("score", config, result, parsed.error, {**runs.verdict_fields(self),
                                "cause": parsed.cause}, name,
                                rubric=rubric, question=question, answer=answer)
        return Score(verdict, output=graded)

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
                 "repaired": scored.repaired, "repair_failed": scored.repair_failed, "cause": scored.cause}
        verdict = self._verdict("geval", config, scored.result, scored.error, usage, name, criterion=criterion,
                                context=context, text=text)
        return GEvalScore(verdict)

    def _verdict(self, kind: str, config: JudgeConfig, result: Result | None, error: str | None,
                 fields: Mapping[str, Any], name: str | None, **attributes: Any) -> Verdict:
        config = config.model_copy(update={"criteria": criteria_fingerprint(attributes)})
        verdict = Verdict(case_id=self.case_id, family=self.family, kind=kind, judge=config, result=result,
                          valid=result is not None, error=None if result is not None else error or "no result",
                          attributes={"name": name or self.name, "test": self.test, **attributes}, **fields)
        self._record(verdict)
        return verdict
