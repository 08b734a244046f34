"""The family contract: the docs' fifth family (docs/how-to/write-a-family.md) runs as written, and a
family that breaks the contract stops the run at start-up."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from doc_examples import blocks

from llmjury.errors import ConfigError
from llmjury.families import discover
from llmjury.family import Family, FamilyOptions, Figures, Metric, Result, Section, check_family
from llmjury.runfiles import read_verdicts
from llmjury.running.settings import OptionLine


def option_lines(values: dict[str, str]) -> list[OptionLine]:
    """Options as `--llm-option` lines, the form a family parses them from."""
    return [OptionLine(key, value, "--llm-option", f"{key}={value}") for key, value in values.items()]



def page_files() -> dict[str, str]:
    """The "Writing a family" page's code blocks, by the file name on their first line."""
    return {block.splitlines()[0].lstrip("# ").strip(): block for block in blocks("politeness-family", "python", "ini")}


@pytest.fixture
def politeness(pytester: pytest.Pytester) -> pytest.Pytester:
    files = page_files()
    assert set(files) == {"politeness.py", "test_politeness.py", "pytest.ini"}
    for name, text in files.items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    ini = pytester.path / "pytest.ini"
    ini.write_text(ini.read_text().replace("addopts = ", "addopts = -p no:deepeval -p no:asyncio -p no:benchmark "))
    rows = [{"id": 1, "reply": "Please sit down."}, {"id": 2, "reply": "Sit."}, {"id": 3, "reply": " "},
            {"id": 4, "reply": "Could you please wait?"}]
    (pytester.path / "replies.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return pytester


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_the_readme_family_runs_and_aggregates_typed_results(politeness, workers):
    result = politeness.runpytest_inprocess("-n", workers, "--llm-option", "politeness.replies=replies.jsonl")
    result.assert_outcomes(passed=3)
    summary = json.loads((politeness.path / "reports" / "latest" / "summary.json").read_text())
    section = summary["politeness"]
    assert section["polite_rate"]["value"] == pytest.approx(2 / 3)
    assert section["polite_rate"]["method"] == "wilson; too few items (n=3) to tell"
    assert section["headline"] == ["polite_rate"]
    assert section["loading"] == [{"family": "politeness", "dataset": "replies", "source": "replies.jsonl",
                                   "kept": 3, "dropped": {"empty reply": 1}, "given": True}]
    result.stdout.fnmatch_lines(
        ["*data: politeness dataset replies (replies.jsonl): 3 items; left out 1 (1 empty reply)"])
    verdicts = read_verdicts(politeness.path / "reports" / "latest")
    assert {(v["kind"], v["result"]["polite"]) for v in verdicts} == {("polite", True), ("polite", False)}


def test_an_unknown_option_of_a_user_family_is_a_usage_error(politeness):
    result = politeness.runpytest_inprocess("--llm-option", "politeness.replys=replies.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown option politeness.replys*"])


def test_the_readme_family_without_its_data_option_says_which_option_to_set(politeness):
    result = politeness.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*set --llm-option politeness.replies=FILE*"])


