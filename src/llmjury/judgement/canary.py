"""The judge's canary: a fixed sample of the baseline run's stored judge requests, asked again.

A provider may change the model behind an unchanged name; a cache keyed by that name then replays
the old answers while fresh calls get the new model's, and the pull request is blamed for the
difference. So each run with a baseline asks the judge again a small sample (CANARY requests,
`--llm-canary`) of the judge requests the baseline's verdicts were read from, straight from the
provider (never from the cache, and never written over the stored answers), and compares the
decisions. The sample is fixed by the run's seed and the requests' keys, so every run asks the same.

A decision is the last line of the judge's own words (quotations left out, as the readers of
`llmjury.decision_line` look for it), case-folded, without markdown bold or a trailing full stop:
the place every bundled prompt asks its judge to decide.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llmjury.chat import ChatRequest
from llmjury.judgement.verdicts import ASSERTIONS
from llmjury.jurors import JurySpec
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.reading.text import OwnWords, fold
from llmjury.sequential.order import rank
from llmjury.store.location import StoreLocation
from llmjury.store.schema import ensure_schema

#: Stored judge requests asked again per run unless `--llm-canary` says otherwise.
CANARY = 20


@dataclass(frozen=True)
class StoredRequest:
    """A judge request of the baseline run as the store keeps it, with the decision it got then."""

    key: str
    provider: str
    task: str
    request: str
    decision: str


@dataclass(frozen=True)
class Asked:
    """A canary request asked again: its decision now, or why there is none."""

    stored: StoredRequest
    judge: str
    decision: str | None
    error: str | None = None

    @property
    def flipped(self) -> bool | None:
        return None if self.decision is None else self.decision != self.stored.decision


def decision_of(text: str) -> str:
    """The decision of a judge's answer: its last own line, folded, case-folded, without bold or a full stop."""
    lines = OwnWords(text).lines
    last = fold(lines[-1].text if lines else text).strip().strip("*_").strip().rstrip(".").strip("*_ ")
    return last.casefold()


def model_judges(records: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    """The (provider, stored task) of every model judge the records name: not the offline heuristics,
    whose answers are computed, never stored, nor a test's own assertions. A verdict names its prompt
    as `name@version`, as a template's requests are stored; a request built by hand is stored under
    the name its code gives it, often without the version its verdict adds, so both are looked for."""
    judges = {(str(r["judge"].get("provider", "")), str(r["judge"].get("prompt", "")))
              for r in records if isinstance(r.get("judge"), dict)}
    return {(provider, task) for provider, prompt in judges
            if provider != ASSERTIONS and not provider.startswith("offline")
            for task in {prompt, prompt.partition("@")[0]}}


def judge_requests(location: StoreLocation, records: Iterable[dict[str, Any]], run_id: str | None
                   ) -> list[StoredRequest]:
    """The stored requests of the judges the baseline's verdicts name (by provider and prompt), the
    baseline run's own when it wrote any, else any run's."""
    judges = model_judges(records)
    tasks = sorted({task for _, task in judges})
    if not tasks:
        return []
    db = location.open()
    try:
        ensure_schema(db)
        marks = ", ".join("?" for _ in tasks)
        rows = db.execute(f"SELECT key, provider, task, request, sample, run_id FROM samples WHERE task IN ({marks})",
                          tasks)
    finally:
        db.close()
    found = [(row, json.loads(row[4]).get("text", "")) for row in rows if (row[1], row[2]) in judges]
    own = [(row, text) for row, text in found if row[5] == run_id]
    return [StoredRequest(row[0], row[1], row[2], row[3], decision_of(text)) for row, text in (own or found)]


def canary(requests: Sequence[StoredRequest], seed: int, size: int) -> list[StoredRequest]:
    """The fixed sample: the first `size` requests in the seeded order of their keys."""
    return sorted(requests, key=lambda r: (rank(r.key, seed), r.key))[:size]


def judge_for(settings_judge: Callable[[str | None], JurySpec], task: str) -> ProviderSpec:
    """The provider this run asks for a task's judge: the family's judge role, else the run's judge."""
    family = task.partition("/")[0] or None
    return settings_judge(family).jurors[0].spec


async def ask_again(requests: Sequence[StoredRequest], judge: Callable[[str], ProviderSpec],
                    provider: Callable[[ProviderSpec], Provider]) -> list[Asked]:
    """Every canary request asked of this run's judge at once; a failed call is kept with its cause."""
    async def one(stored: StoredRequest) -> Asked:
        spec = judge(stored.task)
        try:
            request = ChatRequest.model_validate_json(stored.request).model_copy(update={"n": 1})
            samples = await provider(spec).generate(request, 1, [0])
        except Exception as exc:  # a canary that cannot be asked is reported, never a flip
            return Asked(stored, str(spec), None, f"{type(exc).__name__}: {exc}")
        if not samples or samples[0].problem is not None:
            return Asked(stored, str(spec), None, samples[0].problem if samples else "no answer")
        return Asked(stored, str(spec), decision_of(samples[0].text))

    return list(await asyncio.gather(*(one(r) for r in requests)))
