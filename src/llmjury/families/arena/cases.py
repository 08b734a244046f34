"""Arena cases: what one test judges, or replays. Every case carries its dataset's name, which
labels its id and its markers (`arena`, `arena_<dataset>`)."""

from __future__ import annotations

from llmjury.cases import Case, slug

FAMILY = "arena"


class ArenaCase(Case):
    family: str = FAMILY
    dataset: str

    def marks(self) -> list[str]:
        return [FAMILY, f"arena_{slug(self.dataset)}"]


class BattleCase(ArenaCase):
    """One arranged battle of seed 002: two models' answers to one question."""

    question: str
    question_index: int
    model_a: str
    model_b: str
    round: int = 0


class TutorBattleCase(BattleCase):
    """Two tutors' replies to one student turn (MRBench); `human` is the annotations' preference."""

    history: str
    answer_a: str
    answer_b: str
    human: str


class PairCase(BattleCase):
    """One pairwise item judged live; `item` is its id in the file, `human` its label if any."""

    item: str
    answer_a: str
    answer_b: str
    human: str | None = None


class DatasetFile(ArenaCase):
    """A file whose verdicts are read, not asked for (human labels, recorded verdicts): one test."""

    path: str


class RecordedJudgeFile(ArenaCase):
    """One LLMBar judge x strategy's recorded verdicts on one set (a test; no model call)."""

    set_name: str
    judge: str
    strategy: str
    path: str

    def marks(self) -> list[str]:
        return [*super().marks(), "recorded"]


class PRDSource(ArenaCase):
    """PRD's human votes, or one reviewer's recorded verdicts (a test each; no model call)."""

    reviewer: str  # "human" or a reviewer name
    root: str

    def marks(self) -> list[str]:
        return [*super().marks(), "recorded"]


def is_live(model: str) -> bool:
    """A model named by a provider spec answers live; a plain name must have recorded answers."""
    return ":" in model
