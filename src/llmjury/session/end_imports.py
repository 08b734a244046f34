"""The session end's modules, imported ahead by xdist's controller while its workers run.

The controller imports what it reports with (the statistics over numpy, the HTML pages over jinja2)
only at the session end, where nobody waits for anything but the report: a few tenths of a second of
CPU after the last test. While the workers run, the controller idles between their reports, so a
thread of its own imports those modules then: once the first test has reported, not earlier, when
the workers start up and need the cores. The session end finds them imported, or waits for the
thread's import of one to finish (Python's import lock); it never imports one twice. At `-n 0` the
run's own threads would have to take turns with it, so there it does nothing.
"""

from __future__ import annotations

import importlib
import threading

import pytest

#: What the session end imports (llmjury.session.controller, llmjury.reporting.reports), its heavy
#: third-party modules with them.
SESSION_END_MODULES = ("llmjury.results.aggregate", "llmjury.reporting.reports", "llmjury.reporting.report_html")


class SessionEndImports:
    """Registered in the reporting process when xdist is installed; active only under its controller."""

    def __init__(self, modules: tuple[str, ...] = SESSION_END_MODULES) -> None:
        self.modules = modules
        self.thread: threading.Thread | None = None
        self.controller = False

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Is this xdist's controller, with workers to wait on (its `dsession` plugin runs only with -n > 0)?"""
        self.controller = session.config.pluginmanager.has_plugin("dsession")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The first report of a worker's: the workers run, the controller waits on them."""
        if self.controller and self.thread is None:
            self.thread = threading.Thread(target=self.load, name="llmjury-end-imports", daemon=True)
            self.thread.start()

    def load(self) -> None:
        for name in self.modules:
            try:
                importlib.import_module(name)
            except Exception:  # the session end imports it again, and says there why it fails
                continue

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """A short run may end before the imports do: none is left half done at the interpreter's exit."""
        if self.thread is not None:
            self.thread.join()
