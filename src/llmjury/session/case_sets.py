"""Case sets into tests: a test names a family's declared case set, and the plugin loads it with the
run's parsed options and parametrizes the test over its cases, with the set's pipeline on each.

So an eval module holds assertions only: it imports no family internals and no plugin helper, and
the loading code lives in the family, beside the data formats it reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from llmjury.cases import PIPELINE_MARK, NoCases, generate
from llmjury.errors import ConfigError
from llmjury.family import CaseLoad, CaseSet, Family, FamilyOptions, OptionsT
from llmjury.hints import did_you_mean
from llmjury.running.settings import Settings

CASE_SET_MARK = "llmjury_case_set"
#: Every family's options, parsed once at start-up (defaults where none was given), by family name.
OPTIONS = pytest.StashKey[Mapping[str, FamilyOptions]]()


def case_set(family: str, name: str) -> pytest.MarkDecorator:
    """Parametrize a test over the case set `name` that `family` declares; its `outcome` is the
    set's pipeline run on each case."""
    mark: pytest.MarkDecorator = getattr(pytest.mark, CASE_SET_MARK)
    return mark.with_args(family, name)


def parsed_options(config: pytest.Config, family: Family[OptionsT, Any]) -> OptionsT:
    """`family`'s options as parsed at start-up: the one place they are read from after that."""
    options = config.stash[OPTIONS][family.name]
    if not isinstance(options, family.options):
        raise TypeError(f"family {family.name!r}: stashed options are {type(options).__name__}, "
                        f"not {family.options.__name__}")
    return options


class CaseSets:
    """The plugin's parametrizer of `@llmjury.case_set` tests. A case set two tests name (or two sets
    sharing a loader) is loaded once per process."""

    def __init__(self, families: Mapping[str, Family[Any, Any]], settings: Settings) -> None:
        self.families, self.settings = families, settings
        self.loaded: dict[tuple[str, Callable[..., CaseLoad]], CaseLoad] = {}

    def pytest_configure(self, config: pytest.Config) -> None:
        """Registers the marker (a historic hook: called though this plugin registers late)."""
        config.addinivalue_line("markers", f"{CASE_SET_MARK}(family, name): the family case set a test runs over")

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrizes a test naming a case set; an undeclared name stops the run, naming the declared ones."""
        marker = metafunc.definition.get_closest_marker(CASE_SET_MARK)
        if marker is None:
            return
        where = f"{metafunc.definition.nodeid}: @llmjury.case_set{marker.args!r}"
        family, case_set = self.declared(where, *marker.args)
        if metafunc.definition.get_closest_marker(PIPELINE_MARK) is not None:
            raise ConfigError(f"{where}: the case set declares the pipeline; drop @llmjury.pipeline")
        key = (family.name, case_set.load)
        try:
            if key not in self.loaded:
                self.loaded[key] = case_set.load(parsed_options(metafunc.config, family), self.settings)
        except NoCases as reason:  # a visible skip naming what to set, not an error stopping other sets
            skip = pytest.param(None, marks=pytest.mark.skip(reason=str(reason)), id="no-file")
            metafunc.parametrize("case", [skip], indirect=["case"])
            return
        cases, reports = self.loaded[key]
        if case_set.select is not None:
            cases = [case for case in cases if case_set.select(case)]
        pipeline: pytest.MarkDecorator = getattr(pytest.mark, PIPELINE_MARK)
        marks = [] if case_set.pipeline is None else [pipeline.with_args(case_set.pipeline)]
        generate(metafunc, cases, loaded=reports, marks=marks)

    def declared(self, where: str, family_name: str, name: str) -> tuple[Family[Any, Any], CaseSet[Any]]:
        """The family and case set a test names, or a ConfigError naming what is declared."""
        family = self.families.get(family_name)
        if family is None:
            raise ConfigError(f"{where}: unknown family {family_name!r}{did_you_mean(family_name, self.families)}; "
                              f"known families: {', '.join(sorted(self.families))}")
        sets = family.case_sets()
        if name not in sets:
            raise ConfigError(f"{where}: family {family.name!r} declares no case set {name!r}"
                              f"{did_you_mean(name, sets)}; it declares {', '.join(sorted(sets)) or 'none'}")
        return family, sets[name]
