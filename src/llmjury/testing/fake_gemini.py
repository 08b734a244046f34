"""Speaks the Gemini API's `POST /v1beta/models/{model}:generateContent`."""

from __future__ import annotations

import re
from typing import Any

from llmjury.testing.fake_server import FakeChoice, FakeServer, Fault, count_tokens

_ROUTE = re.compile(r"^/(?P<version>v1\w*)/models/(?P<model>[^:/]+):generateContent$")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
MAX_CANDIDATES = 8


class FakeGemini(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        match = _ROUTE.match(path.split("?")[0])
        if not match:
            return 404, self.error_body(Fault(status=404, message=f"no route {path}"))
        lowered = {k.lower(): v for k, v in headers.items()}
        if "x-goog-api-key" not in lowered:
            return 403, self.error_body(Fault(status=403, message="missing x-goog-api-key"))
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
            "modelVersion": match["model"],
            "responseId": f"fake-{len(self.requests)}",
        }

    def _candidate(self, config: dict[str, Any], index: int, choice: FakeChoice) -> dict[str, Any]:
        if choice.refusal:
            return {"index": index, "finishReason": "SAFETY"}
        candidate: dict[str, Any] = {
            "index": index,
            "content": {"role": "model", "parts": [{"text": choice.text}]},
            "finishReason": "STOP",
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
