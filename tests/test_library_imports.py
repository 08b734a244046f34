"""The library imports without the plugin: statistics, cases and judges load neither pytest nor the engine,
so a notebook or a script can use them alone; `import llmjury` itself loads its names on first use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pytest", "llmjury.running.engine", "llmjury.session", "llmjury.plugin")


@pytest.mark.parametrize("module", ["llmjury", "llmjury.stats", "llmjury.correlation", "llmjury.cases",
                                    "llmjury.judgement.judges"])
def test_a_library_module_imports_without_pytest_or_the_engine(module):
    probe = (f"import sys, json, {module}\n"
             f"print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == [], f"import {module} loaded {loaded}"


def test_the_public_names_are_there_when_first_used():
    probe = ("import llmjury\n"
             "names = {name: getattr(llmjury, name).__name__ for name in llmjury.__all__}\n"
             "import json; print(json.dumps(names))")
    names = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                      check=True).stdout)
    assert names["Case"] == "Case" and names["pipeline"] == "pipeline" and names["Verdict"] == "Verdict"
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        import llmjury

        _ = llmjury.Nope  # type: ignore[attr-defined]
