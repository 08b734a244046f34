"""MRBench as an arena: tutors answering the same student turns. Human annotations become
labelled battles; the live judge fights seeded pairs of the same battles as test cases. The
preference rule and the reading of V1 / V3 files are `llmjury.datasets.mrbench`'s; the dataset's
name (`arena.mrbench_name`, else the file's stem; `mrbench` for the shipped file) labels case
ids, markers and report rows."""

from __future__ import annotations

from pathlib import Path

from llmjury.cases import slug
from llmjury.datasets import mrbench
from llmjury.families.arena.cases import FAMILY, DatasetFile, TutorBattleCase
from llmjury.families.arena.results import HUMAN, HumanLabel, Winner
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.loading import LoadCounter, LoadReport

WINNER: dict[str, Winner] = {"a": "model_a", "b": "model_b", "tie": "tie"}


def history_text(history: list[tuple[str, str]]) -> str:
    return "\n".join(f"[{speaker}]: {text}" for speaker, text in history)


def case_id(dataset: str, conversation: mrbench.Conversation, tutor_a: str, tutor_b: str) -> str:
    """Stable, unique and readable: dataset, position, conversation id and the two tutors."""
    return f"{slug(dataset)}-c{conversation.index:03d}-{slug(conversation.id)}-{slug(tutor_a)}-vs-{slug(tutor_b)}"


def conversations(path: Path, dataset: str) -> tuple[list[mrbench.Conversation], LoadReport]:
    found, skipped = mrbench.load(path)
    counter = LoadCounter()
    counter.drop("history does not end with a student turn", len(skipped))
    return found, counter.report(FAMILY, dataset, path, len(found))


def battles(path: Path, dataset: str, *, pairs_per_conversation: int, seed: int
            ) -> tuple[list[TutorBattleCase], LoadReport]:
    """Seeded tutor pairs per conversation, for the live judge."""
    found, report = conversations(path, dataset)
    cases = []
    for conv, a, b in mrbench.sampled_pairs(found, pairs_per_conversation, seed):
        ra, rb = conv.replies[a], conv.replies[b]
        cases.append(TutorBattleCase(
            id=case_id(dataset, conv, a, b), dataset=dataset, question=conv.id, question_index=conv.index,
            model_a=a, model_b=b, history=history_text(conv.history),
            answer_a=ra.text, answer_b=rb.text, human=WINNER[mrbench.preference(ra.score, rb.score)]))
    return cases, report


async def human_battles(case: DatasetFile, jury: Jury) -> Outcome:
    """Every tutor pair of every conversation, decided by the human annotations (no model call)."""
    found, _ = mrbench.load(Path(case.path))
    verdicts = []
    for conv, a, b in mrbench.sampled_pairs(found, pairs_per_conversation=None):
        winner = WINNER[mrbench.preference(conv.replies[a].score, conv.replies[b].score)]
        verdicts.append(Verdict(
            case_id=case_id(case.dataset, conv, a, b), family=FAMILY, kind=HUMAN,
            judge=JudgeConfig(provider=f"human:{case.dataset}-annotations", parser="mrbench-annotation-sum/1"),
            result=HumanLabel(winner=winner),
            attributes={"dataset": case.dataset, "question": conv.id, "question_index": conv.index,
                        "model_a": a, "model_b": b, "round": 0}))
    return Outcome(verdicts)