def test_a_family_line_that_does_not_import_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio\nllm_families = nowhere:FAMILY\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*llm_families line 'nowhere:FAMILY': cannot load it (ModuleNotFoundError*"])


class _Options(FamilyOptions):
    pass


class _Result(Result):
    score: int


class _Section(Section):
    mean: float


class _Broken(Family):
    name = "broken"
    options = _Options
    results: ClassVar = {"score": _Result}
    section = _Section
    headline = ("median",)

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        return _Section(mean=0.0)


def test_the_start_up_check_names_what_a_family_lacks():
    with pytest.raises(ConfigError, match=r"family here: headline \('median',\) names a metric its section lacks"):
        check_family(_Broken(), "here")
    with pytest.raises(ConfigError, match=r"is not a llmjury\.family\.Family instance"):
        check_family(object(), "there")


class _Unvalidatable:
    """A plain class pydantic has no schema for (no arbitrary_types_allowed)."""


class _FiguresOfAnUnvalidatableType(Figures):
    value: _Unvalidatable


class _SectionWithAFieldPydanticCannotBuild(Section):
    figures: _FiguresOfAnUnvalidatableType | None = None


class _UnbuildableSection(_Broken):
    name = "unbuildable"
    section = _SectionWithAFieldPydanticCannotBuild
    headline = ()


def test_a_user_familys_models_that_pydantic_cannot_build_stop_the_run_at_start_up():
    """Result and section schemas are built at first use; a family not shipped with llmjury has them
    built by the start-up check, so a field of a type pydantic cannot validate is named there."""
    with pytest.raises(ConfigError, match=r"family here: _SectionWithAFieldPydanticCannotBuild: Unable to generate "
                                          r"pydantic-core schema for .*_Unvalidatable"):
        check_family(_UnbuildableSection(), "here")


def test_options_reject_unknown_keys_and_name_them():
    with pytest.raises(ConfigError, match=r"unknown option socratic\.dialogs"):
        discover()["socratic"].parse_options(option_lines({"dialogs": "3"}))


def test_the_built_in_families_keep_the_contract_and_are_found_by_entry_point():
    families = discover()
    assert set(families) >= {"socratic", "arena", "geval", "qa_quality"}
    for name, family in families.items():
        assert check_family(family, name) is family


def test_a_verdict_record_comes_back_with_its_typed_result():
    family = _Broken()
    record = {"case_id": "c", "family": "broken", "kind": "score", "judge": {"provider": "offline:heuristic"},
              "result": {"score": 3}}
    verdict = family.typed(record)
    assert isinstance(verdict.result, _Result) and verdict.result.score == 3
    assert verdict.record()["result"] == {"score": 3}
    with pytest.raises(ConfigError, match="has no verdict kind 'rank'"):
        family.typed({**record, "kind": "rank"})


def test_an_unrelated_project_sees_none_of_the_suites_markers(pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio\n")
    result = pytester.runpytest_inprocess("--markers")
    assert result.ret == 0
    text = result.stdout.str()
    assert "@pytest.mark.llmjury_pipeline" in text
    for suite_marker in ("cut_17", "year_1", "arena_mtbench", "system_", "criterion_", "socratic:"):
        assert suite_marker not in text, suite_marker


class _Rated(Family):
    name = "rated"
    options = _Options
    results: ClassVar = {"score": _Result}
    section = type("_RateSection", (Section,), {"__annotations__": {"rate": Metric, "note": str | None},
                                                "note": None})
    headline = ("rate",)

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        from llmjury.stats import proportion

        return self.section(rate=proportion(0, 0))


def test_a_metric_without_data_keeps_its_none_value_through_the_report(tmp_path):
    from llmjury.pricing import PriceTable
    from llmjury.reporting.reports import write_run
    from llmjury.results.aggregate import summarize

    family = _Rated()
    record = {"case_id": "c", "family": "rated", "kind": "score", "judge": {"provider": "offline:heuristic"},
              "result": None, "valid": False, "error": "unparseable: x"}
    summary = summarize([record], {"id": "r"}, {}, PriceTable.load(), {"rated": family})
    figures = summary.families["rated"].figures
    assert figures["rate"] == {"value": None, "low": None, "high": None, "n": 0, "method": "wilson"}
    assert "note" not in figures  # an absent figure is left out
    run_dir = write_run(tmp_path, summary, [record], [], {"rated": family})
    assert "| `rated.rate` | n/a | 0 | wilson |" in (run_dir / "summary.md").read_text()


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_a_malformed_data_file_stops_the_run_as_a_usage_error_before_any_test(politeness, workers):
    (politeness.path / "bad.jsonl").write_text('{"id": 1, "reply": "Please."}\n[1, 2]\n', encoding="utf-8")
    result = politeness.runpytest_inprocess("-n", workers, "--llm-option", "politeness.replies=bad.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.jsonl [[]item 1[]]: expected an object, got list*"])
    assert "passed" not in result.stdout.str()
    # The collection error is its one line, not a traceback through llmjury's loaders.
    result.stdout.fnmatch_lines(["DatasetError: *bad.jsonl [[]item 1[]]: expected an object, got list*"])
    assert "Traceback" not in result.stdout.str() and "llmjury/" not in result.stdout.str()


def test_loading_every_family_builds_no_schema_of_their_results_and_reports_until_used():
    """Every process (each xdist worker too) loads every family at start-up; the models of their
    results and reports build their validation schemas at first use, not then."""
    import subprocess
    import sys

    code = """
from llmjury.families import discover
from llmjury.family import Figures

def models(base):
    for sub in base.__subclasses__():
        yield sub
        yield from models(sub)

families = discover()
built = sorted(m.__qualname__ for m in models(Figures) if m.__pydantic_complete__)
arena = families["arena"].section
assert not arena.__pydantic_complete__
arena.model_validate(arena.model_construct().model_dump())  # first use: built, and validates
print(len(list(models(Figures))), built, arena.__pydantic_complete__)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) > 30 and out[1:] == ["[]", "True"]
