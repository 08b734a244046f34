"""Asking a judge k times and reading its answers, without ever losing an answer.

Runs that share one request are samples 0..m-1 of it, so k runs of a judge are k distinct
cached samples, never one sample replayed k times. An answer whose decision the parser cannot
read is repaired once where the parser names the decision's format: the judge is shown its own
answer and asked for the decision alone (`prompts/core/repair.j2`, a request of its own, so it is
cached and recorded like any call). Otherwise it is asked again as the next unused sample index,
except at temperature 0, where the same request would repeat the same answer. A run that still
fails, or a refused or failed call, comes back as an unscored answer carrying the raw text and cause.

An answer cut off by its token limit (finish reason `length`, Gemini's `MAX_TOKENS`) is never read:
a decision in its prefix may be an interim one. It is asked once more with twice the room (a request
of its own, cached as any), and is unscored as `truncated` if that one is cut off too. An answer a
content filter stopped is unscored as `filtered`, a refusal as `refused`; neither is asked again.
Every unscored answer carries its cause (`UnscoredCause`), which reports count per judge and family.

A verdict judge that names its decisions (`llmjury.running.decision_field`) asks for them as a schema field
where the provider sends one natively (`--llm-judge-output`); once the server has proved that it
refuses the schema, the same runs are asked the published prompt in plain text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from llmjury.chat import ChatRequest, Completion, Message, Sample, Usage
from llmjury.errors import (
    JudgeParseError,
    PromptBlockedError,
    ProviderError,
    SchemaRefusedError,
    UnscoredCause,
    provider_fault,
)
from llmjury.judgement.jury import Jury
from llmjury.jurors import Juror
from llmjury.prompts import RenderedPrompt
from llmjury.running.decision_field import DecisionField, Read, how_read, reasoning, uses_schema

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line


@dataclass
class JudgeAnswer:
    """One run's answer: the parsed decision, or None with the reason it is unscored."""

    raw: str
    parsed: Any | None
    error: str | None = None
    cached: bool = False
    attempts: int = 1
    #: What the judge said in the attempts that were asked again (unreadable or empty), in order.
    earlier: tuple[str, ...] = ()
    #: Whether the decision comes from (or the cause names) a repair call asking for the decision alone.
    repaired: bool = False
    #: How a scored decision was read: from a schema's field or by the text parser (None: unscored).
    read: Read | None = None
    #: Why an unscored answer holds no decision (None: scored).
    cause: UnscoredCause | None = None

    @property
    def scored(self) -> bool:
        return self.error is None

    @property
    def shown(self) -> str:
        """What reports show: the reasoning of an answer read from its field, else the answer."""
        return reasoning(self.raw) if self.read == "schema" else self.raw


