"""Speaks the Gemini API's `POST /v1beta/models/{model}:generateContent`, and its batch mode
(llmjury.testing.gemini_batch_routes), whose requests it answers as it answers them synchronously."""

from __future__ import annotations

import re
from typing import Any

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
from llmjury.testing.gemini_batch_routes import GeminiBatchRoutes

_ROUTE = re.compile(r"^/(?P<version>v1\w*)/models/(?P<model>[^:/]+):generateContent$")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
MAX_CANDIDATES = 8
#: A FakeChoice's finish reason in OpenAI's words, as Gemini names it; any other is sent as given
#: (`MAX_TOKENS`, `RECITATION`).
FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


class FakeGemini(FakeServer):
    def __init__(self, reply: Reply = default_reply, *, latency: float = 0.0, serial: bool = False) -> None:
        super().__init__(reply, latency=latency, serial=serial)
        #: Synchronous generateContent calls answered (a test of the batch lane asserts there were none).
        self.chat_calls = 0
        #: The batches this server runs; a test drives them (step, expire, hold) and reads `creations`.
        self.batches = BatchBook(self.generate_answer, "b", None)
        #: The batch routes and the files they hold (`put_file` an input file, result files).
        self.files = GeminiBatchRoutes(self.batches)

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> Answer | Headed:
        uploaded = self.files.upload(path, body, raw, headers)
        if uploaded is not None:
            return uploaded
        if "x-goog-api-key" not in {k.lower() for k in headers}:
            return 403, self.error_body(Fault(status=403, message="missing x-goog-api-key"))
        answer = self.files.respond(method, path, body, raw)
        return answer if answer is not None else super().respond(method, path, body, raw, headers)

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        match = _ROUTE.match(path.split("?")[0])
        if not match:
            return 404, self.error_body(Fault(status=404, message=f"no route {path}"))
        with self._lock:
            self.chat_calls += 1
        return self.generate_answer(body, match["model"])

    def generate_answer(self, body: dict[str, Any], model: str = "batch") -> tuple[int, dict[str, Any]]:
        """What a generateContent request gets, called synchronously or as a request of a batch."""
        config = body.get("generationConfig", {})
        n = int(config.get("candidateCount", 1))
        if n > MAX_CANDIDATES:
            return 400, self.error_body(Fault(status=400, message=f"candidateCount must be <= {MAX_CANDIDATES}"))
        candidates = [self._candidate(config, i, self.choice(body, i)) for i in range(n)]
        prompt = sum(count_tokens(p.get("text", "")) for c in body.get("contents", []) for p in c.get("parts", []))
        completion = sum(count_tokens(c["content"]["parts"][0]["text"]) for c in candidates if c.get("content"))
        return 200, {
            "candidates": candidates,
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                              "totalTokenCount": prompt + completion},
            "modelVersion": model,
            "responseId": f"fake-{len(self.requests)}",
        }

    def _candidate(self, config: dict[str, Any], index: int, choice: FakeChoice) -> dict[str, Any]:
        if choice.refusal:
            return {"index": index, "finishReason": "SAFETY"}
        candidate: dict[str, Any] = {
            "index": index,
            "content": {"role": "model", "parts": [{"text": choice.text}]},
            "finishReason": FINISH_REASONS.get(choice.finish_reason, choice.finish_reason),
        }
        if config.get("responseLogprobs"):
            steps = choice.logprobs or [(tok, 0.0, []) for tok in choice.text.split(" ")]
            top_n = int(config.get("logprobs") or 0)
            candidate["logprobsResult"] = {
                "chosenCandidates": [{"token": t, "logProbability": lp} for t, lp, _ in steps],
                "topCandidates": [{"candidates": [{"token": a, "logProbability": p} for a, p in alts[:top_n]]}
                                  for _, _, alts in steps],
            }
        return candidate

    def error_body(self, fault: Fault) -> dict[str, Any]:
        return {"error": {"code": fault.status, "message": fault.message,
                          "status": STATUS_NAMES.get(fault.status, "UNKNOWN")}}
