"""Exceptions that say which item failed, why, and what to do about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from llmjury.asked import Asked

if TYPE_CHECKING:
    from _pytest._code import ExceptionInfo
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

#: Why a judge run holds no decision, as reports count it: no decision stated, two different decisions in
#: the judge's own final words, a value off the scale it was asked on, an answer cut off by the token limit,
#: an answer stopped by a content filter or refused, a failed call, an empty answer.
UnscoredCause = Literal["no_decision", "ambiguous", "out_of_scale", "truncated", "filtered", "refused", "failed",
                        "empty"]


class LLMJuryError(Exception):
    """Base class for every error llmjury raises on purpose."""


class RunStopError(LLMJuryError):
    """A cause every later case would meet the same way (a store out of reach, a server without what
    the settings force): the first one stops the run, whose report of what finished says so and is
    marked incomplete (`llmjury.session.stops`)."""


class NoLogprobsError(RunStopError):
    """Logprobs forced (`scoring=logprobs`) on a server whose answers carry none: no later answer
    would carry them either, so the first one stops the run, naming the server and the `auto` setting."""


class ConfigError(LLMJuryError):
    """A provider spec, option or gate that cannot be understood."""


class CommandLineError(ConfigError):
    """Options of an `llmjury` command that parse but do not make a whole command (none of the
    inputs it needs): the command's usage and this, exit 2, as for an option it does not know."""


class ConfigWarning(UserWarning):
    """A setting that is allowed but most likely not what was meant (a role no family asks for)."""


class DatasetError(LLMJuryError):
    """A dataset file or record that does not have the expected shape."""

    def __init__(self, source: str, item: str | int | None, cause: str) -> None:
        where = f"{source}" if item is None else f"{source} [item {item}]"
        super().__init__(f"{where}: {cause}")
        self.source, self.item, self.cause = source, item, cause


class ProviderError(LLMJuryError):
    """A call that did not produce a response."""

    def __init__(self, provider: str, cause: str, *, status: int | None = None) -> None:
        super().__init__(f"{provider}: {cause}")
        self.provider, self.cause, self.status = provider, cause, status


def provider_fault(excinfo: ExceptionInfo[BaseException]) -> bool:
    """pytest's `__tracebackhide__` for the modules a call goes through: a provider's error (no server,
    a refusal, a reply path that is not in the answer) fails a test with the test's own line and the
    cause, not the dozens of frames of the engine between them; any other exception keeps every
    frame, as `--full-trace` keeps them all."""
    return excinfo.errisinstance(ProviderError)


class TransientProviderError(ProviderError):
    """Worth retrying: rate limits, server errors, timeouts, dropped connections."""

    def __init__(
        self, provider: str, cause: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(provider, cause, status=status)
        self.retry_after = retry_after


class UnreachableProviderError(TransientProviderError):
    """No server answered at all (the connection was refused or failed). Retried like any transient
    fault; a provider that has never answered and fails this way call after call is given up on
    (`llmjury.running.reach.Reach`)."""


class PermanentProviderError(ProviderError):
    """Not worth retrying: bad requests, auth failures, content refusals."""


class SchemaRefusedError(PermanentProviderError):
    """A request whose schema may travel only as the provider's native response format, to a server
    that has proved it refuses that format (llmjury.providers.structured): a verdict judge then asks
    in plain text with its published prompt, never with the schema pasted into it."""


class PromptBlockedError(PermanentProviderError):
    """A prompt the provider's content filter blocked before any answer (Gemini's `promptFeedback`):
    a judge's run is then unscored as `filtered`, not as a failed call."""


class CacheMissError(LLMJuryError):
    """`--llm-cache replay` found no recorded response for a request."""


class JudgeParseError(LLMJuryError):
    """A judge answer that does not contain a decision the parser can read. `expected` is the
    decision's format as the prompt asks it, for a repair call that asks for the decision alone; `kind`
    is the cause's category, which reports count and the repair call names in the asking template's
    language; `language` the answer's (en, ko, it), which the repair call asks in only where the
    request names no template."""

    def __init__(self, parser: str, raw: str, cause: str, *, expected: Asked | None = None,
                 kind: UnscoredCause = "no_decision", language: str = "en") -> None:
        snippet = raw if len(raw) <= 200 else raw[:200] + "…"
        super().__init__(f"{parser}: {cause}; judge said {snippet!r}")
        self.parser, self.raw, self.cause, self.expected, self.kind = parser, raw, cause, expected, kind
        self.language = language


class BatchFileError(LLMJuryError):
    """A line of a batch file (an output file, a result file) that cannot be read; the other lines still are."""

    def __init__(self, path: str, line: int, cause: str) -> None:
        super().__init__(f"{path}, line {line}: {cause}")
        self.path, self.line, self.cause = path, line, cause


def validation_cause(exc: ValidationError, whole: str = "", *, every: bool = False) -> str:
    """What a pydantic model refused, as `field.path: message`: the first error, or `every` one joined
    by "; ". An error of the whole value (no field path) is named `whole`, or is its message alone."""
    def cause(error: ErrorDetails) -> str:
        place = ".".join(map(str, error["loc"])) or whole
        return f"{place}: {error['msg']}" if place else str(error["msg"])

    errors = exc.errors()
    return "; ".join(map(cause, errors if every else errors[:1]))
