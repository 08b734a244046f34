"""The public API warns for one minor version before anything is removed: a family written to the
previous documentation still runs, and is told what to use instead."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

FAMILY_OF_0_1 = '''
import llmjury
from llmjury import Case
from llmjury.family import Family, FamilyOptions
from llmjury.model import Result, Section
from llmjury.plugin import options_of


class Options(FamilyOptions):
    replies: int = 3


class Seen(Result):
    seen: bool


class Tiny(Family[Options, Section]):
    name = "tiny"
    options = Options
    results = {"seen": Seen}
    section = Section

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        return Section()


FAMILY = Tiny()


def pytest_generate_tests(metafunc):
    if "reply" in metafunc.fixturenames:
        metafunc.parametrize("reply", range(options_of(metafunc.config, FAMILY).replies))


def test_reply(reply):
    assert reply < 5
'''


@pytest.mark.e2e  # a pytest process of its own
def test_options_of_still_works_and_warns_naming_its_replacement(pytester):
    pytester.makepyfile(test_tiny=FAMILY_OF_0_1)
    pytester.makeini("[pytest]\nllm_families = test_tiny:FAMILY\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:deepeval", "-W",
                                           "default::DeprecationWarning", "--llm-option", "tiny.replies=4")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*DeprecationWarning: llmjury.plugin.options_of is deprecated since llmjury 0.2.0 "
                                 "and will be removed in 0.3.0: use llmjury.parsed_options(config, family)*"])


def test_the_version_is_semantic_and_the_changelog_names_it():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## {version}" in changelog and "options_of" in changelog


def test_calling_options_of_warns(monkeypatch):
    from llmjury import deprecated

    monkeypatch.setattr(deprecated, "parsed_options", lambda config, family: "parsed")
    with pytest.warns(DeprecationWarning, match="removed in 0.3.0"):
        assert deprecated.options_of(None, None) == "parsed"  # type: ignore[arg-type]
