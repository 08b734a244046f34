from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

# In-process pytester runs drop every module imported during the inner run from sys.modules, and
# numpy's extension modules refuse a second load in one process ("cannot load module more than once
# per process"). The library imports scipy and pandas lazily, where it aggregates, so the first
# inner run that aggregates would import them and the next would fail: import them here, once.
import pandas  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

from llmjury.cache import CacheMode, SampleStore
from llmjury.engine import Engine
from llmjury.families import discover, offline_answers
from llmjury.settings import Settings
from llmjury.testing import FakeGemini, FakeOpenAI

pytest_plugins = ["pytester"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--real-server", action="store_true", default=False,
                     help="run tests/real_server against llama.cpp's server with SmolLM2-135M (slow)")


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def gemini_server() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
        yield server


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[Callable[..., Engine]]:
    """Engines over a temporary cache; fast retries so fault tests take milliseconds."""
    engines: list[Engine] = []

    def make(*, mode: CacheMode = CacheMode.RECORD, run_id: str = "run-1", cache: Path | None = None,
             **overrides: object) -> Engine:
        settings = Settings(cache_mode=mode, retry_base_wait=0.01, retry_max_wait=0.2, **overrides)
        store = SampleStore(cache or tmp_path / "cache.sqlite")
        engine = Engine(settings, store, run_id, offline_answers(discover()))
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()