@dataclass
class JudgeRuns:
    answers: list[JudgeAnswer]
    provider: str
    usage: Usage
    latency_s: float
    #: The requests' temperature and max_tokens, for the verdict's judge configuration.
    sampling: dict[str, Any] = field(default_factory=dict)

    @property
    def raw(self) -> list[str]:
        """Every text the judge wrote for these runs, re-asked attempts before their final answer."""
        return [text for a in self.answers for text in (*a.earlier, a.shown)]

    @property
    def read(self) -> dict[str, int]:
        """How many scored runs had their decision read from a schema field, and how many as text."""
        counts: dict[str, int] = {}
        for answer in self.answers:
            if answer.read is not None:
                counts[answer.read] = counts.get(answer.read, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def cached(self) -> bool:
        return all(a.cached for a in self.answers)

    @property
    def cause(self) -> UnscoredCause | None:
        """The first unscored run's cause (None when every run was scored): a verdict left unscored by
        these runs records it beside its error."""
        return next((a.cause for a in self.answers if a.cause is not None), None)

    @classmethod
    def merged(cls, parts: Sequence[JudgeRuns], provider: str) -> JudgeRuns:
        """Several jurors' runs as one: answers in order, usage summed, the slowest latency."""
        return cls(answers=[a for part in parts for a in part.answers], provider=provider,
                   usage=sum((part.usage for part in parts), Usage()),
                   latency_s=max((part.latency_s for part in parts), default=0.0),
                   sampling=parts[0].sampling if parts else {})

    def verdict_fields(self, jury: Jury) -> dict[str, Any]:
        """What a verdict records about these runs: raw answers, tokens, estimated cost, latency, cache,
        and how many runs a repair call decided."""
        usage = self.usage
        return {"raw": self.raw, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                "cost_usd": jury.cost(self.provider, usage.prompt_tokens, usage.completion_tokens),
                "latency_s": self.latency_s, "cached": self.cached, "repaired": self.repaired,
                "repair_failed": self.repair_failed, "read": self.read}

    @property
    def repaired(self) -> int:
        """How many runs were decided by a repair call (a repair that still failed leaves its run unscored)."""
        return sum(a.repaired and a.scored for a in self.answers)

    @property
    def repair_failed(self) -> int:
        """How many runs a repair call was asked to decide and could not: they stay unscored."""
        return sum(a.repaired and not a.scored for a in self.answers)


def unanswered(sample: Sample, cause: UnscoredCause, request: ChatRequest) -> str:
    """The error of a sample that holds no answer to read (`Sample.outcome`), its cause first."""
    if cause == "truncated":
        return (f"truncated: the answer was cut off by its token limit (max_tokens {request.max_tokens}, "
                f"finish reason {sample.finish_reason})")
    if cause == "filtered":
        return f"filtered: a content filter stopped the answer (finish reason {sample.finish_reason})"
    return sample.problem or cause


def roomier(request: ChatRequest, sample: Sample) -> ChatRequest | None:
    """The request asked again for an answer cut off by its token limit: twice the room (twice what
    the cut answer used where the request set no limit), or None when no room is known."""
    room = request.max_tokens or sample.usage.completion_tokens
    return request.model_copy(update={"max_tokens": 2 * room}) if room else None


async def whole(complete: Callable[[ChatRequest], Awaitable[Completion]],
                request: ChatRequest) -> tuple[ChatRequest, Completion, tuple[Sample, ...]]:
    """One completion of `request`, asked once more with twice the room when its first answer was cut
    off (`ask_judge`'s rule, for a repair call and a judge read from one answer's logprobs): the
    request that got it, the completion, and the cut answer before it, if any."""
    completion = await complete(request)
    sample = completion.samples[0]
    roomy = roomier(request, sample) if sample.outcome == "truncated" else None
    if roomy is None:
        return request, completion, ()
    return roomy, await complete(roomy), (sample,)


async def complete_whole(jury: Jury, role: str, family: str,
                         request: ChatRequest) -> tuple[ChatRequest, Completion, tuple[Sample, ...]]:
    """`whole` for the single provider a role names."""
    return await whole(lambda asked: jury.complete(role, family, asked), request)


def repair_prompt(jury: Jury, request: ChatRequest, failure: JudgeParseError) -> RenderedPrompt:
    """The repair call's question, all of it in the asking template's language (its declaration's,
    else its own text's; the answer's where the request names no template): why its answer holds no
    decision, by the cause's kind, and the decision's format as the template declares it, else as
    the reader knows it (`llmjury.asked.Asked`). A JSON object asked again gets the asking request's
    room where that is more than a repair's."""
    template = request.task.rpartition("@")[0]
    language = (jury.prompts.language(template) if template else None) or failure.language
    asked = (jury.prompts.reading(template).asked if template else None) or failure.expected
    ask = jury.render("core/repair.j2", kind=failure.kind, cause=failure.cause, asked=asked, language=language)
    room = ask.generation.get("max_tokens")
    if asked is not None and asked.fields and request.max_tokens and room and request.max_tokens > room:
        # a JSON object is the whole answer once more: it gets the room the asking request gave it
        return replace(ask, generation={**ask.generation, "max_tokens": request.max_tokens})
    return ask


def failed_call(exc: ProviderError) -> tuple[str, UnscoredCause]:
    """A call that brought no answer: its error, and `filtered` for a prompt a content filter blocked."""
    return f"call failed: {exc}", "filtered" if isinstance(exc, PromptBlockedError) else "failed"


async def ask_judge(
    jury: Jury,
    family: str,
    requests: Sequence[ChatRequest],
    parse: Callable[[str], Any],
    *,
    role: str = "judge",
    retries: int | None = None,
    round_index: int = 0,
    juror: Juror | None = None,
    decisions: DecisionField | None = None,
) -> JudgeRuns:
    """One answer per request (a run); equal requests become distinct samples of one request.

    `decisions` names the values a verdict prompt allows: the judge is asked for them as a schema
    field where `--llm-judge-output` and the provider allow, and `parse` reads any free text.

    `round_index` r asks for fresh samples (judging the same battle again in a later round):
    each round owns its own block of sample indices, retries included, so rounds never collide.
    """
    retries = jury.settings.parse_retries if retries is None else retries
    juror = juror or jury.jurors(role, family)[0]
    provider = juror.spec
    mode = jury.settings.judge_output
    schema = decisions is not None and uses_schema(mode, jury.engine.provider(provider))
    # Each (round, juror) pair owns a distinct block of sample indices (Cantor pairing), so jurors
    # sharing a spec and later rounds draw fresh samples.
    round_index = (round_index + juror.index) * (round_index + juror.index + 1) // 2 + juror.index
    answers: list[JudgeAnswer | None] = [None] * len(requests)
    groups: dict[str, list[int]] = {}
    for run, request in enumerate(requests):
        groups.setdefault(request.sample_key(juror.label, 0), []).append(run)

    def reader(request: ChatRequest) -> Callable[[str], Any]:
        return decisions.reader(parse) if decisions is not None and request.native_schema else parse

    def scored(request: ChatRequest, text: str) -> Read:
        """A verdict judge's decision field, and a structured answer (`jury.score`'s, qa_quality's),
        are read from the schema when the answer is JSON; anything asked without a schema is read as
        text. `reader` looks at `native_schema` instead: only a decision field has a reader of its own
        (a structured answer's `parse` is its schema's validation already)."""
        return how_read(text) if request.json_schema is not None else "text"

    async def call(request: ChatRequest, n: int) -> tuple[ChatRequest, Completion]:
        """The completion, and the request that got it: the text mode's once the server has proved
        that it refuses the schema (in `auto` mode; in `schema` mode the refusal is the cause)."""
        try:
            return request, await jury.engine.complete(provider, request.with_n(n), role=role)
        except SchemaRefusedError:
            if mode != "auto" or decisions is None:
                raise
        text = request.model_copy(update={"json_schema": None, "schema_name": None, "native_schema": False})
        return text, await jury.engine.complete(provider, text.with_n(n), role=role)

    async def repair(request: ChatRequest, run: int, failure: JudgeParseError) -> tuple[Usage, float]:
        """Up to `retries` calls showing the judge its unreadable answer and asking for the decision
        alone; each follow-up carries the conversation so far, so each is a request of its own."""
        usage, latency = Usage(), 0.0
        messages = request.messages
        for _ in range(retries):
            last = answers[run]
            assert last is not None
            ask = repair_prompt(jury, request, failure)
            messages = (*messages, Message(role="assistant", content=last.raw), Message(role="user", content=ask.text))
            follow_up = request.model_copy(update={
                "messages": messages, "n": 1, "logprobs": False, "top_logprobs": None, "task": ask.task,
                **ask.generation})
            repaired = replace(last, raw="", parsed=None, error=None, cached=False, attempts=last.attempts + 1,
                               earlier=(*last.earlier, last.raw), repaired=True, read=None)
            try:  # a repair answer cut off is asked once more with twice the room, as a first answer is
                roomy, completion, cut = await whole(
                    lambda asked: jury.engine.complete(provider, asked, role=role), follow_up)
            except ProviderError as exc:
                answers[run] = replace(repaired, error=f"{last.error}; repair call failed: {exc}")
                break
            sample = completion.samples[0]
            usage = sum((s.usage for s in (*cut, sample)), usage)
            latency = max(latency, completion.latency_s)
            repaired = replace(repaired, raw=sample.text, cached=last.cached and completion.cached[0],
                               attempts=repaired.attempts + len(cut),
                               earlier=(*repaired.earlier, *(s.text for s in cut)))
            outcome = sample.outcome
            if outcome == "truncated":  # cut off again (or with no room known): never read
                error = unanswered(sample, outcome, follow_up)
                if cut:
                    error += f"; asked again with max_tokens {roomy.max_tokens}, it was cut off again"
                answers[run] = replace(repaired, error=f"{last.error}; repair: {error}", cause=outcome)
                break
            if outcome is not None:  # the answer's own cause stands: the repair brought nothing to read
                why = unanswered(sample, outcome, follow_up)
                answers[run] = replace(repaired, error=f"{last.error}; repair: {why}")
                if outcome == "empty":
                    continue
                break
            try:
                answers[run] = replace(repaired, parsed=reader(roomy)(sample.text),
                                       read=scored(roomy, sample.text), cause=None)
                break
            except JudgeParseError as exc:
                failure = exc
                answers[run] = replace(repaired, error=f"unparseable: {exc.cause} (after {repaired.attempts - 1} "
                                                       f"repair call(s) asking for the decision alone)", cause=exc.kind)
                if exc.expected is None:
                    break
        return usage, latency

    async def fetch(request: ChatRequest, indices: dict[int, int]) -> tuple[ChatRequest, Completion]:
        """The samples of `request` the runs' `indices` name (every sample up to the last is fetched)."""
        return await call(request, max(indices.values()) + 1)

    async def ask_group(runs: list[int]) -> tuple[Usage, float]:
        request = decisions.ask(requests[runs[0]]) if decisions is not None and schema else requests[runs[0]]
        usage, latency = Usage(), 0.0
        block = round_index * len(runs) * (retries + 1)
        index_of = {run: block + position for position, run in enumerate(runs)}
        next_index = block + len(runs)
        next_roomy = block  # the roomier request's samples, one per cut answer, in this block too
        pending = list(runs)
        for round_ in range(retries + 1):
            try:
                request, completion = await fetch(request, {run: index_of[run] for run in pending})
            except ProviderError as exc:
                error, cause = failed_call(exc)
                for run in pending:
                    answers[run] = JudgeAnswer(raw="", parsed=None, error=error, cause=cause)
                break
            latency = max(latency, completion.latency_s)
            got: dict[int, tuple[ChatRequest, Sample, bool, int]] = {}
            for run in pending:
                sample = completion.samples[index_of[run]]
                usage = usage + sample.usage
                got[run] = (request, sample, completion.cached[index_of[run]], round_ + 1)
            cut = [run for run in pending if got[run][1].outcome == "truncated"]
            roomy = roomier(request, got[cut[0]][1]) if cut else None
            if roomy is not None:  # asked once more with more room, each cut run a sample of its own
                roomy_index = {run: next_roomy + position for position, run in enumerate(cut)}
                next_roomy += len(cut)
                try:
                    roomy, more = await fetch(roomy, roomy_index)
                except ProviderError as exc:
                    error, cause = failed_call(exc)
                    for run in cut:
                        answers[run] = JudgeAnswer(raw="", parsed=None, error=error, cause=cause, attempts=round_ + 2,
                                                   earlier=(*earlier_of(run), got[run][1].text))
                        pending.remove(run)
                        del got[run]
                else:
                    latency = max(latency, more.latency_s)
                    for run in cut:
                        before = answers[run]
                        answers[run] = JudgeAnswer(raw=got[run][1].text, parsed=None, error=None,
                                                   earlier=() if before is None else (*before.earlier, before.raw))
                        sample = more.samples[roomy_index[run]]
                        usage = usage + sample.usage
                        got[run] = (roomy, sample, more.cached[roomy_index[run]], round_ + 2)
            still: list[int] = []
            repairs: list[tuple[ChatRequest, int, JudgeParseError]] = []
            for run in pending:
                asked, sample, cached, attempts = got[run]
                earlier = earlier_of(run)
                outcome = sample.outcome
                if outcome == "empty":  # asked again as the next sample, like an unreadable one
                    answers[run] = JudgeAnswer(raw="", parsed=None, error=sample.problem, cached=cached,
                                               attempts=attempts, earlier=earlier, cause=outcome)
                    index_of[run], next_index = next_index, next_index + 1
                    still.append(run)
                    continue
                if outcome is not None:  # filtered, refused, or cut off (again): never read
                    # The limit the first answer was cut at is the original request's, not the roomier one's.
                    error = unanswered(sample, outcome, request if outcome == "truncated" else asked)
                    if outcome == "truncated" and asked is not request:
                        error += f"; asked again with max_tokens {asked.max_tokens}, it was cut off again"
                    answers[run] = JudgeAnswer(raw=sample.text, parsed=None, error=error, cached=cached,
                                               attempts=attempts, earlier=earlier, cause=outcome)
                    continue
                try:
                    answers[run] = JudgeAnswer(raw=sample.text, parsed=reader(asked)(sample.text), cached=cached,
                                               attempts=attempts, earlier=earlier, read=scored(asked, sample.text))
                except JudgeParseError as exc:
                    error = f"unparseable: {exc.cause}"
                    if exc.expected is None and asked.temperature == 0 and retries > 0:
                        error += " (not asked again: at temperature 0 the same request repeats its answer)"
                    answers[run] = JudgeAnswer(raw=sample.text, parsed=None, error=error, cached=cached,
                                               attempts=attempts, earlier=earlier, cause=exc.kind)
                    if exc.expected is not None and retries > 0:
                        repairs.append((asked, run, exc))
                    elif asked.temperature != 0:
                        index_of[run], next_index = next_index, next_index + 1
                        still.append(run)
            for more_usage, more_latency in await asyncio.gather(*(repair(a, r, e) for a, r, e in repairs)):
                usage, latency = usage + more_usage, max(latency, more_latency)
            pending = still
            if not pending:
                break
        return usage, latency

    def earlier_of(run: int) -> tuple[str, ...]:
        """What the judge said in a run's attempts so far, before the one being read."""
        before = answers[run]
        return () if before is None else (*before.earlier, before.raw)

    totals = await asyncio.gather(*(ask_group(runs) for runs in groups.values()))
    usage = sum((u for u, _ in totals), Usage())
    latency = max((lat for _, lat in totals), default=0.0)
    return JudgeRuns(answers=[a for a in answers if a is not None], provider=juror.label, usage=usage,
                     latency_s=latency, sampling=requests[0].sampling if requests else {})
