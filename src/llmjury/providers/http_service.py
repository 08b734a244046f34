"""`http:<url>`: a system under test that is a plain HTTP service, such as a tutor server.

Options: `body=<template>` names a prompt template that renders the JSON request body from the
variables `http_body` lists (checked at start-up); without it the body is `{"messages": [...]}`.
`reply=<dotted.path>` picks the reply text out of the JSON answer (default `reply`; list indices
are numbers: `choices.0.text`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx2

from llmjury.chat import ChatRequest, Sample
from llmjury.errors import PermanentProviderError, TransientProviderError, provider_fault
from llmjury.prompts import library
from llmjury.providers.address import split
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.providers.http_body import variables
from llmjury.providers.status import connection_error, is_retryable, retry_after
from llmjury.redact import scrub

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line


class HttpServiceProvider(Provider):
    def __init__(self, spec: ProviderSpec) -> None:
        super().__init__(spec)
        self.url = spec.model
        self.secrets = split(spec.model).secrets  # a key in the URL's query or user-info
        self.body_template = spec.text_option("body")
        self.reply_path = spec.text_option("reply") or "reply"
        self.client = httpx2.AsyncClient(timeout=spec.number_option("timeout", 120))

    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        return [await self._one(request) for _ in range(n)]

    async def _one(self, request: ChatRequest) -> Sample:
        started = time.perf_counter()
        try:
            response = await self.client.post(self.url, json=self.body(request))
        except httpx2.TransportError as exc:
            raise connection_error(self.name, exc, self.secrets) from None
        if response.status_code >= 400:
            cause = scrub(f"HTTP {response.status_code}: {response.text[:200]}", self.secrets)
            if is_retryable(response.status_code):
                raise TransientProviderError(
                    self.name, cause, status=response.status_code, retry_after=retry_after(response)
                )
            raise PermanentProviderError(self.name, cause, status=response.status_code)
        try:
            text = extract(response.json(), self.reply_path)
        except (ValueError, KeyError, IndexError, TypeError):
            raise PermanentProviderError(
                self.name, scrub(f"reply path {self.reply_path!r} not found in {response.text[:200]!r}",
                                 self.secrets)
            ) from None
        if text is not None and not isinstance(text, str):
            raise PermanentProviderError(self.name, f"reply path {self.reply_path!r} holds "
                                                    f"{type(text).__name__}, not text: {str(text)[:100]!r}")
        # A null reply is no answer (never the text "None"): Sample.problem marks it empty.
        return Sample(text=text or "", finish_reason="stop", latency_s=time.perf_counter() - started)

    def body(self, request: ChatRequest) -> Any:
        """The JSON body for one request: the default shape or the configured template."""
        if self.body_template is None:
            return {"messages": [m.model_dump() for m in request.messages]}
        return library().render_json(self.body_template, **variables(request.messages))

    async def aclose(self) -> None:
        await self.client.aclose()


def extract(document: Any, path: str) -> Any:
    """Follow a dotted path (`a.0.b`) through nested dicts and lists."""
    node = document
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node
