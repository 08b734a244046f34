"""The provider interface and the parsed specs that name providers.

A spec is written `kind:model`, optionally followed by `;key=value` options:
`openai:gpt-4o-mini`, `openai:llama3;base_url=http://127.0.0.1:11434/v1`,
`gemini:gemini-2.0-flash`, `http:http://127.0.0.1:8000/chat;reply=reply`, `offline`.
It is parsed once, at start-up, into a `ProviderSpec` value that travels to the engine as such.
SDKs are imported only when a provider of their kind is built, so a missing SDK
gives a pip hint instead of an import error at start-up.
"""

from __future__ import annotations

import abc
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmjury.chat import ChatRequest, Sample
from llmjury.errors import ConfigError
from llmjury.hints import did_you_mean
from llmjury.redact import MASK, is_secret_name, redact_spec

OptionValue = str | int | float


def text(value: str) -> str:
    """A non-empty string option (a key, a URL, a template name, a JSON path)."""
    if not value:
        raise ValueError("is empty")
    return value


def url(value: str) -> str:
    """A server's address with its scheme (`http://127.0.0.1:8080/v1`): without one, every call
    would fail as a connection error, found only once the run pays."""
    if not re.match(r"https?://[^/\s]", value, re.IGNORECASE):
        hint = f": write http://{value}" if value and "://" not in value else ""
        raise ValueError(f"is not an http:// or https:// address{hint}")
    return value


def seconds(value: str) -> float:
    """A timeout in seconds, above 0."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError("is not a number of seconds") from None
    if not number > 0:
        raise ValueError("must be above 0 seconds")
    return number


def count(value: str) -> int:
    """A whole number of at least 1 (samples per call)."""
    try:
        number = int(value)
    except ValueError:
        raise ValueError("is not a whole number") from None
    if number < 1:
        raise ValueError("must be at least 1")
    return number


@dataclass(frozen=True)
class Kind:
    """A provider kind: where its class lives, the SDK it needs, and the `;key=value` options it reads.

    The options are declared here, not in the provider's module, so a spec is checked at start-up
    without importing an SDK."""

    module: str
    cls: str
    package: str | None
    options: Mapping[str, Callable[[str], OptionValue]] = field(default_factory=dict)
    #: Its API takes a JSON schema as the request's response format (OpenAI's `json_schema`,
    #: Gemini's `response_json_schema`), so a verdict judge may ask for its decision as a field.
    native_schema: bool = False


def batch_lane(value: str) -> str:
    """Which calls go through the provider's Batch API: `1` single-turn ones, `all`, or `file`
    (queued for `llmjury batch export`)."""
    if value not in ("1", "all", "file"):
        raise ValueError("must be 1 (single-turn calls), all, or file")
    return value


#: `version` names the release of a system under test: its answers are replayed across runs only
#: for the same version (llmjury.running.freshness), and it is part of the cache key. `batch` sends
#: calls through the provider's Batch API (llmjury.running.batch_lane); it is not part of the key.
_SDK_OPTIONS: dict[str, Callable[[str], OptionValue]] = {
    "api_key": text, "api_key_env": text, "base_url": url, "timeout": seconds, "max_n": count, "version": text,
    "batch": batch_lane}
KINDS = {
    "openai": Kind("llmjury.providers.openai_chat", "OpenAIProvider", "openai", _SDK_OPTIONS, native_schema=True),
    "gemini": Kind("llmjury.providers.gemini", "GeminiProvider", "google-genai", _SDK_OPTIONS, native_schema=True),
    "http": Kind("llmjury.providers.http_service", "HttpServiceProvider", "httpx2",
                 {"body": text, "reply": text, "timeout": seconds, "version": text}),
    "offline": Kind("llmjury.providers.offline", "OfflineProvider", None),
}


@dataclass(frozen=True)
class ProviderSpec:
    """A provider spec, parsed: the value roles, jurors and the engine hold, never its text."""

    kind: str
    model: str
    #: The `;key=value` options, converted to the types the kind declares.
    options: dict[str, OptionValue] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str) -> ProviderSpec:
        """Parse `kind:model;k=v;...`; a ConfigError names the spec and what is wrong with it
        (an unknown kind or option, a value of the wrong type), so typos stop the run at start-up;
        the message masks the spec's secrets, as every text does."""
        head, *opts = spec.strip().split(";")
        kind, _, model = head.partition(":")
        if kind not in KINDS:
            raise ConfigError(redact_spec(f"provider spec {spec!r}: unknown kind {kind!r}{did_you_mean(kind, KINDS)}; "
                                          f"use one of {', '.join(KINDS)}"))
        if kind != "offline" and not model:
            raise ConfigError(redact_spec(f"provider spec {spec!r}: name a model after '{kind}:'"))
        known = KINDS[kind].options
        options: dict[str, OptionValue] = {}
        for opt in opts:
            key, eq, value = (part.strip() for part in opt.partition("="))
            if not eq or not key:
                raise ConfigError(redact_spec(f"provider spec {spec!r}: option {opt!r} is not key=value"))
            if key not in known:
                accepted = f"{kind} reads {', '.join(sorted(known))}" if known else f"{kind} takes no options"
                raise ConfigError(redact_spec(f"provider spec {spec!r}: unknown option {key!r}"
                                              f"{did_you_mean(key, known)}; {accepted}"))
            try:
                options[key] = known[key](value)
            except ValueError as exc:
                raise ConfigError(redact_spec(f"provider spec {spec!r}: option {key}={value!r} {exc}")) from None
        return cls(kind=kind, model=model or "heuristic", options=options)

    def __hash__(self) -> int:
        """Equal specs are one provider to the engine (its clients, limits and replay policy)."""
        return hash((self.kind, self.model, tuple(sorted(self.options.items()))))

    def __repr__(self) -> str:
        """As a dataclass shows itself, with the values of secret-named options masked: a traceback's
        locals (`pytest -l`), a log line or a debugger never show a key."""
        options = {key: MASK if is_secret_name(key) else value for key, value in self.options.items()}
        return f"ProviderSpec(kind={self.kind!r}, model={redact_spec(self.model)!r}, options={options!r})"

    def __str__(self) -> str:
        """`kind:model`, the name every report, error and cache key uses: an `http:` model is a URL,
        so its query keys and user-info are masked here, once."""
        return f"{self.kind}:{redact_spec(self.model)}"

    @property
    def version(self) -> str | None:
        """The `;version=` the spec declares for a system under test, if any."""
        return self.text_option("version")

    def text_option(self, key: str) -> str | None:
        """A text option the spec sets (a key, a URL, a template, a JSON path), else None."""
        value = self.options.get(key)
        return None if value is None else str(value)

    def number_option(self, key: str, default: float) -> float:
        """A number option the spec sets (a timeout, samples per call), else `default`."""
        value = self.options.get(key)
        return default if value is None else float(value)


