"""The Socratic tutor family (seeds 000 and 003): our tutor against a plainly prompted teacher,
judged pairwise on simulated, real or pre-collected dialogues with a robust k-run majority; and
the same judge measured against people's preferences on annotated tutor replies (MRBench)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.socratic.cases import MAX_CUT_MARKER
from llmjury.families.socratic.options import DATASETS, NAME, SocraticOptions
from llmjury.families.socratic.results import HumanPreferenceResult, PairwiseResult, SocraticSection
from llmjury.family import CaseSet, Command, Family
from llmjury.intervals import IntervalKind
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Result
from llmjury.providers.offline import Heuristic


class Socratic(Family[SocraticOptions, SocraticSection]):
    name = NAME
    options = SocraticOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({"pairwise": PairwiseResult,
                                                                      "human_preference": HumanPreferenceResult})
    section = SocraticSection
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({
        "judge": "the judge (--llm-judge)",
        "candidate": "our tutor, whose replies are judged",
        "baseline": "the plainly prompted teacher it is judged against",
        "teacher": "the teacher of simulated dialogues",
        "student": "the simulated student",
    })
    headline = ("win_rate",)
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = {
        "win_rate": "proportion", "baseline_win_rate": "proportion", "tie_rate": "proportion",
        "decisive_win_rate": "proportion", "position_consistency": "mean", "length_controlled_win_rate": "smooth"}
    datasets = DATASETS
    markers: ClassVar[Mapping[str, str]] = MappingProxyType({
        "simulated": "dialogues simulated with a student persona",
        "mathdial": "MathDial-style dialogues (real students, or yours in that shape)",
        "mrbench": "annotated tutor replies with people's preferences",
        "responses": "pre-collected reply pairs",
        **{f"{trait}_{level}": f"simulated students with {level} {trait.replace('_', ' ')}"
           for trait in ("goal_commitment", "motivation", "self_efficacy") for level in ("low", "high")},
        **{f"cut_{cut}": f"simulated dialogues cut after student turn {cut}" for cut in range(1, MAX_CUT_MARKER + 1)},
    })
    #: Bulky sub-sections `markdown` renders itself.
    hidden_from_tables = ("seed003", "counted_runs", "by_dimension")

    def case_sets(self) -> Mapping[str, CaseSet[SocraticOptions]]:
        from llmjury.families.socratic import case_sets

        return case_sets.case_sets()

    def offline(self) -> Mapping[str, Heuristic]:
        from llmjury.families.socratic.offline import ANSWERS

        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> SocraticSection:
        from llmjury.families.socratic import report

        return report.aggregate(verdicts)

    def markdown(self, section: SocraticSection) -> str:
        from llmjury.families.socratic import report

        return report.markdown(section)

    def files(self, section: SocraticSection, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.socratic import report

        return report.files(section, verdicts)

    def commands(self) -> Sequence[Command]:
        from llmjury.families.socratic.commands import COMMANDS

        return COMMANDS


FAMILY = Socratic()
