"""Headline paths: the metrics of a family's section that reports lead with and comparisons diff.

A path walks the section (`win_rate`, `rating`, `judge_validity.pooled`); a `*` step stands for
any key, so a family whose keys are named by its data or its tests declares them once:
`compare.*.win_rate` is the win rate of every test of the `custom` family. A path that stops at
a table (`rating`) names every metric under it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

WILDCARD = "*"
#: A step a gate's path may write after a dot; any other (`gpt-3.5-turbo`, `recorded:autoj-13b`) is bracketed.
_PLAIN_STEP = re.compile(r"[A-Za-z_]\w*")
Metric = dict[str, Any]


def is_metric(node: object) -> bool:
    """A metric is a dict with a value and its n."""
    return isinstance(node, Mapping) and "value" in node and "n" in node


def expand(section: Mapping[str, Any], headline: Iterable[str]) -> list[tuple[tuple[str, ...], Metric]]:
    """Every metric the headline paths name in a section, with the steps of its path, in path order."""
    found: list[tuple[tuple[str, ...], Metric]] = []
    for path in headline:
        found += _walk(section, tuple(path.split(".")), ())
    return found


def _walk(node: Any, pattern: tuple[str, ...], steps: tuple[str, ...]) -> list[tuple[tuple[str, ...], Metric]]:
    if not pattern:
        return _leaves(node, steps)
    if not isinstance(node, Mapping):
        return []
    head, rest = pattern[0], pattern[1:]
    keys = list(node) if head == WILDCARD else [head] if head in node else []
    return [leaf for key in keys for leaf in _walk(node[key], rest, (*steps, str(key)))]


def _leaves(node: Any, steps: tuple[str, ...]) -> list[tuple[tuple[str, ...], Metric]]:
    if is_metric(node):
        return [(steps, dict(node))]
    if not isinstance(node, Mapping):
        return []
    return [leaf for key, child in node.items() for leaf in _leaves(child, (*steps, str(key)))]


def covers(headline: Iterable[str], steps: Sequence[str]) -> bool:
    """Does a headline path name this metric (the path, or a table it stops at)?"""
    for path in headline:
        pattern = path.split(".")
        if len(steps) >= len(pattern) and all(p in (WILDCARD, s) for p, s in zip(pattern, steps, strict=False)):
            return True
    return False


def path_text(steps: Sequence[str]) -> str:
    """A metric's path as a gate writes it (and the gate parser reads it back): `win_rate`,
    `rating[gpt-3.5-turbo]`, `recorded[recorded:autoj-13b].swap_consistency`."""
    return steps[0] + "".join(f".{step}" if _PLAIN_STEP.fullmatch(step) else f"[{step}]" for step in steps[1:])