class Provider(abc.ABC):
    """One backend; concurrency, retries and caching are the engine's business, not the provider's."""

    #: How many samples one call may return; larger n is split into several calls.
    max_samples_per_call: int = 1
    #: Offline heuristics are free and deterministic: caching them would only fill the disk.
    cacheable: bool = True

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        self._name = str(spec)  # the engine names the provider on every call; the spec is frozen

    @property
    def name(self) -> str:
        return self._name

    @property
    def cache_name(self) -> str:
        """What the cache key names: `kind:model`, and the declared version, so answers of one
        version of a system are never replayed for another."""
        version = self.spec.version
        return self.name if version is None else f"{self.name};version={version}"

    @abc.abstractmethod
    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        """Return exactly `n` samples for `request`, or raise a ProviderError subclass. `indices`
        are the sample indices being filled; only providers that derive answers from them (the
        offline heuristics) use them."""

    def takes_schema(self) -> bool:
        """Whether a `native_schema` request can travel as this provider's response format now: its
        kind's API takes one, and its server has not proved that it refuses it."""
        return KINDS[self.spec.kind].native_schema

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release network clients."""


def resolve(spec: ProviderSpec, offline_answers: Mapping[str, Any] | None = None) -> Provider:
    """Build the provider a spec names; the offline kind answers from `offline_answers`."""
    kind = KINDS[spec.kind]
    try:
        module = importlib.import_module(kind.module)
    except ImportError as exc:
        hint = f"; install it with `pip install {kind.package}`" if kind.package else ""
        raise ConfigError(f"provider {spec}: cannot import its SDK ({exc}){hint}") from exc
    built: Provider = getattr(module, kind.cls)(spec, offline_answers) if spec.kind == "offline" \
        else getattr(module, kind.cls)(spec)
    return built
