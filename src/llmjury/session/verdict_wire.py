"""A test's verdicts between xdist's processes as one JSON text.

A teardown report carries its test's verdict records (llmjury.session.runner) from a worker to the
controller. execnet, which carries the report, writes and reads a nested dict key by key in Python:
about 150 microseconds of CPU a verdict between the two processes, where the same record as JSON
text costs a tenth of that (the json module's C code, and execnet writes a text whole). In every
process the report carries the records themselves (`item_verdicts.carried`); only the wire holds the text.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

import pytest

from llmjury.session.item_verdicts import REPORT_KEY


class VerdictWire:
    """Registered in every process: a worker serializes its reports, the controller reads them back."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any
                                      ) -> Generator[None, dict[str, Any] | None, dict[str, Any] | None]:
        """The records as JSON text in the report's serialized form (a copy of the report's attributes)."""
        data = yield
        if data is not None and isinstance(data.get(REPORT_KEY), list):
            data[REPORT_KEY] = json.dumps(data[REPORT_KEY])
        return data

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: dict[str, Any]
                                        ) -> Generator[None, Any, Any]:
        """The records back from their JSON text, before pytest builds the report."""
        if isinstance(data.get(REPORT_KEY), str):
            data[REPORT_KEY] = json.loads(data[REPORT_KEY])
        return (yield)
