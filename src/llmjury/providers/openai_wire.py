"""OpenAI's chat-completions wire format: the request body llmjury sends and the samples it reads back.

One place for both the synchronous provider (llmjury.providers.openai_chat) and the batch lines
(llmjury.batch.openai_lines), so a request batched is the very request that would have been sent,
and an answer read from a batch output file is parsed as a synchronous answer is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from llmjury.chat import ChatRequest, Sample, TokenLogprob, Usage
from llmjury.errors import validation_cause
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


def completion_samples(body: object, n: int, latency: float) -> list[Sample]:
    """The first `n` choices of an answer's JSON object as samples, by choice index, the prompt's
    tokens on the first; fewer when the server answered fewer (llama.cpp, Ollama ignore `n`).

    Read from the wire's JSON, not the SDK's typed `ChatCompletion`: building that model walks every
    field of every answer in Python, the larger part of the SDK's work on an answer, while a sample
    needs a few. As lenient as the SDK's reading (a missing field is absent, not an error); a shape
    no answer has (choices that are not a list, a logprob that is not a number) raises ValueError
    naming it."""
    answer = _object(body, "the answer")
    usage = _object(answer.get("usage"), "usage")
    choices = answer.get("choices")
    if choices is None:
        choices = []
    if not isinstance(choices, list):
        raise ValueError(f"choices is a JSON {type(choices).__name__}, not a list")
    objects = [_object(choice, f"choice {position}") for position, choice in enumerate(choices)]
    chosen = [choice for _, choice in sorted(enumerate(objects), key=lambda pair: _index(*pair))[:n]]
    if not chosen:
        return []
    total = Usage(prompt_tokens=_count(usage.get("prompt_tokens")),
                  completion_tokens=_count(usage.get("completion_tokens")))
    try:
        return [_sample(choice, share, latency)
                for choice, share in zip(chosen, split_usage(total, len(chosen)), strict=True)]
    except ValidationError as exc:
        raise ValueError(f"a choice does not read as a sample ({validation_cause(exc, every=True)})") from None


def _object(value: object, what: str) -> dict[str, Any]:
    """A JSON object the answer has at `what`; null or absent reads as an empty one."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def _index(position: int, choice: dict[str, Any]) -> int:
    """A choice's own index; its place in the list when it has none."""
    index = choice.get("index")
    return index if isinstance(index, int) else position


def _count(value: object) -> int:
    """A token count as a server writes it: an integer, or one written as `12.0` or `"12"` (which the
    SDK's model took as 12); anything else counts 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return int(value) if isinstance(value, str) and value.strip().isdigit() else 0


def _sample(choice: dict[str, Any], usage: Usage, latency: float) -> Sample:
    message = _object(choice.get("message"), "message")
    finish_reason = choice.get("finish_reason")
    refusal = message.get("refusal")
    if finish_reason == "content_filter" and not refusal:
        refusal = "content_filter"
    tokens = _object(choice.get("logprobs"), "logprobs").get("content")
    if tokens is not None and not isinstance(tokens, list):
        raise ValueError(f"logprobs.content is a JSON {type(tokens).__name__}, not a list")
    logprobs = None if tokens is None else [_token(_object(item, "a token's logprobs")) for item in tokens]
    return Sample(text=_text(message.get("content")), finish_reason=finish_reason, refusal=refusal,
                  logprobs=logprobs, usage=usage, latency_s=latency)


def _text(content: object) -> str:
    """`message.content`: text, or a list of parts (as some servers answer, a reasoning model's
    thinking among them) whose text parts (of type `text`, or of none) are the answer."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict)
                       and part.get("type", "text") == "text" and isinstance(part.get("text"), str))
    raise ValueError(f"message.content is a JSON {type(content).__name__}, not text")


def _token(item: dict[str, Any]) -> TokenLogprob:
    top = item.get("top_logprobs") or []
    if not isinstance(top, list):
        raise ValueError(f"top_logprobs is a JSON {type(top).__name__}, not a list")
    return TokenLogprob.model_validate({"token": item.get("token"), "logprob": item.get("logprob"),
                                        "top": [_object(t, "a top logprob") for t in top]})
