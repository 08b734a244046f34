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
