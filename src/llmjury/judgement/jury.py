"""What pipelines and tests judge with: roles resolved to providers, prompts, and cached calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from llmjury.chat import ChatRequest, Completion, Message
from llmjury.errors import provider_fault
from llmjury.judgement.verdicts import Verdict
from llmjury.jurors import Juror, JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary, RenderedPrompt
from llmjury.running.settings import Settings, family_options

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

if TYPE_CHECKING:  # the engine is handed in: `import llmjury.judgement.judges` does not load it
    from llmjury.model import FamilyOptions
    from llmjury.running.engine import Engine

OptionsT = TypeVar("OptionsT", bound="FamilyOptions")


@dataclass
class Outcome:
    """What a pipeline returns for one case: its verdicts and whatever the test wants to inspect."""

    verdicts: list[Verdict]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> Verdict:
        if len(self.verdicts) != 1:
            raise ValueError(f"outcome holds {len(self.verdicts)} verdicts; use .verdicts")
        return self.verdicts[0]


class Jury:
    """The run's providers by role, prompts and cached calls: what a family pipeline sees. A test's
    `jury` fixture is a `llmjury.judgement.bound_jury.BoundJury`, which adds judge calls that record verdicts."""

    def __init__(self, engine: Engine, settings: Settings, prompts: PromptLibrary, prices: PriceTable,
                 options: Mapping[str, FamilyOptions] = MappingProxyType({})) -> None:
        self.engine = engine
        self.settings = settings
        self.prompts = prompts
        self.prices = prices
        self._options = dict(options)

    def options(self, family: str, model: type[OptionsT]) -> OptionsT:
        """A family's options as the plugin parsed them at start-up, so a pipeline never parses
        them again per case; a jury built without them (outside a run) parses its settings' once."""
        options = self._options.get(family)
        if options is None:
            options = self._options[family] = model.model_validate(family_options(self.settings, family))
        if not isinstance(options, model):
            raise TypeError(f"family {family!r}: the run's options are {type(options).__name__}, not {model.__name__}")
        return options

    def spec(self, role: str, family: str) -> JurySpec:
        """The parsed spec a role names for a family (llmjury.running.settings.Settings.provider_for)."""
        return self.settings.provider_for(role, family)

    def jurors(self, role: str, family: str) -> tuple[Juror, ...]:
        """The provider(s) a role names: one juror, or several for `spec+spec` and `spec*k`."""
        return self.spec(role, family).jurors

    def label(self, role: str, family: str) -> str:
        """`kind:model` of a role's provider (or the jury's members): what verdicts and reports name,
        never its options such as a base URL."""
        return self.spec(role, family).label

    def render(self, template: str, **variables: Any) -> RenderedPrompt:
        return self.prompts.render(template, **variables)

    def request(self, prompt: RenderedPrompt, *, system: RenderedPrompt | None = None, **params: Any) -> ChatRequest:
        """A one-turn request (optionally with a system prompt) stamped with its template and sampled
        as the template's generation.toml entry says, unless `params` say otherwise."""
        messages = [Message(role="user", content=prompt.text)]
        if system is not None:
            messages.insert(0, Message(role="system", content=system.text))
        return ChatRequest(messages=tuple(messages), task=prompt.task, **{**prompt.generation, **params})

    async def complete(self, role: str, family: str, request: ChatRequest) -> Completion:
        """One answer from the single provider a role names (a jury there is a ConfigError)."""
        return await self.engine.complete(self.spec(role, family).provider(role), request, role=role)

    def cost(self, provider: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        return self.prices.cost(provider, prompt_tokens, completion_tokens)
