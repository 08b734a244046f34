"""The socratic family's data files: where each is found and what it is called.

A file is the one its option names, else the copy a suite ships under its data root (`llm_data`);
its name (the `*_name` option, else the file's stem) goes into case ids, markers and report labels.
"""

from __future__ import annotations

from pathlib import Path

from llmjury.errors import ConfigError
from llmjury.families.socratic.options import DATASETS, NAME, SocraticOptions
from llmjury.running.settings import Settings


def locate(dataset: str, options: SocraticOptions, settings: Settings) -> Path | None:
    """The file dataset `dataset` is read from, or None when it has neither an option nor a default.

    A dataset with a shipped default but no data root is a ConfigError naming the option to set."""
    declared = next(d for d in DATASETS if d.name == dataset)
    given = getattr(options, declared.option)
    if given:
        return Path(given)
    if declared.default is None:
        return None
    if settings.data_root is None:
        raise ConfigError(f"{NAME} dataset {dataset!r}: no file; set --llm-option {NAME}.{declared.option}=PATH "
                          f"or point llm_data (--llm-data) at a folder holding {declared.default}")
    return settings.data_root / declared.default


def dataset_name(dataset: str, options: SocraticOptions, path: Path) -> str:
    """The name `dataset` is reported under: its `*_name` option, else the file's stem (the shipped
    MathDial split, `test.jsonl`, is called `mathdial`)."""
    given = getattr(options, f"{dataset}_name")
    if given:
        return str(given)
    declared = next(d for d in DATASETS if d.name == dataset)
    return path.stem if getattr(options, declared.option) or dataset != "mathdial" else "mathdial"
