"""The provider-neutral shape of one chat call: what we ask (`ChatRequest`) and what comes back (`Completion`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmjury.errors import PermanentProviderError, UnscoredCause

Role = Literal["system", "user", "assistant"]
#: Finish reasons of an answer cut off by its token limit: OpenAI-compatible servers' (llama.cpp's
#: included) and Gemini's. The text is a prefix of an answer, never the judge's final word.
TRUNCATED_REASONS = frozenset({"length", "MAX_TOKENS"})
#: Finish reasons of an answer a provider's content filter stopped or withheld (OpenAI's, Gemini's).
FILTERED_REASONS = frozenset({"content_filter", "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION",
                              "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR"})


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: Role
    content: str


class ChatRequest(BaseModel):
    """Everything that determines a response; its canonical JSON is the cache key."""

    model_config = ConfigDict(frozen=True)
    messages: tuple[Message, ...]
    n: int = Field(default=1, ge=1)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    json_schema: dict[str, Any] | None = None
    schema_name: str | None = None
    #: The schema may travel only as the provider's native response format (a verdict judge's
    #: decision field): a server that refuses it raises SchemaRefusedError instead of the provider
    #: weakening it to `json_object` or pasting it into the prompt, which would change the prompt.
    native_schema: bool = False
    # Distinguishes otherwise identical requests that must get independent answers (dialogue i
    # vs dialogue j); passed to providers that accept a sampling seed.
    seed: int | None = None
    # Which prompt produced the messages (template path + content hash); the offline
    # provider dispatches on it and reports quote it, so it is part of the key too.
    task: str = ""

    def sample_key(self, provider_spec: str, sample_index: int) -> str:
        """Content hash of this request's `sample_index`-th sample from one provider."""
        return self.sample_keys(provider_spec, sample_index + 1)[sample_index]

    def sample_keys(self, provider_spec: str, count: int) -> list[str]:
        """`sample_key` of samples 0..count-1, the request serialised once (a G-Eval request asks 20)."""
        payload = self.model_dump(mode="json", exclude={"n"})
        if not self.native_schema:
            del payload["native_schema"]  # the keys of every request before the field existed stay the same
        payload["provider"] = provider_spec
        keys = []
        for sample_index in range(count):
            payload["sample_index"] = sample_index
            canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            keys.append(hashlib.sha256(canonical.encode()).hexdigest())
        return keys

    def with_n(self, n: int) -> ChatRequest:
        return self.model_copy(update={"n": n})

    @property
    def sampling(self) -> dict[str, Any]:
        """How this request is sampled, as a verdict's judge configuration records it."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


def chat(*turns: tuple[Role, str], **params: Any) -> ChatRequest:
    """Build a request from (role, text) pairs; a convenience for pipelines and tests."""
    return ChatRequest(messages=tuple(Message(role=r, content=c) for r, c in turns), **params)


class TopLogprob(BaseModel):
    token: str
    logprob: float


class TokenLogprob(BaseModel):
    token: str
    logprob: float
    top: list[TopLogprob] = Field(default_factory=list)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Sample(BaseModel):
    """One generated alternative; samples are cached one by one under their sample index."""

    text: str
    finish_reason: str | None = None
    refusal: str | None = None
    logprobs: list[TokenLogprob] | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0

    @property
    def problem(self) -> str | None:
        """Why this sample is no answer (`refused: ...`, `empty answer`), or None for a real one.
        Such samples are never cached and never read as text by a judge."""
        if self.refusal is not None:
            return f"refused: {self.refusal}"
        if not self.text.strip():
            return f"empty answer (finish reason {self.finish_reason})" if self.finish_reason else "empty answer"
        return None

    @property
    def outcome(self) -> UnscoredCause | None:
        """Why this sample cannot be read for a decision at all, or None: stopped by a content filter,
        refused, cut off by the token limit (whatever decision its prefix holds may be an interim one),
        or empty."""
        if self.finish_reason in FILTERED_REASONS:
            return "filtered"
        if self.refusal is not None:
            return "refused"
        if self.finish_reason in TRUNCATED_REASONS:
            return "truncated"
        return "empty" if not self.text.strip() else None


class Completion(BaseModel):
    """The n samples answering one request, with where each came from."""

    provider: str
    samples: list[Sample]
    cached: list[bool]

    @property
    def text(self) -> str:
        return self.samples[0].text

    @property
    def problem(self) -> str | None:
        """Why the first sample is no answer (refused, empty), or None: check it before using `text`."""
        return self.samples[0].problem

    def answer(self) -> str:
        """The first sample's text, stripped; a refusal or an empty answer raises, naming which,
        so it is never passed on as a response to judge."""
        if self.problem is not None:
            raise PermanentProviderError(self.provider, f"no answer ({self.problem})")
        return self.text.strip()

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.samples]

    @property
    def usage(self) -> Usage:
        total = Usage()
        for sample in self.samples:
            total = total + sample.usage
        return total

    @property
    def latency_s(self) -> float:
        return max((s.latency_s for s in self.samples), default=0.0)
