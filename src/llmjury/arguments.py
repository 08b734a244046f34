"""The `llmjury` command line's parser, strict about options.

argparse takes an option's unique prefix for the option (`--ou` for `--out`), so a typo that happens
to be a prefix is read as another option; an option its subcommand does not know is refused by the
top-level parser, under the top-level usage; and a missing required argument is reported before a
mistyped option, which is then never named. Here no option is abbreviated, and every option a
command does not know is refused by that command first, under its own usage, each with the option it
likely meant.
"""

from __future__ import annotations

import argparse
import difflib
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
        unknown = self.unknown_options(args or [])
        if unknown:
            self.refuse(unknown)
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.refuse(extras)
        return parsed, extras

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A choice not among an action's choices (a mistyped command) is named with the nearest one."""
        if action.choices is not None and value not in action.choices:
            hint = did_you_mean(str(value), [str(choice) for choice in action.choices])
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint}; choose from "
                                                 + ", ".join(map(repr, action.choices)))

    def unknown_options(self, args: Sequence[str]) -> list[str]:
        """The options among `args` this parser does not know; a parser of subcommands looks only
        before the subcommand (what follows is the subcommand's to judge)."""
        commands = self.has_commands()
        unknown = []
        for arg in args:
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-" or self._negative_number_matcher.match(arg):
                if commands:
                    break
                continue
            if arg.split("=", 1)[0] not in self._option_string_actions:
                unknown.append(arg)
        return unknown

    def has_commands(self) -> bool:
        """Does this parser take subcommands (the top level, `batch`)?"""
        return any(isinstance(action, argparse._SubParsersAction) for action in self._actions)

    def refuse(self, extras: Sequence[str]) -> NoReturn:
        """Exit 2 naming every argument not taken, an option with the one it was likely meant to be."""
        named = ", ".join(f"{arg!r}{self.meant(arg)}" for arg in extras)
        self.error(f"unrecognized argument{'s' if len(extras) > 1 else ''} {named}")

    def meant(self, arg: str) -> str:
        """` (did you mean '--x'?)` for an option: the one it begins, else the nearest by spelling."""
        if not arg.startswith("-"):
            return ""
        typed = arg.split("=", 1)[0]
        known = [option for option in self._option_string_actions if option.startswith("--")]
        begun = [option for option in known if option.startswith(typed)]
        if len(begun) == 1:
            return f" (did you mean {begun[0]!r}?)"
        by_name = {option.lstrip("-"): option for option in known}
        close = difflib.get_close_matches(typed.lstrip("-"), list(by_name), n=1)
        if close:
            return f" (did you mean {by_name[close[0]]!r}?)"
        if self.has_commands():
            return " (a command's options go after it: llmjury COMMAND --OPTION)"
        return ""
