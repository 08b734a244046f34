from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from infrastructure import MISSING, unavailable

from llmjury.families import discover, offline_answers
from llmjury.jurors import JurySpec
from llmjury.running.cache import CacheMode, SampleStore
from llmjury.running.engine import Engine
from llmjury.running.settings import Settings
from llmjury.store.location import StoreLocation
from llmjury.testing import FakeGemini, FakeOpenAI
from llmjury.testing.postgres import TEST_DSN, binaries, fresh_schema, start, stop

pytest_plugins = ["pytester"]

# With PYTHONDONTWRITEBYTECODE set, pytest rewrites the asserts of every test module again in each
# xdist worker and each run (about 5 s a process): the project's tests keep their rewritten modules
# in __pycache__ (ignored by git), as they are without it; processes the tests start keep the setting.
sys.dont_write_bytecode = False

#: Plugins no inner run uses, off in its processes: each xdist worker of an inner run would import them again,
#: an in-process run imports again what it imported the last time (pytester drops it after each run:
#: deepeval's plugin, about 2 s a run), and rerunfailures leaves a server thread behind after every
#: in-process run. A test of llmjury beside one of them turns it on again (`-p asyncio`).
INNER_RUN_ADDOPTS = ("-p no:hypothesispytest -p no:syrupy -p no:anyio -p no:repeat -p no:rerunfailures -p no:benchmark "
                     "-p no:deepeval -p no:asyncio -p no:platformdirs")


E2E_DESELECTED = pytest.StashKey[int]()
# In-process pytester runs drop every module imported during the inner run from sys.modules, and
# numpy's extension modules refuse a second load in one process ("cannot load module more than once
# per process"). The library imports scipy, pandas and matplotlib (report.html
# plots) lazily, where it aggregates and reports, so the first inner run would import them and the
# next would fail or pay the import again: a process that runs tests imports them once, up front.
# Inner runs import their test files by basename too: give them names no module under tests/ has
# (test_arena_suite.py, not test_arena.py), or they collide with the module already imported.
# psycopg too: its compiled half keeps raising the error classes of its first import, which a
# re-imported `psycopg` does not catch.
IMPORTED_BEFORE_INNER_RUNS = ("pandas", "scipy.stats", "matplotlib.figure", "psycopg")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--real-server", action="store_true", default=False,
                     help="run tests/real_server against llama.cpp's server with SmolLM2-135M (slow)")
    parser.addoption("--e2e", action="store_true", default=False,
                     help="also run the tests marked e2e (slow): a process of their own for signals, kills, "
                          "live output on a pipe or terminal, the workflow script, headless Chromium, two "
                          "xdist workers, or a batch at a provider's full cap")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Under -n the tests are spread by xdist's `worksteal` unless --dist says otherwise: a worker out of
    tests takes pending ones from the other's queue, where `load` (before xdist turns `no` into it) left
    one worker running the suite's last slow tests alone."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "worksteal"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MISSING}(reason): what the test needs is missing, and CI=true: it fails")
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if not controller:  # an xdist controller runs no test: its start-up stays short
        for name in IMPORTED_BEFORE_INNER_RUNS:
            importlib.import_module(name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --e2e the slow end-to-end tests are deselected, so `pytest tests` stays quick; `.ci/run`
    runs them as a step of their own."""
    if config.getoption("--e2e"):
        return
    slow = [item for item in items if item.get_closest_marker("e2e")]
    if slow:
        items[:] = [item for item in items if not item.get_closest_marker("e2e")]
        config.hook.pytest_deselected(items=slow)
    config.stash[E2E_DESELECTED] = len(slow)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):  # an xdist worker: its controller prints the note
        session.config.workeroutput["e2e_deselected"] = session.config.stash.get(E2E_DESELECTED, 0)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """Every worker collects the same tests: the controller takes their count of deselected e2e tests."""
    config = node.config  # type: ignore[attr-defined]
    count = getattr(node, "workeroutput", {}).get("e2e_deselected", 0)
    config.stash[E2E_DESELECTED] = max(count, config.stash.get(E2E_DESELECTED, 0))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    count = config.stash.get(E2E_DESELECTED, 0)
    if count:
        terminalreporter.write_line(f"{count} e2e tests deselected: run them with --e2e "
                                    "(`python -m pytest tests -n auto --e2e -m e2e` runs only them, as .ci/run does)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Under CI a test whose infrastructure is missing fails, saying what is missing (tests/infrastructure.py)."""
    marker = item.get_closest_marker(MISSING)
    if marker is not None:
        unavailable(str(marker.args[0]))


#: The plugins a quick test's inner runs load by name, with plugin autoload off: to find the plugins to
#: autoload (and their modules to rewrite asserts in) each run reads the file lists of every installed
#: distribution, about a third of a short in-process run's time. End-to-end tests run as users do, autoloading.
#: A plugin named with -p is marked for assert rewriting, which llmjury, imported by this process already,
#: cannot be: the warning saying so is not the inner run's.
INNER_RUN_PLUGINS = ("-p xdist -p llmjury -W 'ignore:Module already imported so cannot be rewritten; llmjury"
                     ":pytest.PytestAssertRewriteWarning'")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
             ) -> pytest.Pytester:
    """pytester, whose runs (in process, in a subprocess and their xdist workers) skip unused plugins."""
    if request.node.get_closest_marker("e2e") is None:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        monkeypatch.setenv("PYTEST_ADDOPTS", INNER_RUN_PLUGINS)
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", INNER_RUN_ADDOPTS)
    return pytester


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def gemini_server() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
        yield server


