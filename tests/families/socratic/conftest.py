from __future__ import annotations

from collections.abc import Callable

import pytest

from llmjury.judgement.jury import Jury
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.running.engine import Engine


@pytest.fixture
def make_jury(make_engine: Callable[..., Engine]) -> Callable[..., Jury]:
    """A jury over a temporary cache; roles and options as keyword dicts."""

    def make(roles: dict[str, str] | None = None, options: dict[str, str] | None = None, **settings: object) -> Jury:
        engine = make_engine(roles=roles or {}, options=options or {}, **settings)
        return Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())

    return make
