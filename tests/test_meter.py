"""The engine's meter seam (`llmjury.meter.CallMeter`): whatever meter the engine is handed is told
about each fresh call, may refuse one, and hears nothing of an answer the cache held."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest

from llmjury.chat import Sample, chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import SampleStore
from llmjury.running.engine import Engine
from llmjury.running.settings import Settings
from llmjury.store.location import StoreLocation


class Recording:
    """A meter of the test's own: records what the engine tells it, and refuses calls when told to."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.told: list[tuple[str, str, int]] = []

    @contextmanager
    def flight(self, provider: str) -> Iterator[None]:
        if self.refuse:
            raise PermanentProviderError(provider, "refused by the meter")
        self.told.append(("flight", provider, 0))
        yield

    def paid(self, provider: str, samples: Sequence[Sample]) -> None:
        self.told.append(("paid", provider, len(samples)))


@pytest.fixture
def engine_with(tmp_path):
    engines: list[Engine] = []

    def make(meter: Recording, run_id: str = "run-1") -> Engine:
        store = SampleStore(StoreLocation("sqlite", tmp_path / "cache.sqlite"))
        engines.append(Engine(Settings(retry_base_wait=0.01), store, run_id, meter=meter))
        return engines[-1]

    yield make
    for engine in engines:
        engine.close()


def test_a_handed_meter_hears_of_each_fresh_call_and_not_of_a_cached_answer(openai_server, engine_with):
    spec = ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}")
    meter = Recording()
    engine = engine_with(meter)
    engine.run(engine.complete(spec, chat(("user", "q"), n=2)))
    assert meter.told == [("flight", "openai:gpt-4o-mini", 0), ("paid", "openai:gpt-4o-mini", 2)]
    later_meter = Recording()
    later = engine_with(later_meter, run_id="run-2")
    assert later.run(later.complete(spec, chat(("user", "q"), n=2))).cached == [True, True]
    assert later_meter.told == []


def test_a_meter_that_refuses_a_call_keeps_it_from_the_provider(openai_server, engine_with):
    engine = engine_with(Recording(refuse=True))
    with pytest.raises(PermanentProviderError, match="refused by the meter"):
        engine.run(engine.complete(ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"),
                                   chat(("user", "q"))))
    assert openai_server.requests == []
