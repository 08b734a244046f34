"""`offline`: deterministic, documented heuristics standing in for an LLM, so a fresh machine
with no key runs every family end to end.

Each family keeps one heuristic per prompt template it renders in an `OfflineAnswers` table
(`@ANSWERS.answer("socratic/judge.j2")`) and hands it to the core through its contract; the
provider looks up the template named in `ChatRequest.task`. A heuristic reads the rendered
prompt, applies a rule a reader can check (the README lists them) and answers in the format the
real prompt asks for. Randomness, where a rule needs it, is seeded from the request and the sample
index, so the same request always gets the same answer. Reports label these numbers offline.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence

from llmjury.chat import ChatRequest, Sample, Usage
from llmjury.providers.base import Provider, ProviderSpec

Heuristic = Callable[[ChatRequest, random.Random], "str | Sample"]


class OfflineAnswers(dict[str, Heuristic]):
    """A family's offline answers by prompt template, filled with the `answer` decorator."""

    def answer(self, template: str) -> Callable[[Heuristic], Heuristic]:
        def register(fn: Heuristic) -> Heuristic:
            self[template] = fn
            return fn

        return register


def template_of(request: ChatRequest) -> str:
    return request.task.partition("@")[0]


def rng_for(request: ChatRequest, sample_index: int) -> random.Random:
    """A generator seeded by the request's content and the sample index."""
    digest = hashlib.sha256(request.sample_key("offline", sample_index).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def echo(request: ChatRequest, rng: random.Random) -> str:
    """Fallback for prompts no family registered: repeat the gist of the last message."""
    last = request.messages[-1].content.strip().splitlines() or [""]
    return f"(offline) {last[-1][:200]}"


class OfflineProvider(Provider):
    max_samples_per_call = 1_000_000
    cacheable = False

    def __init__(self, spec: ProviderSpec, answers: Mapping[str, Heuristic] | None = None) -> None:
        super().__init__(spec)
        self.answers = dict(answers or {})

    async def generate(self, request: ChatRequest, n: int, indices: Sequence[int] = ()) -> list[Sample]:
        rule = self.answers.get(template_of(request), echo)
        samples = []
        for index in indices or range(n):
            answer = rule(request, rng_for(request, index))
            sample = answer if isinstance(answer, Sample) else Sample(text=answer, finish_reason="stop")
            words_in = sum(len(m.content.split()) for m in request.messages)
            sample.usage = Usage(prompt_tokens=words_in if index == 0 else 0,
                                 completion_tokens=len(sample.text.split()))
            samples.append(sample)
        return samples
