"""The provider interface and the spec strings that name providers on the command line.

A spec is `kind:model`, optionally followed by `;key=value` options:
`openai:gpt-4o-mini`, `openai:llama3;base_url=http://127.0.0.1:11434/v1`,
`gemini:gemini-2.0-flash`, `http:http://127.0.0.1:8000/chat;reply=reply`, `offline`.
SDKs are imported only when a provider of their kind is built, so a missing SDK
gives a pip hint instead of an import error at start-up.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmjury.chat import ChatRequest, Sample
from llmjury.errors import ConfigError

KINDS = {
    "openai": ("llmjury.providers.openai_chat", "OpenAIProvider", "openai"),
    "gemini": ("llmjury.providers.gemini", "GeminiProvider", "google-genai"),
    "http": ("llmjury.providers.http_service", "HttpServiceProvider", "httpx2"),
    "offline": ("llmjury.providers.offline", "OfflineProvider", None),
}


@dataclass(frozen=True)
class ProviderSpec:
    kind: str
    model: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ProviderSpec:
        """Parse `kind:model;k=v;...`; raises ConfigError naming the spec when it is malformed."""
        head, *opts = text.strip().split(";")
        kind, _, model = head.partition(":")
        if kind not in KINDS:
            raise ConfigError(f"provider spec {text!r}: unknown kind {kind!r}; use one of {sorted(KINDS)}")
        if kind != "offline" and not model:
            raise ConfigError(f"provider spec {text!r}: name a model after '{kind}:'")
        options: dict[str, str] = {}
        for opt in opts:
            key, eq, value = opt.partition("=")
            if not eq or not key:
                raise ConfigError(f"provider spec {text!r}: option {opt!r} is not key=value")
            options[key.strip()] = value.strip()
        return cls(kind=kind, model=model or "heuristic", options=options)

    def __str__(self) -> str:
        return f"{self.kind}:{self.model}"


class Provider(abc.ABC):
    """One backend; concurrency, retries and caching are the engine's business, not the provider's."""

    #: How many samples one call may return; larger n is split into several calls.
    max_samples_per_call: int = 1
    #: Offline heuristics are free and deterministic: caching them would only fill the disk.
    cacheable: bool = True

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec

    @property
    def name(self) -> str:
        return str(self.spec)

    @abc.abstractmethod
    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        """Return exactly `n` samples for `request`, or raise a ProviderError subclass. `indices`
        are the sample indices being filled; only providers that derive answers from them (the
        offline heuristics) use them."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release network clients."""


def resolve(spec: str | ProviderSpec, offline_answers: Mapping[str, Any] | None = None) -> Provider:
    """Build the provider a spec names; the offline kind answers from `offline_answers`."""
    parsed = ProviderSpec.parse(spec) if isinstance(spec, str) else spec
    module_name, class_name, package = KINDS[parsed.kind]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f"; install it with `pip install {package}`" if package else ""
        raise ConfigError(f"provider {parsed}: cannot import its SDK ({exc}){hint}") from exc
    if parsed.kind == "offline":
        return getattr(module, class_name)(parsed, offline_answers)
    return getattr(module, class_name)(parsed)
