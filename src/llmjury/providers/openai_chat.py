"""`openai:<model>`: the OpenAI SDK, for OpenAI and every OpenAI-compatible server.

vLLM, Ollama, llama.cpp's server and GPT4All all speak `/v1/chat/completions`; point
`base_url` at them (spec option, `OPENAI_BASE_URL`, or the `llm_openai_base_url` ini key); a key
in its query string or user-info is sent as such and kept out of every text (llmjury.providers.address).
The SDK's own retries are switched off: the engine retries every provider the same way.

Calls go through the SDK's aiohttp transport when aiohttp is installed (the `openai[aiohttp]`
extra) and are posted as plain JSON with `client.post` (the SDK's documented route for any
endpoint): the same request body and status errors as `chat.completions.create` over httpx, whose
request transforms and transport made the SDK the largest cost of a run of many concurrent calls
(bench/throughput.py). The answer comes back as its bytes, read by llmjury.providers.openai_wire:
the SDK's typed `ChatCompletion` would be built field by field only to be read for a few.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence

import openai

from llmjury.chat import ChatRequest, Sample
from llmjury.errors import (
    PermanentProviderError,
    ProviderError,
    SchemaRefusedError,
    TransientProviderError,
    provider_fault,
)
from llmjury.providers.address import split
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.providers.openai_wire import STRUCTURED_MODES, chat_body, completion_samples
from llmjury.providers.status import connection_error, is_retryable, retry_after
from llmjury.providers.structured import refusal_proof
from llmjury.providers.tls import shared_tls
from llmjury.redact import scrub

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line


class OpenAIProvider(Provider):
    """Adapts to what the server does and records it in `adaptations`: a server that answers
    fewer choices than `n` gets single-sample calls (the engine's job, told by the short answer);
    one that refuses `json_schema` gets `json_object` with the schema (llama.cpp), then the schema
    in the prompt, validated by the caller's pydantic model either way. A form is given up only on
    an answer that proves it refused (llmjury.providers.structured), never on a server error."""

    max_samples_per_call = 128

    def __init__(self, spec: ProviderSpec) -> None:
        super().__init__(spec)
        self.client, self.secrets = sdk_client(spec)
        self.max_samples_per_call = int(spec.number_option("max_n", self.max_samples_per_call))
        self.structured = STRUCTURED_MODES[0]
        self.adaptations: dict[str, str] = {}

    def takes_schema(self) -> bool:
        return self.structured == STRUCTURED_MODES[0]

    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        if request.native_schema and not self.takes_schema():
            raise SchemaRefusedError(self.name, self.adaptations.get("structured_output", "json_schema refused"))
        started = time.perf_counter()
        # Errors are raised `from None`: the SDK's exception may quote the request's key, and a
        # chained traceback would print it. Their text is scrubbed of key-shaped strings too.
        try:
            while True:
                mode = self.structured
                try:
                    raw = await self.client.post("/chat/completions", cast_to=bytes,
                                                 body=chat_body(self.spec.model, request, n, indices, mode))
                    break
                except openai.APIStatusError as exc:
                    if not self._step_down_structured(request, mode, exc):
                        raise status_error(self.name, exc, self.secrets) from None
                    if request.native_schema:  # learned; a weaker form would change the prompt or the check
                        raise SchemaRefusedError(self.name, self.adaptations["structured_output"]) from None
        except openai.APIConnectionError as exc:  # time-outs included
            raise connection_error(self.name, exc, self.secrets) from None
        except openai.OpenAIError as exc:
            raise ProviderError(self.name, scrub(f"{type(exc).__name__}: {exc}", self.secrets)) from None
        try:
            samples = completion_samples(json.loads(raw), n, time.perf_counter() - started)
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's page, a cut-off answer) or no answer's
            raise TransientProviderError(self.name, f"malformed response body ({type(exc).__name__}: {exc})") from None
        if not samples:
            raise TransientProviderError(self.name, f"asked for {n} choices, got none")
        # Fewer choices than asked (llama.cpp, Ollama ignore `n`): the engine fetches the rest.
        return samples

    def _step_down_structured(self, request: ChatRequest, mode: str, exc: openai.APIStatusError) -> bool:
        """After an answer that proves `mode` is refused (llmjury.providers.structured), use the next
        mode and say so; False when none is left or the answer proves nothing (a 5xx, another field).
        Calls in flight together may all be refused: the first one learns, the others just retry."""
        if request.json_schema is None or mode == STRUCTURED_MODES[-1]:
            return False
        proof = refusal_proof(exc.status_code, exc.body, exc.message)
        if proof is None:
            return False
        if self.structured == mode:
            self.structured = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
            self.adaptations["structured_output"] = (f"{mode} refused (HTTP {exc.status_code}: "
                                                     f"{scrub(proof, self.secrets)}); using {self.structured}")
        return True

    async def aclose(self) -> None:
        await self.client.close()


def sdk_client(spec: ProviderSpec) -> tuple[openai.AsyncOpenAI, tuple[str | None, ...]]:
    """The SDK client `spec` asks for (key, base_url, timeout; no SDK retries) and the secrets no text
    may show: the chat provider and the batch client (llmjury.batch.openai_api) build theirs alike."""
    api_key = spec.text_option("api_key") or os.environ.get(spec.text_option("api_key_env") or "OPENAI_API_KEY")
    base_url = spec.text_option("base_url") or os.environ.get("OPENAI_BASE_URL")
    address = split(base_url) if base_url else None
    authorization = address.authorization if address else None
    client = openai.AsyncOpenAI(
        api_key=api_key or "not-needed-for-local-servers",
        base_url=address.url if address else None,
        default_query=address.query if address and address.query else None,
        default_headers={"Authorization": authorization} if authorization else None,
        timeout=spec.number_option("timeout", 120),
        max_retries=0,
        http_client=aiohttp_client(),
    )
    return client, (api_key, *(address.secrets if address else ()))


def aiohttp_client() -> openai.DefaultAioHttpClient | openai.DefaultAsyncHttpxClient:
    """The SDK's aiohttp-based client, or its default httpx one when aiohttp is not installed (openai
    installed without its `aiohttp` extra); either with the process's shared TLS context."""
    try:
        return openai.DefaultAioHttpClient(verify=shared_tls())
    except RuntimeError:
        return openai.DefaultAsyncHttpxClient(verify=shared_tls())


def status_error(provider: str, exc: openai.APIStatusError, secrets: Sequence[str | None]) -> ProviderError:
    """An HTTP error answer as a transient or permanent ProviderError, its text scrubbed of secrets."""
    status = exc.status_code
    detail = exc.body.get("message") if isinstance(exc.body, dict) else None
    cause = scrub(f"HTTP {status}: {detail or exc.message}", secrets)
    if is_retryable(status):
        return TransientProviderError(provider, cause, status=status, retry_after=retry_after(exc.response))
    return PermanentProviderError(provider, cause, status=status)
