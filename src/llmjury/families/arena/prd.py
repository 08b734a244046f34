"""PRD's Vicuna80 (MIT): 7,040 human pairwise votes over nine chat models on 80 questions, and five
LLM reviewers' recorded verdicts on every ordered pair of five of them. The human votes become
labelled battles (the human leaderboard); each reviewer becomes a recorded judge. The agreement
figures are `agreement.py`'s."""

from __future__ import annotations

import re
from pathlib import Path

from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.arena.cases import FAMILY, PRDSource
from llmjury.families.arena.results import HUMAN, PRD, HumanLabel, PRDReplay, Winner
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict

DATASET = "prd"
_PAIR = re.compile(r"answer_(.+?)-vs-answer_(.+?)-human-reviewer")
WINNER: dict[int, Winner] = {1: "model_a", 2: "model_b", 3: "tie"}
PARSER_VERSION = "prd-last-line/1"


def sources(root: Path) -> list[PRDSource]:
    """The human votes and one source per reviewer file under `root/reviewers`."""
    if not (root / "reviewers").is_dir() or not (root / "ratings-human").is_dir():
        raise DatasetError(str(root), None, "not a PRD folder: expected ratings-human/ and reviewers/ in it")
    reviewers = sorted(p.stem for p in (root / "reviewers").glob("*.jsonl"))
    return [PRDSource(id=f"{DATASET}-{r}", dataset=DATASET, reviewer=r, root=str(root))
            for r in ["human", *reviewers]]


def parse_last_line(text: str) -> int | None:
    """A PRD review's verdict: 1, 2 or 3 alone on its last line."""
    match = re.fullmatch(r"\s*\**\s*([123])\s*\**\s*\.?\s*", text)
    return int(match.group(1)) if match else None


def human_verdicts(root: Path) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for path in sorted((root / "ratings-human").glob("*.jsonl")):
        match = _PAIR.match(path.name)
        if match is None:
            raise DatasetError(str(path), None, "file name does not say which two models were compared")
        for number, row in read_jsonl(path):
            try:
                question, winner = str(row["question_id"]), WINNER[int(row["score"])]
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(str(path), number, f"not a human vote ({exc})") from None
            verdicts.append(Verdict(
                case_id=f"{DATASET}-human-{len(verdicts):05d}", family=FAMILY, kind=HUMAN,
                judge=JudgeConfig(provider="human:prd-annotators"), result=HumanLabel(winner=winner),
                attributes={"dataset": DATASET, "question": question, "question_index": int(question),
                            "model_a": match.group(1), "model_b": match.group(2), "round": 0}))
    return verdicts


def reviewer_verdicts(root: Path, reviewer: str) -> list[Verdict]:
    path = root / "reviewers" / f"{reviewer}.jsonl"
    verdicts = []
    for number, row in read_jsonl(path):
        try:
            winner = WINNER[int(row["score"])]
            question, model_a, model_b = str(row["question_id"]), row["model_1"], row["model_2"]
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), number, f"not a recorded review ({exc})") from None
        parsed = parse_last_line(row.get("verdict_line", ""))
        verdicts.append(Verdict(
            case_id=f"{DATASET}-{reviewer}-{number:04d}", family=FAMILY, kind=PRD,
            judge=JudgeConfig(provider=f"recorded:prd-{reviewer}", parser=PARSER_VERSION),
            result=PRDReplay(winner=winner, parsed_matches_recorded=parsed == int(row["score"])),
            attributes={"dataset": DATASET, "question": question, "question_index": int(question),
                        "model_a": model_a, "model_b": model_b, "round": 0}))
    return verdicts


async def replay(case: PRDSource, jury: Jury) -> Outcome:
    root = Path(case.root)
    if case.reviewer == "human":
        return Outcome(human_verdicts(root))
    return Outcome(reviewer_verdicts(root, case.reviewer))
