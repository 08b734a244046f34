"""Collection: cases become tests, the `--llm-sample` subset is drawn, and what only the selected
tests can tell is checked before planning makes a call.

Every process that collects does this (an xdist worker, or the only process); a worker hands a
start-up error on through `workeroutput` (`STARTUP_ERROR`), and the controller raises it there.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Iterable

import pytest

from llmjury.cases import CASES_MARK, PIPELINE_MARK, generate
from llmjury.errors import ConfigError
from llmjury.family import AnyFamily
from llmjury.judgement.verdicts import CUSTOM
from llmjury.results.gate_checks import check_selection
from llmjury.results.gates import Gate
from llmjury.running.settings import Settings
from llmjury.session.item_verdicts import case_of, own_test

STARTUP_ERROR = "llmjury_startup_error"  # a worker's start-up error, in its workeroutput


def selected_families(items: Iterable[pytest.Item], known: Collection[str]) -> tuple[set[str], set[str]] | None:
    """The families the selected tests record verdicts under, and the families only your own cases name
    (a test that judges with `jury`, or asserts, records under `custom`, whatever its case's family);
    None when a test records verdicts of its own making (`record_verdict` outside a pipeline), whose
    family start-up cannot know."""
    families: set[str] = set()
    labels: set[str] = set()
    for item in items:
        names = getattr(item, "fixturenames", ())
        case = case_of(item)
        if case is not None:
            (labels if own_test(item) and case.family not in known else families).add(case.family)
        if "jury" in names or (case is not None and own_test(item)):  # own tests record `check` verdicts
            families.add(CUSTOM)
        if "record_verdict" in names and item.get_closest_marker(PIPELINE_MARK) is None:
            return None
    return families, labels - families


def startup_error(config: pytest.Config, message: str) -> pytest.UsageError:
    """A usage error for `message`, handed on to xdist's controller first when this is a worker."""
    output: dict[str, object] | None = getattr(config, "workeroutput", None)
    if output is not None:
        output[STARTUP_ERROR] = message
    return pytest.UsageError(message)


class GateSelection:
    """Once collection has selected the tests, every gate's family must have a case among them.

    `tryfirst`, so it runs before planning makes any call. xdist's controller never collects, so a
    worker hands its error on through `workeroutput` and `WorkerStartupErrors` raises it there."""

    def __init__(self, config: pytest.Config, gates: list[Gate], families: dict[str, AnyFamily]) -> None:
        self.config, self.gates, self.known = config, gates, set(families)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The tests are selected: a gate on a family none of them judges can never pass."""
        selected = selected_families(session.items, self.known) if self.gates else None
        if selected is None:
            return
        try:
            check_selection(self.gates, *selected, self.known)
        except ConfigError as exc:
            raise startup_error(self.config, str(exc)) from None


class DataErrors:
    """A dataset that cannot be loaded (a malformed record, an unknown label, no usable item) is
    found while the eval modules generate their cases, at collection. It stops the run as a usage
    error naming the file, item and cause (exit 4), at any `-n` and before planning makes a call,
    instead of a collection error that xdist's workers run past. Other collection errors (a test
    module's own bug) keep pytest's handling."""

    ERROR = re.compile(r"^(?:E\s+)?(?:llmjury\.errors\.)?(DatasetError|ConfigError): (.+)$", re.MULTILINE)

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.errors: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module's collection failed: keep a dataset's or configuration's error, named, and show
        it as its one line (the traceback through llmjury's loaders tells a user nothing more);
        first, so an xdist worker sends the controller the short form."""
        if report.failed:
            found = self.ERROR.findall(str(report.longrepr))
            if found:
                kind, message = found[-1]
                self.errors.append(message.strip())
                report.longrepr = f"{kind}: {message.strip()}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Collection is over: stop the run on the data errors it found, before planning starts."""
        if self.errors:
            raise startup_error(self.config, "; ".join(dict.fromkeys(self.errors)))


class CaseParameters:
    """`llmjury.parametrize(cases)` rides on a marker until the test is generated."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize here, where the run's configuration is at hand to register the cases' markers."""
        marker = metafunc.definition.get_closest_marker(CASES_MARK)
        if marker is not None:
            generate(metafunc, marker.args[0])

class Sampling:
    """`--llm-sample N`: a seeded random subset of the case tests, the same on every worker."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """trylast: draw from what `-k` and `-m` left."""
        if self.settings.sample is None:
            return
        cased = [item for item in items if case_of(item) is not None]
        rng = random.Random(self.settings.seed)
        keep = set(rng.sample(sorted(i.nodeid for i in cased), min(self.settings.sample, len(cased))))
        dropped = [i for i in cased if i.nodeid not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if i.nodeid in keep or case_of(i) is None]
