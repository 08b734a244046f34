"""`gemini:<model>`: the google-genai SDK's async client.

`base_url` (spec option, `GOOGLE_GEMINI_BASE_URL` or `llm_gemini_base_url`) points it at any
server speaking the Gemini API. One call returns at most `max_n` candidates (8 by default, the
API's limit); a request for more is split into several calls by the engine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from llmjury.chat import ChatRequest, Sample
from llmjury.errors import (
    PermanentProviderError,
    PromptBlockedError,
    ProviderError,
    TransientProviderError,
    provider_fault,
)
from llmjury.providers.address import split
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.providers.gemini_wire import blocked_reason, contents, generate_config, response_samples
from llmjury.providers.status import connection_error, is_retryable, retry_after
from llmjury.providers.tls import shared_tls
from llmjury.redact import scrub

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line


def _aiohttp_errors() -> tuple[type[Exception], ...]:
    try:
        import aiohttp
    except ImportError:
        return ()
    return (aiohttp.ClientError,)


#: What a failed or dropped connection raises: httpx2's errors, or aiohttp's, which google-genai's
#: async client uses whenever aiohttp is installed (a dropped connection: ServerDisconnectedError).
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (httpx2.TransportError, TimeoutError, ConnectionError,
                                                 *_aiohttp_errors())


class GeminiProvider(Provider):
    max_samples_per_call = 8

    def __init__(self, spec: ProviderSpec) -> None:
        super().__init__(spec)
        # Keep the client on the instance: a temporary one is collected and closes its connection.
        self.client, self.secrets = sdk_client(spec)
        self.max_samples_per_call = int(spec.number_option("max_n", self.max_samples_per_call))

    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        started = time.perf_counter()
        try:
            response = await self.client.aio.models.generate_content(
                model=self.spec.model, contents=contents(request), config=generate_config(request, n)
            )
        except genai_errors.APIError as exc:  # `from None` and scrubbed: the SDK's text may quote the key
            raise api_error(self.name, exc, self.secrets) from None
        except TRANSPORT_ERRORS as exc:
            raise connection_error(self.name, exc, self.secrets) from None
        blocked = blocked_reason(response)
        if blocked is not None:
            raise PromptBlockedError(self.name, f"prompt blocked: {blocked}")
        samples = response_samples(response, time.perf_counter() - started)
        if len(samples) != n:
            raise TransientProviderError(self.name, f"asked for {n} candidates, got {len(samples)}")
        return samples

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def sdk_client(spec: ProviderSpec) -> tuple[genai.Client, tuple[str | None, ...]]:
    """The SDK client `spec` asks for (key, base_url, timeout) and the secrets no text may show: the
    provider and the batch client (llmjury.batch.gemini_api) build theirs alike."""
    api_key = spec.text_option("api_key") or os.environ.get(spec.text_option("api_key_env") or "GEMINI_API_KEY")
    api_key = api_key or os.environ.get("GOOGLE_API_KEY")
    base_url = spec.text_option("base_url") or os.environ.get("GOOGLE_GEMINI_BASE_URL")
    # One attempt: the engine's retries (their back-off, the budget, a stop) decide alone. Without
    # retry options the SDK retries a dropped connection once itself, after a 1-10 s sleep none of them sees.
    # The process's shared TLS context for its httpx clients (`verify`) and its aiohttp session (`ssl`).
    tls = shared_tls()
    http_options = types.HttpOptions(base_url=base_url, timeout=int(spec.number_option("timeout", 120) * 1000),
                                     retry_options=types.HttpRetryOptions(attempts=1),
                                     client_args={"verify": tls}, async_client_args={"verify": tls, "ssl": tls})
    client = genai.Client(api_key=api_key or "not-needed-for-local-servers", http_options=http_options)
    # google-genai sends a base_url's query and user-info itself; their values must not be printed.
    return client, (api_key, *(split(base_url).secrets if base_url else ()))


def api_error(provider: str, exc: genai_errors.APIError, secrets: Sequence[str | None]) -> ProviderError:
    """An API error answer as a transient or permanent ProviderError, its text scrubbed of secrets."""
    status = int(exc.code or 0)
    cause = scrub(f"HTTP {status} {exc.status}: {exc.message}", secrets)
    if is_retryable(status):
        return TransientProviderError(provider, cause, status=status, retry_after=retry_after(exc.response))
    return PermanentProviderError(provider, cause, status=status)
