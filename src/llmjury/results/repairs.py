"""How each judge's verdicts were reached: scored directly, scored after a repair call (the judge,
whose answer was ambiguous, was asked for its decision alone), or left unscored, by cause
(`llmjury.results.causes`: no decision, ambiguous, out of scale, truncated, filtered, refused, failed,
empty); and how its scored runs were read, from a schema's field (a verdict's decision, a structured
answer) or as text.

A repaired verdict counts like any other in a family's figures; these counts let a reader see how
much of a result rests on repairs and why the rest was lost, and gate on it
(`FAMILY.repairs[JUDGE].repaired_rate`, `FAMILY.repairs[JUDGE].unscored.truncated`)."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from llmjury.family import Figures, Metric
from llmjury.judgement.verdicts import ASSERTIONS, Verdict

#: Verdicts no judge was asked for, left out: labels people gave (`human:...`, as the families
#: name them), a family's own rules (`rules:...`) and a test's own assertions.
NOT_JUDGED = ("human:", "rules:", ASSERTIONS)
HEADER = ("judge", "verdicts", "scored directly", "scored after a repair", "unscored after a repair",
          "unscored (by cause)", "runs read (schema/text)")


class JudgeRepairs(Figures):
    """One judge's verdicts in one family, by how their decision was reached."""

    verdicts: int
    #: Scored without a repair call.
    direct: int
    #: Scored, with at least one run decided by a repair call.
    repaired: int
    #: Unscored, by cause (`llmjury.results.causes.CAUSES`, as the core's `unscored_causes`).
    unscored: dict[str, int]
    #: The share of this judge's verdicts that needed a repair, with its Wilson interval.
    repaired_rate: Metric
    #: Unscored although a repair call asked for the decision alone (counted in `unscored` too).
    repair_failed: int = 0
    #: How its scored runs were read: from a schema's field (`schema`: a verdict's decision, a structured
    #: answer) or as text.
    read: dict[str, int] = Field(default_factory=dict)


def repairs_by_judge(verdicts: Sequence[Verdict]) -> dict[str, JudgeRepairs]:
    """The counts per judge (`judge.provider`), judges in name order; verdicts no judge was asked
    for (`NOT_JUDGED`) are left out."""
    # Report time only: the families' section models import this module at start-up, numpy must wait.
    from llmjury.results.causes import counted_cause, ordered
    from llmjury.stats import proportion

    by_judge: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        if not verdict.judge.provider.startswith(NOT_JUDGED):
            by_judge.setdefault(verdict.judge.provider, []).append(verdict)
    out = {}
    for judge, mine in sorted(by_judge.items()):
        repaired = sum(v.valid and v.repaired > 0 for v in mine)
        unscored = Counter(counted_cause(v.cause, v.error) for v in mine if not v.valid)
        read: Counter[str] = Counter()
        for v in mine:
            read.update(v.read)
        out[judge] = JudgeRepairs(verdicts=len(mine), direct=sum(v.valid for v in mine) - repaired, repaired=repaired,
                                  unscored=ordered(dict(unscored)),
                                  repaired_rate=Metric(**proportion(repaired, len(mine))),
                                  repair_failed=sum(not v.valid and v.repair_failed > 0 for v in mine),
                                  read=dict(sorted(read.items())))
    return out


def rows(repairs: Mapping[str, JudgeRepairs]) -> list[tuple[str, ...]]:
    """One text row per judge, in `HEADER`'s order."""
    return [(judge, str(r.verdicts), str(r.direct), str(r.repaired), str(r.repair_failed),
             f"{sum(r.unscored.values())}" + (f" ({_causes(r.unscored)})" if r.unscored else ""),
             f"{r.read.get('schema', 0)}/{r.read.get('text', 0)}" if r.read else "-")  # "-": not recorded
            for judge, r in repairs.items()]


def markdown(repairs: Mapping[str, JudgeRepairs]) -> str:
    """The counts as a Markdown table for `summary.md` (nothing when no judge recorded a verdict)."""
    if not repairs:
        return ""
    cell = _md_cell
    lines = ["How verdicts were reached:", "", "| " + " | ".join(HEADER) + " |", "|---" * len(HEADER) + "|"]
    lines += ["| " + " | ".join((f"`{cell(judge)}`", *map(cell, rest))) + " |" for judge, *rest in rows(repairs)]
    return "\n".join(lines)


def with_counts(text: str, repairs: Mapping[str, JudgeRepairs]) -> str:
    """A family's own Markdown with the counts table after it (either may be empty)."""
    return "\n\n".join(part for part in (text, markdown(repairs)) if part)


def html_table(section: Mapping[str, Any]) -> str:
    """The counts of a family's summary section as an HTML table for `report.html` (nothing when
    the family records none)."""
    repairs = {judge: JudgeRepairs.model_validate(r) for judge, r in (section.get("repairs") or {}).items()}
    if not repairs:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows(repairs))
    return f'<table class="repairs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _causes(unscored: Mapping[str, int]) -> str:
    return ", ".join(f"{cause or 'unknown'}: {count}" for cause, count in unscored.items())


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")
