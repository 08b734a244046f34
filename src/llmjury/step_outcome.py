"""What the workflow's compare step makes of a run: its exit status, a GitHub annotation and the lead
of the step summary.

One place decides, from pytest's status, the run's `comparison` section and the baseline lookup:

* a failed gate is red (`::error::`, exit 10);
* a run that was **not compared** (no baseline found, expired, the judges differ, a judge with no
  key, or more of the baseline's cases dropped or changed than `--llm-compare-max-changed` allows,
  which makes its delta gates inconclusive) is never silently green: what it does is the one
  setting `LLMJURY_NOT_COMPARED`:
  `auto` (default) passes with a `::notice::` only when main has never kept a baseline (or none
  was looked for, a local run), and fails (exit 12) when main has one that could not be used;
  `pass` always passes with a notice; `fail` always fails;
* an inconclusive gate is a `::warning::` on a green step unless `LLMJURY_INCONCLUSIVE=fail` (exit 11).

Run as `python -m llmjury.step_outcome --status N --reports DIR --baseline DIR [--stderr FILE]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from llmjury.baseline_lookup import BaselineLookup, read_lookup
from llmjury.errors import ConfigError
from llmjury.model import RunSummary, read_summary
from llmjury.providers.keys import NO_KEY
from llmjury.results.case_changes import exceeded
from llmjury.results.gates import why_not

GATE_FAILED, GATE_INCONCLUSIVE, NOT_COMPARED, USAGE_ERROR = 10, 11, 12, 4
#: The reasons `auto` passes with a notice: nothing says main ever had a baseline to compare with.
NOTHING_TO_MISS = frozenset({"first", "absent"})
Policy = Literal["auto", "pass", "fail"]
POLICIES: dict[str, Policy] = {"auto": "auto", "pass": "pass", "fail": "fail"}
Level = Literal["notice", "warning", "error"]


@dataclass(frozen=True)
class StepOutcome:
    """The step's exit status, its annotation (level and words), and the summary's lead lines."""

    status: int
    level: Level | None
    message: str
    lead: list[str]


def decide(status: int, summary: RunSummary | None, lookup: BaselineLookup | None, stderr: str = "", *,
           not_compared: Policy = "auto", inconclusive: Literal["neutral", "fail"] = "neutral") -> StepOutcome:
    """The compare step's outcome (see the module's docstring)."""
    lead = [f"**Baseline**: {lookup.origin()}", ""] if lookup is not None and lookup.found and lookup.origin() else []
    no_key = next((line.split("ERROR: ", 1)[-1].strip() for line in stderr.splitlines() if NO_KEY in line), None)
    if status == USAGE_ERROR and no_key:
        return _not_compared("no_key", no_key, not_compared, lead)
    comparison = summary.comparison if summary is not None else None
    if status == GATE_FAILED:
        return StepOutcome(status, "error", "a gate failed: see the Decision in the step summary (exit 10)", lead)
    if comparison is not None and not comparison.get("compared", True):
        reason = str(comparison.get("not_compared") or "judges_differ")
        found = _not_compared(reason, why_not(comparison), not_compared, lead)
        return found if status in (0, NOT_COMPARED, GATE_INCONCLUSIVE) else StepOutcome(
            status, "error", f"{found.message}; the run itself failed (exit {status})", found.lead)
    moved = [why for name, family in sorted((comparison or {}).get("families", {}).items())
             if isinstance(family, dict) and (why := exceeded(family)) is not None]
    if moved and status in (0, GATE_INCONCLUSIVE):  # what is left of the baseline's cases is not the same test
        first = moved[0].split(": what is left")[0]
        return _not_compared("cases_changed", first, not_compared, lead)
    if status == NOT_COMPARED:  # no comparison section, yet a delta gate said so
        return _not_compared("absent", "no comparison in this run", not_compared, lead)
    if status == GATE_INCONCLUSIVE:
        message = "a gate is inconclusive: the data cannot tell yet (see the Decision in the step summary)"
        return StepOutcome(status if inconclusive == "fail" else 0, "warning", message, lead)
    return StepOutcome(status, "error" if status else None, "" if not status else f"the run failed (exit {status})",
                       lead)


def _not_compared(reason: str, why: str, policy: Policy, lead: list[str]) -> StepOutcome:
    """Pass with a notice or fail with an error, as the setting says for this reason."""
    passes = policy == "pass" or (policy == "auto" and reason in NOTHING_TO_MISS)
    message = f"not compared with a baseline: {why}"
    setting = f" (LLMJURY_NOT_COMPARED={policy})"
    block = [f"> **Not compared** ({reason}): {why}. "
             + ("The step passes: there is no baseline to miss yet." if passes
                else "The step fails: a pull request is never passed without a comparison.") + setting, ""]
    return StepOutcome(0 if passes else NOT_COMPARED, "notice" if passes else "error", message + setting,
                       lead + block)


def annotation(level: Level, message: str, github: bool) -> str:
    """A GitHub Actions annotation on the run's page, a plain line elsewhere."""
    return f"::{level} title=llmjury::{message}" if github else f"llmjury {level}: {message}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m llmjury.step_outcome", description=__doc__.split("\n")[0])
    parser.add_argument("--status", type=int, required=True, help="pytest's exit status")
    parser.add_argument("--reports", type=Path, default=Path("reports"))
    parser.add_argument("--baseline", type=Path, default=Path("baseline"))
    parser.add_argument("--stderr", type=Path, help="the run's standard error, to recognise a judge with no key")
    args = parser.parse_args(argv)
    given = os.environ.get("LLMJURY_NOT_COMPARED") or "auto"
    if given not in POLICIES:
        print(f"LLMJURY_NOT_COMPARED={given!r}: write auto, pass or fail", file=sys.stderr)
        return 2
    policy = POLICIES[given]
    inconclusive: Literal["neutral", "fail"] = "fail" if os.environ.get("LLMJURY_INCONCLUSIVE") == "fail" else "neutral"
    summary_file = args.reports / "latest" / "summary.json"
    try:
        lookup = read_lookup(args.baseline) if args.baseline.is_dir() else None
        summary = read_summary(summary_file.read_text(encoding="utf-8"), str(summary_file)) \
            if summary_file.is_file() and args.status != USAGE_ERROR else None
    except ConfigError as exc:
        print(f"llmjury: {exc}", file=sys.stderr)
        return 2
    stderr = args.stderr.read_text(encoding="utf-8", errors="replace") if args.stderr and args.stderr.is_file() else ""
    found = decide(args.status, summary, lookup, stderr, not_compared=policy, inconclusive=inconclusive)
    page = os.environ.get("GITHUB_STEP_SUMMARY")
    if page and found.lead:
        with open(page, "a", encoding="utf-8") as out:
            out.write("\n".join(found.lead) + "\n")
    if found.level is not None and found.message:
        print(annotation(found.level, found.message, bool(os.environ.get("GITHUB_ACTIONS"))),
              file=sys.stdout if os.environ.get("GITHUB_ACTIONS") else sys.stderr)
    return found.status


if __name__ == "__main__":
    sys.exit(main())
