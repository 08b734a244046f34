"""Load lines are about the datasets a run used: a file whose cases `-k` (or `-m`, `--llm-sample`)
left out is not reported, and a user's own file (named by an option) is always said in the
terminal, with what was kept and left out, even when nothing was."""

from __future__ import annotations

import json

import pytest

from llmjury.loading import Loaded, LoadReport

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
pythonpath = .
llm_families = toyfam:FAMILY
llm_data = shipped
"""

TOYFAM = """
import json

from llmjury import Case, JudgeConfig, LoadCounter, Outcome, Verdict
from llmjury.family import CaseSet, Dataset, Family, FamilyOptions, Result, Section


class ToyOptions(FamilyOptions):
    items: str | None = None
    extra: str | None = None


class ToyResult(Result):
    ok: bool = True


class Item(Case):
    dataset: str
    text: str


def load(path, name):
    counter = LoadCounter()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    kept = [row for row in rows if row["text"].strip()]
    counter.drop("empty texts", len(rows) - len(kept))
    cases = [Item(id=f"{name}-{i}", family="toyfam", dataset=name, text=row["text"]) for i, row in enumerate(kept)]
    return cases, counter.report("toyfam", name, path, len(kept))


def one(options, settings):
    cases, report = load(FAMILY.dataset_paths(options, settings)["items"], "items")
    return cases, [report]


def both(options, settings):
    loaded = [load(path, name) for name, path in FAMILY.dataset_paths(options, settings).items()]
    return [case for cases, _ in loaded for case in cases], [report for _, report in loaded]


async def judge(case, jury):
    return Outcome([Verdict(case_id=case.id, family="toyfam", kind="check", result=ToyResult(),
                            judge=JudgeConfig(provider="offline"))])


class Toy(Family):
    name = "toyfam"
    options = ToyOptions
    results = {"check": ToyResult}
    section = Section
    datasets = (Dataset("items", "items", "toy items", default="toy.jsonl"),
                Dataset("extra", "extra", "more toy items"))

    def case_sets(self):
        return {"one": CaseSet(one, judge), "both": CaseSet(both, judge)}

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        return Section()


FAMILY = Toy()
"""

# Two test functions: one over one dataset, one over both (two load reports from one case set).
TESTS = """
import llmjury


@llmjury.case_set("toyfam", "one")
def test_one(outcome):
    assert outcome.verdicts


@llmjury.case_set("toyfam", "both")
def test_both(outcome):
    assert outcome.verdicts
"""


def write(path, texts: list[str]) -> None:
    path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts), encoding="utf-8")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(toyfam=TOYFAM, test_toy=TESTS)
    (pytester.path / "shipped").mkdir()
    write(pytester.path / "shipped" / "toy.jsonl", ["a", "b", " "])  # the suite's copy: one left out
    write(pytester.path / "mine.jsonl", ["x", "y"])  # the user's: nothing left out
    return pytester


def loading(pytester: pytest.Pytester) -> list[dict]:
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))
    return summary["loading"]


def run(pytester: pytest.Pytester, workers: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-n", workers, *args)


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_a_dataset_whose_cases_k_leaves_out_has_no_load_line(project, workers):
    result = run(project, workers, "--llm-option", "toyfam.extra=mine.jsonl", "-k", "extra")
    result.assert_outcomes(passed=2)  # test_both's two `extra` cases; toy.jsonl's cases are deselected
    assert [(r["dataset"], r["given"]) for r in loading(project)] == [("extra", True)]
    result.stdout.fnmatch_lines(["  data: toyfam dataset extra (mine.jsonl): 2 items; none left out"])
    result.stdout.no_fnmatch_line("*dataset items*")
    assert "dataset items" not in (project.path / "reports" / "latest" / "summary.md").read_text()


def test_every_dataset_a_selected_case_uses_is_reported(project):
    result = run(project, "0", "--llm-option", "toyfam.extra=mine.jsonl")
    result.assert_outcomes(passed=2 + 4)
    assert [(r["dataset"], r["kept"], r["given"]) for r in loading(project)] == [("extra", 2, True),
                                                                                ("items", 2, False)]
    result.stdout.fnmatch_lines(["  data: toyfam dataset extra (mine.jsonl): 2 items; none left out",
                                 "  data: toyfam dataset items (*toy.jsonl): 2 items; left out 1 (1 empty texts)"])


def test_the_suites_own_file_with_nothing_left_out_stays_out_of_the_terminal_but_not_the_report(project):
    write(project.path / "shipped" / "toy.jsonl", ["a", "b"])
    result = run(project, "0", "-k", "test_one")
    result.assert_outcomes(passed=2)
    assert [(r["dataset"], r["given"]) for r in loading(project)] == [("items", False)]
    result.stdout.no_fnmatch_line("*data: toyfam*")
    assert "data: toyfam dataset items" in (project.path / "reports" / "latest" / "summary.md").read_text()


def test_the_same_file_named_by_an_option_is_the_users_and_always_said(project):
    result = run(project, "0", "-k", "test_one", "--llm-option",
                                          "toyfam.items=shipped/toy.jsonl")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["  data: toyfam dataset items (shipped/toy.jsonl): 2 items; left out 1*"])
    assert loading(project)[0]["given"] is True


class Thing:
    def __init__(self, dataset: str | None) -> None:
        self.dataset = dataset


def report(dataset: str, source: str = "f.jsonl") -> LoadReport:
    return LoadReport(family="fam", dataset=dataset, source=source, kept=1)


def test_a_case_goes_with_its_datasets_report_and_a_case_without_one_with_every_report():
    loaded = Loaded()
    a, b, anonymous = Thing("a"), Thing("b"), Thing(None)
    loaded.add([a, b, anonymous], [report("a", "a.jsonl"), report("b", "b.jsonl")])
    assert [r.dataset for r in loaded.used([a])] == ["a"]
    assert [r.dataset for r in loaded.used([anonymous])] == ["a", "b"]
    assert loaded.used([]) == []


def test_a_file_that_gave_no_case_is_still_reported():
    loaded = Loaded()
    loaded.add([], [report("empty")])
    assert [r.dataset for r in loaded.used([])] == ["empty"]
