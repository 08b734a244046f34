"""Families installed as distributions (`llmjury.families` entry points) are found, and their entry points
are read once for a given import path."""

from __future__ import annotations

import sys

import pytest

from llmjury import families
from llmjury.families import discover

PACKAGE = """
from llmjury.families.socratic import FAMILY as SOCRATIC


class Probe(type(SOCRATIC)):
    name = "installed_probe"


FAMILY = Probe()
"""


@pytest.fixture
def installed_probe(tmp_path, monkeypatch):
    """A distribution on a folder of the import path, as pip installs one: its module and its dist-info."""
    (tmp_path / "llmjury_installed_probe.py").write_text(PACKAGE)
    info = tmp_path / "llmjury_installed_probe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llmjury-installed-probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[llmjury.families]\nprobe = llmjury_installed_probe:FAMILY\n")
    monkeypatch.delitem(sys.modules, "llmjury_installed_probe", raising=False)
    return tmp_path


def test_a_family_installed_on_a_new_folder_of_the_path_is_found(installed_probe, monkeypatch):
    assert "installed_probe" not in discover()
    monkeypatch.syspath_prepend(installed_probe)
    assert discover()["installed_probe"].name == "installed_probe"


def test_the_entry_points_are_read_once_for_a_path(monkeypatch, installed_probe, request):
    reads = []
    monkeypatch.setattr(families, "entry_points", lambda **kw: reads.append(kw) or ())
    families.installed_entry_points.cache_clear()
    request.addfinalizer(families.installed_entry_points.cache_clear)  # later tests read the real ones again
    discover()
    discover()
    assert reads == [{"group": "llmjury.families"}]
    monkeypatch.syspath_prepend(installed_probe)
    discover()
    assert len(reads) == 2
