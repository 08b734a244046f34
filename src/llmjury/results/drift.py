"""The judge's drift: how often the canary's decisions flipped since the baseline, with an interval.

`judge.drift.flip_rate` is a rate with its Wilson interval, gateable like any metric
(`judge.drift.flip_rate.low<=0.02`). When its low bound is above MOVED, the comparison with the
baseline says the judge moved: its differences may be the judge's, not the pull request's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmjury.judgement.canary import Asked

#: The flip rate's low bound above which a comparison says the judge moved.
MOVED = 0.02
#: Flipped canary requests listed in the summary.
LISTED = 20


def drift_section(asked: Sequence[Asked], size: int) -> dict[str, Any]:
    """The summary's `judge` section: the canary's flip rate, what was asked and what flipped."""
    from llmjury.stats import proportion  # numpy loads where the report is built, not at start-up

    answered = [a for a in asked if a.flipped is not None]
    flips = [a for a in answered if a.flipped]
    rate = proportion(len(flips), len(answered))
    rate["method"] = f"{rate['method']}: decisions flipped of canary requests re-asked"
    low = rate.get("low")
    return {"drift": {
        "flip_rate": rate, "canary": size, "asked": len(asked), "answered": len(answered),
        "moved": low is not None and low > MOVED,
        "judges": sorted({a.judge for a in asked}),
        "flipped": [{"key": a.stored.key[:16], "task": a.stored.task, "baseline": a.stored.decision,
                     "now": a.decision} for a in flips[:LISTED]],
        "unanswered": [{"key": a.stored.key[:16], "error": a.error} for a in asked if a.flipped is None][:LISTED],
    }}


def drift_lines(section: dict[str, Any] | None) -> list[str]:
    """What the terminal says of the judge's drift (after the comparison)."""
    if not section or "drift" not in section:
        return []
    drift = section["drift"]
    if "error" in drift:
        return [f"judge drift: the canary could not be asked ({drift['error']})"]
    rate = drift["flip_rate"]
    if rate["value"] is None:
        if not drift["asked"]:
            return ["judge drift: none of the baseline's judge requests is in this run's store, so no canary was "
                    "asked (run on the baseline's store)"]
        return [f"judge drift: no canary request could be compared ({drift['asked']} asked, none answered)"]
    interval = "" if rate["low"] is None else f" [{rate['low']:.3g}, {rate['high']:.3g}]"
    line = (f"judge drift: {rate['value']:.3g}{interval} of {drift['answered']} canary decisions flipped since "
            "the baseline")
    if drift["moved"]:
        line += ("; the judge moved: part of the comparison's change is the judge's, not this run's (re-judge the "
                 "baseline's answers with this judge: `--llm-bridge`)")
    return [line]
