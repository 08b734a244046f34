"""Which answers a run may replay from the cache, and why.

A run asks two kinds of roles. The systems under test (`candidate`, and any role marked with
`--llm-under-test`) are what a pull request changes, often without
changing a byte of the request: an HTTP service, a fine-tuned model behind a stable name, a RAG
pipeline. Replaying their answers from another run's cache would judge main's system and call it
the pull request's. So their answers are asked afresh once per run (shared by the run's workers),
unless the spec declares a version (`;version=2024-06-01`, part of the cache key, so a new
version is a new key) or the user opts in. Fixed instruments (judges, the baseline teacher,
simulated students) replay as before: their requests name everything that decides their answers.
So do the arena's live contestants (role `contestant`): seed 002 keeps their answers across rounds
and experiments, so a run with more rounds or a second judge pays only for what is new;
`--llm-under-test contestant` asks them afresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import CacheMode

#: Roles under test in every run: a family's own system.
UNDER_TEST = frozenset({"candidate"})


@dataclass(frozen=True)
class ReplayPolicy:
    """Whether a role's cached answers from earlier runs count, and the reason a report gives."""

    fresh: bool  # True: only answers this run fetched (any of its workers) are reused
    why: str


def replay_policy(role: str | None, spec: ProviderSpec, *, cacheable: bool, under_test: frozenset[str],
                  replay_under_test: bool, cache_mode: CacheMode) -> ReplayPolicy:
    """The policy for one role's calls to one provider."""
    if not cacheable:
        return ReplayPolicy(False, "offline heuristics: computed each time, never cached")
    if cache_mode is CacheMode.REFRESH:
        return ReplayPolicy(True, "--llm-cache refresh: every role asked afresh")
    if cache_mode is CacheMode.OFF:
        return ReplayPolicy(True, "--llm-cache off: nothing kept between runs")
    if role is None or role not in under_test:
        return ReplayPolicy(False, "fixed instrument: a cached answer is replayed")
    if cache_mode is CacheMode.REPLAY:
        return ReplayPolicy(False, "under test, --llm-cache replay: only recorded answers are replayed")
    if spec.version is not None:
        return ReplayPolicy(False, f"under test, version {spec.version}: a cached answer of that version is replayed")
    if replay_under_test:
        return ReplayPolicy(False, "under test, --llm-replay-under-test: a cached answer is replayed")
    return ReplayPolicy(True, "under test: asked afresh (add ;version=... to the spec to replay)")
