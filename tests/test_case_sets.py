"""Case sets: a family declares them, a test names one, and the plugin loads it with the options
parsed once at start-up and parametrizes the test, the same at any `-n`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
pythonpath = .
llm_families = counted:FAMILY
"""

COUNTED = """
import os

from pydantic import model_validator

from llmjury import Case, JudgeConfig, LoadCounter, Outcome, Verdict
from llmjury.cases import NoCases
from llmjury.family import CaseSet, Family, FamilyOptions, Metric, Result, Section
from llmjury.stats import proportion


class Options(FamilyOptions):
    count: int = 3

    @model_validator(mode="after")
    def counted(self):
        # One line per parse, so a test can count how often the run parsed these options.
        with open(os.environ["COUNTED_PARSES"], "a") as out:
            out.write(f"{os.getpid()}\\n")
        return self


class Item(Case):
    family: str = "counted"
    number: int

    def marks(self):
        return [*super().marks(), "odd" if self.number % 2 else "even"]


class Even(Result):
    even: bool


class CountedSection(Section):
    even_rate: Metric


def items(options, settings):
    counter = LoadCounter()
    counter.drop("number zero")
    return ([Item(id=f"item-{n}", number=n) for n in range(1, options.count + 1)],
            [counter.report("counted", "numbers", "numbers", kept=options.count)])


def nothing(options, settings):
    raise NoCases("no numbers file: set --llm-option counted.count=N")


async def judge(case, jury):
    options = jury.options("counted", Options)
    result = Even(even=case.number % 2 == 0)
    return Outcome([Verdict(case_id=case.id, family="counted", kind="even", result=result,
                            judge=JudgeConfig(provider="rules"), attributes={"count": options.count})])


class Counted(Family[Options, CountedSection]):
    name = "counted"
    options = Options
    results = {"even": Even}
    section = CountedSection

    def case_sets(self):
        return {"items": CaseSet(items, judge), "plain": CaseSet(items), "nothing": CaseSet(nothing, judge)}

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        scored = [v for v in verdicts if v.valid]
        return CountedSection(even_rate=proportion(sum(v.result.even for v in scored), len(scored)))


FAMILY = Counted()
"""

TESTS = """
import llmjury


@llmjury.case_set("counted", "items")
def test_item(outcome):
    assert outcome.verdict.valid


@llmjury.case_set("counted", "items")
def test_item_again(outcome):
    assert outcome.verdict.attributes["count"] == 5


@llmjury.case_set("counted", "plain")
def test_plain(case):
    assert case.number > 0


@llmjury.case_set("counted", "nothing")
def test_nothing(outcome):
    raise AssertionError("skipped: its loader has no data")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(counted=COUNTED, test_counted=TESTS)
    monkeypatch.setenv("COUNTED_PARSES", str(pytester.path / "parses.txt"))
    return pytester


def parses(project: pytest.Pytester) -> list[str]:
    return (project.path / "parses.txt").read_text().split()


@pytest.mark.e2e  # two pytest processes of their own (with two xdist workers at -n 2)
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_case_set_parametrizes_its_tests_with_its_pipeline_and_load_reports(project, workers):
    ids = project.runpytest_subprocess("-n", workers, "--co", "-q", "--llm-option", "counted.count=5")
    collected = sorted(line for line in ids.outlines if "::" in line)
    assert collected == sorted([f"test_counted.py::{test}[item-{n}]" for test in ("test_item", "test_item_again",
                                                                                   "test_plain") for n in range(1, 6)]
                               + ["test_counted.py::test_nothing[no-file]"])
    result = project.runpytest_subprocess("-n", workers, "-rs", "--llm-option", "counted.count=5", "-m", "not odd")
    result.assert_outcomes(passed=6, skipped=1)  # `-m not odd`: the cases carry their own markers
    result.stdout.fnmatch_lines(["*no numbers file: set --llm-option counted.count=N*"])
    summary = json.loads((project.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["counted"]["even_rate"]["value"] == 1.0
    assert summary["counted"]["loading"][0]["dropped"] == {"number zero": 1}


@pytest.mark.e2e  # a pytest process of its own (with two xdist workers at -n 2)
@pytest.mark.parametrize(("workers", "processes"), [("0", 1), ("2", 3)])
def test_options_are_parsed_once_per_process_however_many_tests_and_cases_read_them(project, workers, processes):
    result = project.runpytest_subprocess("-n", workers, "--llm-option", "counted.count=5")
    result.assert_outcomes(passed=15, skipped=1)
    assert len(parses(project)) == processes
    assert len(set(parses(project))) == processes


@pytest.mark.e2e  # a pytest process of its own
def test_a_case_set_the_family_does_not_declare_stops_the_run_naming_the_declared_ones(project):
    project.makepyfile(test_counted='import llmjury\n\n\n@llmjury.case_set("counted", "itmes")\n'
                                    'def test_item(outcome):\n    pass\n')
    result = project.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_item: @llmjury.case_set('counted', 'itmes'): family 'counted' declares "
                                 "no case set 'itmes' (did you mean 'items'?); it declares items, nothing, plain*"])


@pytest.mark.e2e  # a pytest process of its own
def test_a_case_set_of_an_unknown_family_stops_the_run_naming_the_known_ones(project):
    project.makepyfile(test_counted='import llmjury\n\n\n@llmjury.case_set("countd", "items")\n'
                                    'def test_item(outcome):\n    pass\n')
    result = project.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown family 'countd' (did you mean 'counted'?); known families: *counted*"])


def test_the_shipped_eval_modules_hold_assertions_only():
    """No hand-written parametrization, no family loaders, no plugin helpers in an eval module."""
    for module in sorted((Path(__file__).parents[1] / "evals").glob("test_*.py")):
        text = module.read_text(encoding="utf-8")
        assert "pytest_generate_tests" not in text, module.name
        assert "llmjury.plugin" not in text and "llmjury.generate" not in text, module.name
        assert "case_sets" not in text and ".options import" not in text, module.name


def test_a_family_option_without_a_default_stops_the_run_at_start_up_naming_it(project):
    (project.path / "counted.py").write_text(COUNTED.replace("count: int = 3", "count: int"), encoding="utf-8")
    result = project.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*family llm_families line 'counted:FAMILY': options count have no default (every option needs one)"])


def test_no_submodule_shadows_a_public_name_of_the_package():
    """`import llmjury.X` sets the attribute X on the package: a submodule named after a public function
    (a `parametrize.py` beside `llmjury.parametrize`) would replace the function with the module."""
    import pkgutil

    import llmjury

    submodules = {module.name for module in pkgutil.iter_modules(llmjury.__path__)}
    assert submodules.isdisjoint(llmjury.__all__)
