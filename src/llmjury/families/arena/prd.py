"""PRD's Vicuna80 (MIT): 7,040 human pairwise votes over nine chat models on 80 questions, and five
LLM reviewers' recorded verdicts on every ordered pair of five of them.

Human votes become labelled battles (the human leaderboard). Each reviewer becomes a recorded judge.
Human majority rule, per unordered model pair and question: every annotator vote from both answer
orders, mapped to the alphabetical order of the pair; the label with strictly the most votes wins,
otherwise the majority is a tie. Agreement with it is counted per reviewer verdict (each order
separately), with ties and without (a tie on either side drops the verdict), and swap consistency
over the unordered pairs both orders of which the reviewer judged.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from llmjury.cases import Case
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.arena.cases import FAMILY, FIXTURES
from llmjury.jury import Jury, Outcome
from llmjury.stats import proportion
from llmjury.verdicts import JudgeConfig, Verdict

SHIPPED = FIXTURES.parent / "prd"
_PAIR = re.compile(r"answer_(.+?)-vs-answer_(.+?)-human-reviewer")
WINNER = {1: "model_a", 2: "model_b", 3: "tie"}
PARSER_VERSION = "prd-last-line/1"
REFERENCE = {"note": "PRD SOURCE.md, computed by the data's curators (not the paper): agreement with the human "
                     "majority incl. ties / excl. ties / same verdict under order swap",
             "gpt4": (0.643, 0.793, 0.689), "gpt35": (0.627, 0.797, 0.691), "claude": (0.600, 0.734, 0.549),
             "bard": (0.549, 0.638, 0.369), "vicuna-13b": (0.500, 0.586, 0.374)}


class PRDSource(Case):
    """The human votes, or one reviewer's recorded verdicts (a test each; no model call)."""

    family: str = FAMILY
    reviewer: str  # "human" or a reviewer name

    def marks(self) -> list[str]:
        return [FAMILY, "recorded"]


def sources(root: Path = SHIPPED) -> list[PRDSource]:
    reviewers = sorted(p.stem for p in (root / "reviewers").glob("*.jsonl"))
    return [PRDSource(id="prd-human", reviewer="human")] + [PRDSource(id=f"prd-{r}", reviewer=r) for r in reviewers]


def canonical(model_1: str, model_2: str, winner: str) -> tuple[str, str, str]:
    """The pair in alphabetical order, with the winner flipped to match."""
    if model_1 <= model_2:
        return model_1, model_2, winner
    return model_2, model_1, {"model_a": "model_b", "model_b": "model_a"}.get(winner, winner)


def parse_last_line(text: str) -> int | None:
    """A PRD review's verdict: 1, 2 or 3 alone on its last line."""
    match = re.fullmatch(r"\s*\**\s*([123])\s*\**\s*\.?\s*", text)
    return int(match.group(1)) if match else None


def human_rows(root: Path = SHIPPED) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((root / "ratings-human").glob("*.jsonl")):
        match = _PAIR.match(path.name)
        if match is None:
            raise DatasetError(str(path), None, "file name does not say which two models were compared")
        for number, row in read_jsonl(path):
            try:
                rows.append({"question": str(row["question_id"]), "model_1": match.group(1),
                             "model_2": match.group(2), "winner": WINNER[int(row["score"])]})
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(str(path), number, f"not a human vote ({exc})") from exc
    return rows


async def replay(case: PRDSource, jury: Jury) -> Outcome:
    root = SHIPPED
    verdicts = []
    if case.reviewer == "human":
        for i, row in enumerate(human_rows(root)):
            verdicts.append(Verdict(
                case_id=f"prd-human-{i:05d}", family=FAMILY, judge=JudgeConfig(provider="human:prd-annotators"),
                result={"winner": row["winner"]},
                attributes={"dataset": "prd", "question": row["question"], "question_index": int(row["question"]),
                            "model_a": row["model_1"], "model_b": row["model_2"], "round": 0}))
        return Outcome(verdicts)
    path = root / "reviewers" / f"{case.reviewer}.jsonl"
    for number, row in read_jsonl(path):
        try:
            winner = WINNER[int(row["score"])]
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), number, f"not a recorded review ({exc})") from exc
        parsed = parse_last_line(row["verdict_line"])
        verdicts.append(Verdict(
            case_id=f"prd-{case.reviewer}-{number:04d}", family=FAMILY,
            judge=JudgeConfig(provider=f"recorded:prd-{case.reviewer}", parser=PARSER_VERSION),
            result={"winner": winner, "parsed_matches_recorded": parsed == int(row["score"])},
            attributes={"dataset": "prd", "question": str(row["question_id"]),
                        "question_index": int(row["question_id"]), "model_a": row["model_1"],
                        "model_b": row["model_2"], "round": 0}))
    return Outcome(verdicts)


def human_majority(human: list[dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    """(question, model, model) in alphabetical order → the majority label, as the rule above."""
    votes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for r in human:
        a, b, w = canonical(r["attributes"]["model_a"], r["attributes"]["model_b"], r["result"]["winner"])
        votes[(r["attributes"]["question"], a, b)][w] += 1
    majority = {}
    for key, counter in votes.items():
        ranked = counter.most_common()
        majority[key] = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else "tie"
    return majority


def reviewer_agreement(reviewer: list[dict[str, Any]], majority: dict[tuple[str, str, str], str]) -> dict[str, Any]:
    with_ties = without = agree_without = agree = 0
    by_pair: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for r in reviewer:
        a, b, w = canonical(r["attributes"]["model_a"], r["attributes"]["model_b"], r["result"]["winner"])
        key = (r["attributes"]["question"], a, b)
        by_pair[key].append(w)
        if key not in majority:
            continue
        with_ties += 1
        agree += w == majority[key]
        if w != "tie" and majority[key] != "tie":
            without += 1
            agree_without += w == majority[key]
    both = [ws for ws in by_pair.values() if len(ws) >= 2]
    return {"agreement_with_ties": proportion(agree, with_ties),
            "agreement_without_ties": proportion(agree_without, without),
            "swap_consistency": proportion(sum(ws[0] == ws[1] for ws in both), len(both)),
            "parser_matches_recorded": proportion(sum(r["result"].get("parsed_matches_recorded", True)
                                                      for r in reviewer), len(reviewer))}
