"""The banner of an offline-judged run: which of its numbers came from llmjury's heuristics, so
nobody mistakes them for a model's."""

from __future__ import annotations

from llmjury.model import RunSummary

OFFLINE_BANNER = (
    "> **Offline run.** Every response and verdict here came from llmjury's built-in offline "
    "heuristics, not from an LLM: the numbers exercise the pipeline, they say nothing about any model."
)


def offline_banner(summary: RunSummary) -> str:
    """What an offline-judged run's numbers came from: its verdicts always, its responses too unless
    a role was played by another provider (a team's own service judged by the heuristics)."""
    others = sorted(provider for provider in summary.usage.providers if not provider.startswith("offline"))
    if not others:
        return OFFLINE_BANNER
    return ("> **Offline judge.** Every verdict here came from llmjury's built-in offline heuristics, not from "
            f"an LLM (the responses came from {', '.join(others)}): the numbers exercise the pipeline, they "
            "say nothing about the systems compared.")


def offline_roles(summary: RunSummary) -> str | None:
    """The roles the offline heuristics played in a run judged by a model (a role set for no spec, or
    under a misspelt name, such as `--llm-role candidat=...`): their answers are no system's, which a
    run with a real judge otherwise never says. None when there are none, or the whole run is offline."""
    if summary.run.offline:
        return None
    played = sorted(role for role, providers in summary.usage.roles.items()
                    if providers and all(provider.startswith("offline") for provider in providers))
    if not played:
        return None
    return (f"offline heuristics played {', '.join(played)} (no --llm-role {played[0]}=SPEC was set): "
            f"{'its' if len(played) == 1 else 'their'} answers are llmjury's, not a system's")
