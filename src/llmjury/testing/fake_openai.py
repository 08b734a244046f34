"""Speaks OpenAI's `POST /v1/chat/completions` (choices, logprobs, usage, errors), as OpenAI does
or, with `ServerBehaviour`, as OpenAI-compatible servers do (llama.cpp, Ollama, vLLM); and OpenAI's
Files and Batches endpoints (llmjury.testing.openai_batch_routes), whose lines it answers as it
answers the same requests synchronously."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from llmjury.testing.fake_batches import BatchBook
from llmjury.testing.fake_server import (
    Answer,
    FakeChoice,
    FakeServer,
    Fault,
    Headed,
    Reply,
    count_tokens,
    default_reply,
)
from llmjury.testing.openai_batch_routes import MAX_LINES, OpenAIBatchRoutes

_TOKEN = re.compile(r"\d|\s*[^\W\d_]+|\s*[^\w\s]|\s+")


@dataclass(frozen=True)
class ServerBehaviour:
    """What an OpenAI-compatible server does with the request fields that servers differ on."""

    honours_n: bool = True  # False: one choice back whatever `n` asks
    # json_object: json_schema gets HTTP 500 (llama.cpp); none: any response_format gets HTTP 400
    structured: Literal["json_schema", "json_object", "none"] = "json_schema"
    digit_tokens: bool = False  # tokens as a BPE tokenizer makes them, one per digit (logprobs)
    sends_refusal: bool = True  # False: no `refusal` key in the message
    logprobs: bool = True  # False: `logprobs` ignored (GPT4All)
    logprobs_need_top: bool = False  # True: no logprobs unless `top_logprobs` is set (llama.cpp)


OPENAI = ServerBehaviour()
#: llama-cpp-python 0.3.36's server, as measured (`serial=True` adds its one-at-a-time serving).
LLAMA_CPP = ServerBehaviour(honours_n=False, structured="json_object", digit_tokens=True, sends_refusal=False,
                            logprobs_need_top=True)


#: What llama-cpp-python 0.3.36's server answers (HTTP 500) to `response_format` `json_schema`: its
#: pydantic validation error, wrapped as an internal server error (measured; the traceback path shortened).
LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
    "  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions")


def tokens(text: str, digit_tokens: bool) -> list[str]:
    """The tokens logprobs report: words with their leading space, punctuation, single digits."""
    return _TOKEN.findall(text) if digit_tokens else text.split(" ")


class FakeOpenAI(FakeServer):
    def __init__(self, reply: Reply = default_reply, *, latency: float = 0.0, serial: bool = False,
                 behaviour: ServerBehaviour = OPENAI) -> None:
        super().__init__(reply, latency=latency, serial=serial)
        self.behaviour = behaviour
        #: Synchronous chat calls answered (a test of the batch lane asserts there were none).
        self.chat_calls = 0
        #: The batches this server runs; a test drives them (step, expire, hold) and reads `creations`.
        self.batches = BatchBook(self.chat_answer, "batch_", MAX_LINES)
        #: The files uploaded and written (batch results); `max_file_bytes` may be lowered to test the cap.
        self.files = OpenAIBatchRoutes(self.batches)

    @classmethod
    def llama_cpp(cls, reply: Reply = default_reply, *, latency: float = 0.0) -> FakeOpenAI:
        """A stand-in for llama.cpp's server: one choice, json_object only, digit tokens, serial."""
        return cls(reply, latency=latency, serial=True, behaviour=LLAMA_CPP)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> Answer | Headed:
        answer = self.files.respond(method, path, body, raw, headers)
        return answer if answer is not None else super().respond(method, path, body, raw, headers)

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        with self._lock:
            self.chat_calls += 1
        return self.chat_answer(body)

    def chat_answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """What a chat-completions request gets, called synchronously or as a line of a batch."""
        fmt = (body.get("response_format") or {}).get("type")
        if fmt and self.behaviour.structured == "none":
            return 400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error",
                                   "param": "response_format", "code": None}}
        if fmt == "json_schema" and self.behaviour.structured != "json_schema":
            return 500, {"error": {"message": LLAMA_CPP_REFUSAL, "type": "internal_server_error", "param": None,
                                   "code": None}}
        n = int(body.get("n", 1)) if self.behaviour.honours_n else 1
        choices = [self._choice(body, i, self.choice(body, i)) for i in range(n)]
        prompt = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        completion = sum(count_tokens(c["message"]["content"] or "") for c in choices)
        return 200, {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": choices,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }

    def _choice(self, body: dict[str, Any], index: int, choice: FakeChoice) -> dict[str, Any]:
        logprobs = None
        behaviour = self.behaviour
        wanted = body.get("logprobs") and (body.get("top_logprobs") or not behaviour.logprobs_need_top)
        if wanted and behaviour.logprobs:
            steps = choice.logprobs or [(tok, 0.0, []) for tok in tokens(choice.text, behaviour.digit_tokens)]
            top_n = int(body.get("top_logprobs") or 0)
            logprobs = {"content": [
                {"token": tok, "logprob": lp, "bytes": list(tok.encode()),
                 "top_logprobs": [{"token": t, "logprob": p, "bytes": list(t.encode())} for t, p in alts[:top_n]]}
                for tok, lp, alts in steps
            ], "refusal": None}
        message = {"role": "assistant", "content": None if choice.refusal else choice.text}
        if behaviour.sends_refusal:
            message["refusal"] = choice.refusal
        return {"index": index, "message": message, "logprobs": logprobs, "finish_reason": choice.finish_reason}

    def error_body(self, fault: Fault) -> dict[str, Any]:
        kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        return {"error": {"message": fault.message, "type": kind, "param": None, "code": kind}}
