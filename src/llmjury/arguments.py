"""The `llmjury` command line's parser, strict about options.

argparse takes an option's unique prefix for the option (`--ou` for `--out`), so a typo that happens
to be a prefix is read as another option; and an option its subcommand does not know is refused by
the top-level parser, under the top-level usage. Here no option is abbreviated, and an unknown option
is refused by its own subcommand, under that subcommand's usage, with the nearest option it knows.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from llmjury.hints import did_you_mean


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose options must be given whole; its subcommands are Parsers too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.unrecognized(extras)
        return parsed, extras

    def unrecognized(self, extras: Sequence[str]) -> NoReturn:
        """Exit 2 naming the first argument not taken, and the option it was likely meant to be."""
        first = extras[0]
        hint = did_you_mean(first.split("=", 1)[0], self._option_string_actions) if first.startswith("-") else ""
        self.error(f"unrecognized argument {first!r}{hint}" + (f" (and {len(extras) - 1} more)" if extras[1:] else ""))