def throwaway_postgres() -> tuple[Path, str]:
    """A PostgreSQL server of its own, in a new folder: its folder (to stop and resume it) and DSN."""
    if binaries() is None:
        unavailable("PostgreSQL is not installed here (initdb/pg_ctl not found) and LLMJURY_TEST_POSTGRES_DSN "
                    "is unset")
    folder = Path(tempfile.mkdtemp(prefix="llmjury-pg-"))
    try:
        return folder, start(folder)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        unavailable(f"no PostgreSQL server could be started here: {exc}")


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A PostgreSQL server for the session: .ci/run's (LLMJURY_TEST_POSTGRES_DSN), else a throwaway one
    started here; the tests that need it skip, saying why, where none can be had (and fail under CI)."""
    given = os.environ.get(TEST_DSN)
    if given:
        yield given
        return
    folder, dsn = throwaway_postgres()
    yield dsn
    stop(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def own_postgres() -> Iterator[tuple[Path, str]]:
    """A PostgreSQL server for one test, which it may stop and resume (a restart mid-run); its folder and DSN."""
    folder, dsn = throwaway_postgres()
    yield folder, dsn
    stop(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """An empty run store on each backend: a SQLite file, or a schema of its own on the PostgreSQL server."""
    if request.param == "sqlite":
        return StoreLocation("sqlite", tmp_path / "cache.sqlite")
    return StoreLocation("postgres", tmp_path / "cache.sqlite", fresh_schema(request.getfixturevalue("postgres_dsn")))


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[Callable[..., Engine]]:
    """Engines over a temporary cache; fast retries so fault tests take milliseconds. `judge` and
    `roles` are specs as written on the command line, parsed as start-up parses them."""
    engines: list[Engine] = []

    def make(*, mode: CacheMode = CacheMode.RECORD, run_id: str = "run-1", cache: Path | None = None,
             store: StoreLocation | None = None, unsaved: Path | None = None,
             judge: str | None = None, roles: dict[str, str] | None = None, **overrides: object) -> Engine:
        if judge is not None:
            overrides["judge"] = JurySpec.parse(judge)
        overrides["roles"] = {role: JurySpec.parse(spec) for role, spec in (roles or {}).items()}
        settings = Settings(cache_mode=mode, retry_base_wait=0.01, retry_max_wait=0.2, **overrides)
        location = store or StoreLocation("sqlite", cache or tmp_path / "cache.sqlite")
        store = SampleStore(location, lease_s=settings.lease_s, unsaved=unsaved)
        engine = Engine(settings, store, run_id, offline_answers(discover()))
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()
