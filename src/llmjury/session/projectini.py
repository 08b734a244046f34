"""The project's pytest configuration, read outside a pytest run: `llmjury compare` must know the
families a suite registers in its ini (`llm_families`) exactly as the plugin does, or it would
judge a user family's run as having no metrics.

The ini file is found where pytest finds it (pytest's own `locate_config`, from the working
directory), and the families are loaded by the plugin's loader, `families.discover`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from llmjury.errors import ConfigError
from llmjury.families import discover
from llmjury.family import AnyFamily


@dataclass(frozen=True)
class ProjectFamilies:
    """The families a project's runs may hold, and the ini file that named the extra ones."""

    families: dict[str, AnyFamily]
    inifile: Path | None


def project_families(start: Path) -> ProjectFamilies:
    """Installed families plus those of the `llm_families` lines of the ini pytest would read when
    started in `start`, importable from its `pythonpath` entries and its folder as in a run."""
    from _pytest.config.findpaths import locate_config  # pytest's own search, not a copy of it

    try:
        try:
            _, inifile, ini, *_ = locate_config(start, [])
        except TypeError:  # pytest before 8.1 takes the arguments alone
            _, inifile, ini, *_ = locate_config([start])  # type: ignore[call-arg, arg-type]  # pytest 8.0
    except Exception as exc:  # a malformed ini: pytest raises its own UsageError
        raise ConfigError(f"the pytest configuration under {start} cannot be read ({exc})") from None
    lines = _lines(ini.get("llm_families"))
    if inifile is not None and lines:
        root = inifile.parent
        for entry in reversed(_lines(ini.get("pythonpath"), paths=True)):
            _prepend(root / entry)
        if str(root) not in sys.path:
            sys.path.append(str(root))
    return ProjectFamilies(discover(lines), inifile)


def _lines(entry: object, *, paths: bool = False) -> list[str]:
    """An ini list as pytest reads it: a list in TOML; in an ini file one item a line (`linelist`),
    or separated by any whitespace (`paths`)."""
    value = getattr(entry, "value", entry)  # pytest 9 wraps values with their origin
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split() if paths else str(value).splitlines()
    return [str(item).strip() for item in items if str(item).strip()]


def _prepend(path: Path) -> None:
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
