"""The import graph keeps its direction: each module on its floor, the core naming no family, no cycle.

The contracts live in pyproject's `[tool.importlinter]` (also run by `.ci/run` as `lint-imports`);
these tests make a broken one fail `pytest tests`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import numpy as np
from importlinter.cli import lint_imports
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

REPO = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of modules that import one another in a ring, a package and its own modules included
    (the sibling contract sees only cycles between modules of one package)."""
    modules = sorted(graph.modules)
    index = {module: i for i, module in enumerate(modules)}
    edges = [(index[a], index[b]) for a in modules for b in graph.find_modules_directly_imported_by(a)]
    rows, cols = zip(*edges, strict=True)
    matrix = csr_array((np.ones(len(edges)), (rows, cols)), shape=(len(modules), len(modules)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups = [[m for m, label in zip(modules, labels, strict=True) if label == group] for group in set(labels)]
    return sorted(group for group in groups if len(group) > 1)


def graph_without_known_cycles() -> grimp.ImportGraph:
    """llmjury's import graph less the imports the acyclic contract still ignores (each named there)."""
    graph = grimp.build_graph("llmjury", cache_dir=None)
    for contract in CONTRACTS:
        if contract["type"] == "acyclic_siblings":
            for line in contract.get("ignore_imports", []):
                importer, _, imported = line.partition(" -> ")
                graph.remove_import(importer=importer, imported=imported)
    return graph


def test_the_import_contracts_hold(capsys):
    assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True) == 0, (
        capsys.readouterr().out)


def test_no_module_imports_itself_back_through_others():
    assert cycles(graph_without_known_cycles()) == []


def test_an_import_closing_a_ring_is_found_with_every_module_on_it():
    graph = graph_without_known_cycles()
    graph.add_import(importer="llmjury.errors", imported="llmjury.judgement.jury")  # jury -> chat -> errors
    assert any({"llmjury.errors", "llmjury.judgement.jury", "llmjury.chat"} <= set(group) for group in cycles(graph))


def test_an_engine_importing_the_progress_display_breaks_the_floors_contract(tmp_path):
    """The defect the meter protocol removed: running calls reaching up to the pytest integration."""
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    shutil.copytree(REPO / "src" / "llmjury", tmp_path / "src" / "llmjury",
                    ignore=shutil.ignore_patterns("__pycache__"))
    engine = tmp_path / "src" / "llmjury" / "running" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\nfrom llmjury.session.progress import Meter  # noqa\n",
                      encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                          "sys.exit(lint_imports_command())", "--no-cache"],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path / "src")},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "llmjury.running is not allowed to import llmjury.session:" in run.stdout
    assert "- llmjury.running.engine -> llmjury.session.progress" in run.stdout
