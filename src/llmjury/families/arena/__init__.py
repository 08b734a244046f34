"""The Elo arena family (seed 002): questions x models, arranged battles, judged outcomes,
Bradley-Terry and Elo ratings with intervals; MRBench tutors rated by humans and by the judge."""

from __future__ import annotations

from llmjury.families.arena import offline as _offline  # noqa: F401  (registers offline answers)
from llmjury.families.arena.cases import FAMILY, ArenaOptions, BattleCase, arrange
from llmjury.families.arena.pipeline import battle
from llmjury.families.registry import Family, register

register(Family(FAMILY, report_module="llmjury.families.arena.report",
                markers={"arena_mtbench": "arena battles on MT-Bench questions",
                         "arena_mrbench": "arena battles between MRBench tutors"}))

__all__ = ["FAMILY", "ArenaOptions", "BattleCase", "arrange", "battle"]
