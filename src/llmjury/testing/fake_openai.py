"""Speaks OpenAI's `POST /v1/chat/completions` (choices, logprobs, usage, errors)."""

from __future__ import annotations

import time
from typing import Any

from llmjury.testing.fake_server import FakeChoice, FakeServer, Fault, count_tokens


class FakeOpenAI(FakeServer):
    #: Some OpenAI-compatible servers (GPT4All among them) ignore `logprobs`; set False to mimic them.
    supports_logprobs = True

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        n = int(body.get("n", 1))
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
        if body.get("logprobs") and self.supports_logprobs:
            steps = choice.logprobs or [(tok, 0.0, []) for tok in choice.text.split(" ")]
            top_n = int(body.get("top_logprobs") or 0)
            logprobs = {"content": [
                {"token": tok, "logprob": lp, "bytes": list(tok.encode()),
                 "top_logprobs": [{"token": t, "logprob": p, "bytes": list(t.encode())} for t, p in alts[:top_n]]}
                for tok, lp, alts in steps
            ], "refusal": None}
        return {
            "index": index,
            "message": {"role": "assistant", "content": None if choice.refusal else choice.text,
                        "refusal": choice.refusal},
            "logprobs": logprobs,
            "finish_reason": choice.finish_reason,
        }

    def error_body(self, fault: Fault) -> dict[str, Any]:
        kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        return {"error": {"message": fault.message, "type": kind, "param": None, "code": kind}}
