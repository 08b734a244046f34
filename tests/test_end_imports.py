"""The session end's modules are imported ahead by xdist's controller, on a thread of its own, once
its workers report (llmjury.session.end_imports); a run without workers imports nothing ahead."""

from __future__ import annotations

import json
import sys
import threading
from types import SimpleNamespace

import pytest

from llmjury.session.end_imports import SESSION_END_MODULES, SessionEndImports

PROBE = "import threading\nIMPORTED_BY = threading.current_thread().name\n"


def session(with_workers: bool) -> SimpleNamespace:
    """What `pytest_sessionstart` reads: whether xdist's controller (`dsession`) runs this session."""
    return SimpleNamespace(config=SimpleNamespace(
        pluginmanager=SimpleNamespace(has_plugin=lambda name: with_workers and name == "dsession")))


@pytest.fixture
def probe(tmp_path, monkeypatch) -> str:
    """A module that says which thread imported it."""
    name = f"end_imports_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_under_workers_the_first_report_starts_one_thread_that_imports_the_modules(probe):
    imports = SessionEndImports((probe,))
    imports.pytest_sessionstart(session(with_workers=True))
    assert probe not in sys.modules  # not at start-up, when the workers need the cores
    imports.pytest_runtest_logreport(object())
    thread = imports.thread
    imports.pytest_runtest_logreport(object())
    assert imports.thread is thread is not None
    imports.pytest_unconfigure(object())
    assert not thread.is_alive()
    assert sys.modules[probe].IMPORTED_BY == "llmjury-end-imports"


def test_without_workers_nothing_is_imported_ahead(probe):
    imports = SessionEndImports((probe,))
    imports.pytest_sessionstart(session(with_workers=False))
    imports.pytest_runtest_logreport(object())
    imports.pytest_unconfigure(object())
    assert imports.thread is None and probe not in sys.modules


def test_a_module_that_fails_to_import_is_left_to_the_session_end(probe):
    """The session end imports it again and says why it fails; the thread raises nothing and
    imports the others."""
    SessionEndImports(("llmjury.no_such_module", probe)).load()
    assert threading.current_thread().name == sys.modules[probe].IMPORTED_BY


def test_the_modules_are_the_session_ends():
    """Each name is a module of the library (a renamed one would be imported ahead no more)."""
    import importlib.util

    assert all(importlib.util.find_spec(name) is not None for name in SESSION_END_MODULES)


RECORDER = """
import json

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if hasattr(config, "workerinput"):
        return
    imports = config.pluginmanager.get_plugin("llmjury-session-end-imports")
    thread = None if imports is None or imports.thread is None else imports.thread.name
    (config.rootpath / "ahead.json").write_text(json.dumps({"thread": thread}))
"""


@pytest.mark.parametrize(("workers", "thread"), [
    ("0", None), pytest.param("2", "llmjury-end-imports", marks=pytest.mark.e2e)])
def test_a_run_imports_ahead_only_under_xdist_workers(toy_project, workers, thread):
    toy_project.makeconftest(RECORDER)
    toy_project.runpytest_inprocess("-n", workers).assert_outcomes(passed=4)
    assert json.loads((toy_project.path / "ahead.json").read_text()) == {"thread": thread}


@pytest.fixture
def toy_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\nmarkers =\n    toy: toy family\n")
    pytester.makepyfile(test_toy_ahead='''
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat

CASES = [Case(id=f"item-{i}", family="toy") for i in range(4)]


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", case.id)))
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize(CASES)
def test_toy(outcome):
    assert outcome.verdict.valid
''')
    return pytester
