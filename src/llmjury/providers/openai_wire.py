"""OpenAI's chat-completions wire format: the request body llmjury sends and the samples it reads back.

One place for both the synchronous provider (llmjury.providers.openai_chat) and the batch lines
(llmjury.batch.openai_lines), so a request batched is the very request that would have been sent,
and an answer read from a batch output file is parsed as a synchronous answer is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from openai.types.chat import ChatCompletion
from openai.types.chat.chat_completion import Choice

from llmjury.chat import ChatRequest, Sample, TokenLogprob, TopLogprob, Usage
from llmjury.providers.usage import split_usage

#: How structured output is asked for, most to least strict; a server that refuses one gets the next.
STRUCTURED_MODES = ("json_schema", "json_object", "prompt")


def chat_body(model: str, request: ChatRequest, n: int, indices: Sequence[int] = (),
              mode: str = STRUCTURED_MODES[0]) -> dict[str, Any]:
    """The JSON body of `POST /chat/completions` asking `model` for `n` samples of `request`."""
    messages = [m.model_dump() for m in request.messages]
    params: dict[str, Any] = {"model": model, "messages": messages}
    if n != 1:
        params["n"] = n
    for name in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(request, name)
        if value is not None:
            params[name] = value
    if n == 1 and indices and indices[0] > 0:
        # A later sample fetched on its own (a server that ignores `n`, a batch line): its own seed,
        # so it is a fresh draw and the same one on every run.
        params["seed"] = (request.seed or 0) + indices[0]
    if request.logprobs:
        params["logprobs"] = True
        if request.top_logprobs is not None:
            params["top_logprobs"] = request.top_logprobs
    if request.json_schema is not None:
        if mode == "json_schema":
            schema: dict[str, Any] = {"name": request.schema_name or "response", "schema": request.json_schema}
            if request.native_schema:  # a decision's enum is enforced, not just suggested
                schema["strict"] = True
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        elif mode == "json_object":
            params["response_format"] = {"type": "json_object", "schema": request.json_schema}
        else:
            instruction = ("\n\nAnswer with one JSON object and nothing else, valid against this JSON "
                           f"Schema:\n{json.dumps(request.json_schema)}")
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + instruction}
    return params


def completion_samples(response: ChatCompletion, n: int, latency: float) -> list[Sample]:
    """The first `n` choices of an answer as samples, by choice index, the prompt's tokens on the
    first; fewer when the server answered fewer (llama.cpp, Ollama ignore `n`)."""
    usage = Usage(
        prompt_tokens=getattr(response.usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(response.usage, "completion_tokens", 0) or 0,
    )
    choices = sorted(response.choices, key=lambda c: c.index)[:n]
    if not choices:
        return []
    shares = split_usage(usage, len(choices))
    return [_sample(choice, share, latency) for choice, share in zip(choices, shares, strict=True)]


def _sample(choice: Choice, usage: Usage, latency: float) -> Sample:
    message = choice.message
    refusal = getattr(message, "refusal", None)
    if choice.finish_reason == "content_filter" and not refusal:
        refusal = "content_filter"
    logprobs = None
    if choice.logprobs is not None and choice.logprobs.content is not None:
        logprobs = [
            TokenLogprob(
                token=item.token,
                logprob=item.logprob,
                top=[TopLogprob(token=t.token, logprob=t.logprob) for t in item.top_logprobs or []],
            )
            for item in choice.logprobs.content
        ]
    return Sample(
        text=message.content or "",
        finish_reason=choice.finish_reason,
        refusal=refusal,
        logprobs=logprobs,
        usage=usage,
        latency_s=latency,
    )
