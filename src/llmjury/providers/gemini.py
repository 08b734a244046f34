"""`gemini:<model>`: the google-genai SDK's async client.

`base_url` (spec option, `GOOGLE_GEMINI_BASE_URL` or `llm_gemini_base_url`) points it at any
server speaking the Gemini API. One call returns at most `max_n` candidates (8 by default, the
API's limit); a request for more is split into several calls by the engine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from llmjury.chat import ChatRequest, Sample, TokenLogprob, TopLogprob, Usage
from llmjury.errors import PermanentProviderError, ProviderError, TransientProviderError
from llmjury.providers.address import split
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.providers.status import connection_error, is_retryable, retry_after
from llmjury.providers.usage import split_usage
from llmjury.redact import scrub

REFUSAL_REASONS = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"}


class GeminiProvider(Provider):
    max_samples_per_call = 8

    def __init__(self, spec: ProviderSpec) -> None:
        super().__init__(spec)
        api_key = spec.text_option("api_key") or os.environ.get(spec.text_option("api_key_env") or "GEMINI_API_KEY")
        api_key = api_key or os.environ.get("GOOGLE_API_KEY")
        base_url = spec.text_option("base_url") or os.environ.get("GOOGLE_GEMINI_BASE_URL")
        http_options = types.HttpOptions(base_url=base_url, timeout=int(spec.number_option("timeout", 120) * 1000))
        # google-genai sends a base_url's query and user-info itself; their values must not be printed.
        self.secrets = (api_key, *(split(base_url).secrets if base_url else ()))
        # Keep the client on the instance: a temporary one is collected and closes its connection.
        self.client = genai.Client(api_key=api_key or "not-needed-for-local-servers", http_options=http_options)
        self.max_samples_per_call = int(spec.number_option("max_n", self.max_samples_per_call))

    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        contents = [
            types.Content(role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)])
            for m in request.messages
            if m.role != "system"
        ]
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            candidate_count=n,
            temperature=request.temperature,
            top_p=request.top_p,
            max_output_tokens=request.max_tokens,
            seed=request.seed,
            response_logprobs=request.logprobs or None,
            logprobs=request.top_logprobs if request.logprobs else None,
            response_mime_type="application/json" if request.json_schema else None,
            response_json_schema=request.json_schema,
        )
        started = time.perf_counter()
        try:
            response = await self.client.aio.models.generate_content(
                model=self.spec.model, contents=contents, config=config
            )
        except genai_errors.APIError as exc:  # `from None` and scrubbed: the SDK's text may quote the key
            raise _api_error(self.name, exc, self.secrets) from None
        except (httpx2.TransportError, TimeoutError, ConnectionError) as exc:
            raise connection_error(self.name, exc, self.secrets) from None
        latency = time.perf_counter() - started
        meta = response.usage_metadata
        usage = Usage(
            prompt_tokens=(meta.prompt_token_count or 0) if meta else 0,
            completion_tokens=(meta.candidates_token_count or 0) if meta else 0,
        )
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            raise PermanentProviderError(self.name, f"prompt blocked: {feedback.block_reason}")
        candidates = sorted(response.candidates or [], key=lambda c: c.index or 0)
        if len(candidates) != n:
            raise TransientProviderError(self.name, f"asked for {n} candidates, got {len(candidates)}")
        shares = split_usage(usage, n)
        return [_sample(c, share, latency) for c, share in zip(candidates, shares, strict=True)]

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def _sample(candidate: Any, usage: Usage, latency: float) -> Sample:
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(p.text or "" for p in parts if not getattr(p, "thought", False))
    reason = candidate.finish_reason.value if candidate.finish_reason is not None else None
    refusal = reason if reason in REFUSAL_REASONS else None
    logprobs = None
    result = candidate.logprobs_result
    if result is not None and result.chosen_candidates:
        tops = result.top_candidates or []
        logprobs = []
        for step, chosen in enumerate(result.chosen_candidates):
            alternatives = tops[step].candidates if step < len(tops) and tops[step].candidates else []
            logprobs.append(
                TokenLogprob(
                    token=chosen.token or "",
                    logprob=chosen.log_probability or 0.0,
                    top=[TopLogprob(token=a.token or "", logprob=a.log_probability or 0.0) for a in alternatives],
                )
            )
    return Sample(text=text, finish_reason=reason, refusal=refusal, logprobs=logprobs, usage=usage, latency_s=latency)


def _api_error(provider: str, exc: genai_errors.APIError, secrets: Sequence[str | None]) -> ProviderError:
    status = int(exc.code or 0)
    cause = scrub(f"HTTP {status} {exc.status}: {exc.message}", secrets)
    if is_retryable(status):
        return TransientProviderError(provider, cause, status=status, retry_after=retry_after(exc.response))
    return PermanentProviderError(provider, cause, status=status)
