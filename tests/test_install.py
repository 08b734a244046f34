"""A non-editable install carries everything the library reads: the prompt templates (found in the
repository through the `src/llmjury/prompts` symlink) and the package data under `src/llmjury/data`;
`pip install -e '.[test]'` installs everything the tests import."""

from __future__ import annotations

import ast
import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "llmjury"


def shipped(folder: str) -> set[str]:
    """The files a wheel must hold for `llmjury/<folder>`, read through the symlink as a build does."""
    root = PACKAGE / folder
    return {f"llmjury/{folder}/{p.relative_to(root).as_posix()}" for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.e2e  # `pip wheel` builds the package in a process of its own
def test_the_wheel_holds_every_prompt_template_and_data_file(tmp_path):
    pytest.importorskip("setuptools")
    # Built from a copy (symlink kept as a symlink), so no build/ folder lands in the working tree.
    source = tmp_path / "source"
    shutil.copytree(REPO / "src", source / "src", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copytree(REPO / "prompts", source / "prompts")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    str(source), "-w", str(tmp_path)], check=True, cwd=tmp_path, timeout=300)
    (wheel,) = tmp_path.glob("llmjury-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    (info,) = {name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA")}
    assert info == f"llmjury-{importlib.metadata.version('llmjury')}.dist-info"  # the installed package's version
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()  # SPDX, not the table setuptools drops
    prompts, data = shipped("prompts"), shipped("data")
    assert any(name.endswith(".j2") for name in prompts)
    assert prompts - names == set()
    assert data - names == set()


def test_the_sdist_holds_the_library_and_not_the_suite_as_the_readme_says(tmp_path):
    # README "Quick start": the suite (evals/, fixtures/) is had by cloning, not from a package.
    pytest.importorskip("setuptools")
    source = tmp_path / "source"
    shutil.copytree(REPO, source, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".git", "reports", ".llmjury",
                                                  ".pytest_cache", "build", "dist"))
    subprocess.run([sys.executable, "-c", f"import setuptools.build_meta as b; b.build_sdist({str(tmp_path)!r})"],
                   check=True, cwd=source, timeout=300, capture_output=True)
    (sdist,) = tmp_path.glob("llmjury-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = {Path(name).parts[1] for name in archive.getnames() if len(Path(name).parts) > 1}
    assert "src" in top and "pyproject.toml" in top
    assert not top & {"evals", "fixtures", "tests", "tox.ini"}
    quick_start = (REPO / "README.md").read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "The suite lives in the repository, not in the package" in quick_start


def imported_modules(folder: Path) -> dict[str, set[str]]:
    """Top-level module name → the files under `folder` that import it (absolute imports only)."""
    modules: dict[str, set[str]] = {}
    for file in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                modules.setdefault(name.split(".")[0], set()).add(file.relative_to(REPO).as_posix())
    return modules


def installed_by(requirements: list[str]) -> set[str]:
    """The distributions these requirements install, with everything they require in turn."""
    seen: set[str] = set()
    walked: set[tuple[str, frozenset[str]]] = set()  # a distribution asked for again with other extras is walked again
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        if (name, frozenset(requirement.extras)) in walked:
            continue
        walked.add((name, frozenset(requirement.extras)))
        seen.add(name)
        try:
            needs = importlib.metadata.requires(requirement.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in needs:
            need = Requirement(text)
            wanted = [extra for extra in requirement.extras if need.marker and need.marker.evaluate({"extra": extra})]
            if need.marker is None or need.marker.evaluate({"extra": ""}) or wanted:
                need.marker = None
                pending.append(need)
    return seen


def test_every_extra_of_a_distribution_asked_for_twice_is_counted():
    """`llmjury[fast]` and `llmjury[postgres]` in one extra install both extras' packages."""
    installed = installed_by(["llmjury[fast]", "llmjury[postgres]"])
    assert {"numba", "psycopg"} <= installed


def test_the_test_extra_installs_every_module_the_tests_import():
    """A fresh `pip install -e '.[test]'` then `pytest tests` must not stop at an import (PyYAML was missing)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = installed_by(project["dependencies"] + project["optional-dependencies"]["test"])
    ours = {"llmjury"} | {p.stem for p in (REPO / "tests").rglob("*.py")} | {
        p.name for p in (REPO / "tests").rglob("*") if p.is_dir()}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        module: sorted(files)
        for module, files in imported_modules(REPO / "tests").items()
        if module not in sys.stdlib_module_names and module not in ours
        and not {canonicalize_name(d) for d in distributions.get(module, [module])} & installed
    }
    assert undeclared == {}, f"imported by the tests, installed by neither the dependencies nor [test]: {undeclared}"
