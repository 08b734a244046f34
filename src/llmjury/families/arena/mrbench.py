"""MRBench as an arena: eight tutors answering the same student turns. Human annotations become
labelled battles ("by label"); the LLM judge fights the same battles as test cases, and the
report sets its verdicts and ranking beside the humans'. The preference rule is
`llmjury.datasets.mrbench`'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llmjury.cases import Case
from llmjury.datasets import mrbench
from llmjury.families.arena.cases import FAMILY, BattleCase
from llmjury.families.arena.pipeline import judge_battle, options
from llmjury.jury import Jury, Outcome
from llmjury.verdicts import JudgeConfig, Verdict

DATASET = "mrbench"
HUMAN_JUDGE = "human:mrbench-annotations"
WINNER = {"a": "model_a", "b": "model_b", "tie": "tie"}


class TutorBattleCase(BattleCase):
    history: str
    answer_a: str
    answer_b: str
    human: str  # model_a, model_b or tie


class HumanLabels(Case):
    """Every tutor pair of every conversation, decided by the human annotations (no model call)."""

    family: str = FAMILY
    path: str | None = None

    def marks(self) -> list[str]:
        return [FAMILY, f"arena_{DATASET}"]


def history_text(history: list[tuple[str, str]]) -> str:
    return "\n".join(f"[{speaker}]: {text}" for speaker, text in history)


def battles(path: Path | None, *, pairs_per_conversation: int, seed: int) -> list[TutorBattleCase]:
    """Seeded tutor pairs per conversation, for the LLM judge."""
    conversations, _ = mrbench.load(path)
    cases = []
    for conv, a, b in mrbench.sampled_pairs(conversations, pairs_per_conversation, seed):
        ra, rb = conv.replies[a], conv.replies[b]
        cases.append(TutorBattleCase(
            id=mrbench.case_id(conv, a, b), dataset=DATASET, question=conv.id, question_index=conv.index,
            model_a=a, model_b=b, history=history_text(conv.history),
            answer_a=ra.text, answer_b=rb.text, human=WINNER[mrbench.preference(ra.score, rb.score)]))
    return cases


async def judge_tutors(case: TutorBattleCase, jury: Jury) -> Outcome:
    opts = options(jury)
    question = jury.render("arena/mrbench_question.j2", history=case.history).text
    attributes: dict[str, Any] = {"dataset": DATASET, "question": case.question, "question_index": case.question_index,
                                  "model_a": case.model_a, "model_b": case.model_b, "round": 0,
                                  "human": case.human, "experiment": opts.experiment}
    verdict = await judge_battle(jury, opts, case.id, question, case.answer_a, case.answer_b, attributes)
    return Outcome([verdict])


async def human_battles(case: HumanLabels, jury: Jury) -> Outcome:
    conversations, _ = mrbench.load(Path(case.path) if case.path else None)
    verdicts = []
    for conv, a, b in mrbench.sampled_pairs(conversations, pairs_per_conversation=None):
        winner = WINNER[mrbench.preference(conv.replies[a].score, conv.replies[b].score)]
        verdicts.append(Verdict(
            case_id=mrbench.case_id(conv, a, b), family=FAMILY,
            judge=JudgeConfig(provider=HUMAN_JUDGE, parser="mrbench-annotation-sum/1"),
            result={"winner": winner, "consistent": True, "counted_runs": 1},
            attributes={"dataset": DATASET, "question": conv.id, "question_index": conv.index,
                        "model_a": a, "model_b": b, "round": 0}))
    return Outcome(verdicts)
