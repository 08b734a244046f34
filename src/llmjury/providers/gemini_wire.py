"""The Gemini API's generateContent wire format, as google-genai types: the request llmjury sends
and the samples it reads back.

One place for both the synchronous provider (llmjury.providers.gemini) and the batch requests
(llmjury.batch.gemini_lines), so a batched request is the one that would have been sent and a batched
answer is parsed as a synchronous one is.
"""

from __future__ import annotations

from google.genai import types

from llmjury.chat import FILTERED_REASONS, ChatRequest, Sample, TokenLogprob, TopLogprob, Usage
from llmjury.providers.usage import split_usage


def contents(request: ChatRequest) -> list[types.Content]:
    """The conversation without its system turns (they travel as the config's system instruction)."""
    return [
        types.Content(role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)])
        for m in request.messages
        if m.role != "system"
    ]


def generate_config(request: ChatRequest, n: int, sample_index: int = 0) -> types.GenerateContentConfig:
    """The config asking for `n` candidates of `request`; a later sample asked on its own (a batch
    line) gets its own seed, so it is a fresh draw and the same one on every run."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    seed = request.seed
    if n == 1 and sample_index > 0:
        seed = (request.seed or 0) + sample_index
    return types.GenerateContentConfig(
        system_instruction=system or None,
        candidate_count=n,
        temperature=request.temperature,
        top_p=request.top_p,
        max_output_tokens=request.max_tokens,
        seed=seed,
        response_logprobs=request.logprobs or None,
        logprobs=request.top_logprobs if request.logprobs else None,
        response_mime_type="application/json" if request.json_schema else None,
        response_json_schema=request.json_schema,
    )


def blocked_reason(response: types.GenerateContentResponse) -> str | None:
    """Why the prompt itself was blocked (no candidate at all), or None."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return str(feedback.block_reason)
    return None


def response_samples(response: types.GenerateContentResponse, latency: float) -> list[Sample]:
    """Every candidate as a sample, by candidate index, the prompt's tokens on the first."""
    meta = response.usage_metadata
    usage = Usage(
        prompt_tokens=(meta.prompt_token_count or 0) if meta else 0,
        completion_tokens=(meta.candidates_token_count or 0) if meta else 0,
    )
    candidates = sorted(response.candidates or [], key=lambda c: c.index or 0)
    if not candidates:
        return []
    shares = split_usage(usage, len(candidates))
    return [_sample(c, share, latency) for c, share in zip(candidates, shares, strict=True)]


def _sample(candidate: types.Candidate, usage: Usage, latency: float) -> Sample:
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(p.text or "" for p in parts if not getattr(p, "thought", False))
    reason = candidate.finish_reason.value if candidate.finish_reason is not None else None
    refusal = reason if reason in FILTERED_REASONS else None  # a content filter's stop (Sample.outcome)
    logprobs = None
    result = candidate.logprobs_result
    if result is not None and result.chosen_candidates:
        tops = result.top_candidates or []
        logprobs = []
        for step, chosen in enumerate(result.chosen_candidates):
            alternatives = (tops[step].candidates or []) if step < len(tops) else []
            logprobs.append(
                TokenLogprob(
                    token=chosen.token or "",
                    logprob=chosen.log_probability or 0.0,
                    top=[TopLogprob(token=a.token or "", logprob=a.log_probability or 0.0) for a in alternatives],
                )
            )
    return Sample(text=text, finish_reason=reason, refusal=refusal, logprobs=logprobs, usage=usage, latency_s=latency)
