"""Attributing one call's token usage to the samples it returned."""

from __future__ import annotations

from llmjury.chat import Usage


def split_usage(usage: Usage, n: int) -> list[Usage]:
    """Prompt tokens go to the first sample (paid once); completion tokens are shared out evenly."""
    base, extra = divmod(usage.completion_tokens, n)
    return [
        Usage(
            prompt_tokens=usage.prompt_tokens if i == 0 else 0,
            completion_tokens=base + (1 if i < extra else 0),
        )
        for i in range(n)
    ]
