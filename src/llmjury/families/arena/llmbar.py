"""LLMBar (MIT): pairwise instances with gold labels and judges' recorded verdicts in both answer
orders. A recorded pairwise judge replays them through our parser and swap handling, and the
report sets accuracy and positional agreement beside the published figures.

Published metrics (LLMBar's statistics files): accuracy in the original and the swapped order,
their mean (the paper's Acc.), correct in both orders, and positional agreement (the two orders
give the same winner; the paper's Agr., where two unparsed verdicts count as the same). An unparsed
verdict counts as wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from llmjury.cases import Case, slug
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError, JudgeParseError
from llmjury.families.arena.cases import FAMILY, FIXTURES
from llmjury.jury import Jury, Outcome
from llmjury.stats import proportion
from llmjury.verdicts import JudgeConfig, Verdict

SHIPPED = FIXTURES.parent / "llmbar"
PARSER_VERSION = "llmbar-output/1"
_VERDICT = re.compile(r"(?:^|\n) ?Output \((a|b)\)")
_FRACTION = re.compile(r"(\d+) / (\d+)")


def parse_output_choice(text: str) -> str:
    """`Output (a)` / `Output (b)` at the start of a line (LLMBar's verdict format) → model_a / model_b."""
    match = _VERDICT.search(text)
    if match is None:
        raise JudgeParseError(PARSER_VERSION, text, "no 'Output (a)' or 'Output (b)' line")
    return "model_a" if match.group(1) == "a" else "model_b"


class RecordedJudgeFile(Case):
    """One judge x strategy's recorded verdicts on one LLMBar set (a test; no model call)."""

    family: str = FAMILY
    set_name: str
    judge: str
    strategy: str
    path: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded"]


def recorded_files(root: Path = SHIPPED) -> list[RecordedJudgeFile]:
    files = []
    for path in sorted((root / "judges").rglob("*.jsonl")):
        rel = path.relative_to(root / "judges")
        set_name, judge, strategy = "/".join(rel.parts[:-2]), rel.parts[-2], path.stem
        files.append(RecordedJudgeFile(id=f"llmbar-{slug(set_name)}-{slug(judge)}-{slug(strategy)}",
                                       set_name=set_name, judge=judge, strategy=strategy, path=str(path)))
    return files


def _choice(text: str) -> str | None:
    try:
        return parse_output_choice(text)
    except JudgeParseError:
        return None


async def replay(case: RecordedJudgeFile, jury: Jury) -> Outcome:
    path = Path(case.path)
    verdicts = []
    gold_of = {1: "model_a", 2: "model_b"}
    for number, item in read_jsonl(path):
        try:
            gold = gold_of[int(item["label"])]
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), number, f"not a recorded LLMBar verdict ({exc})") from exc
        original, swapped = _choice(item["completion"]), _choice(item["completion_swapped"])
        # The swapped run showed output 2 first: its "Output (a)" means output 2.
        swapped = {"model_a": "model_b", "model_b": "model_a"}.get(swapped or "")
        consistent = original is not None and original == swapped
        verdicts.append(Verdict(
            case_id=f"{case.id}-{item['index']:03d}", family=FAMILY,
            judge=JudgeConfig(provider=f"recorded:llmbar-{case.judge}-{case.strategy}", parser=PARSER_VERSION,
                              runs=2),
            result={"winner": original if consistent else "tie", "original": original, "swapped": swapped,
                    "gold": gold, "recorded": [item["winner"], item["winner_swapped"]]},
            attributes={"benchmark": "llmbar", "set": case.set_name, "llmbar_judge": case.judge,
                        "strategy": case.strategy, "statistics": str(path.with_suffix(".statistics.json"))}))
    return Outcome(verdicts)


def replay_metrics(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per order, Acc. (their mean), correct in both, and Agr., for one judge file."""
    n = len(records)
    right = [r["result"]["original"] == r["result"]["gold"] for r in records]
    right_swapped = [r["result"]["swapped"] == r["result"]["gold"] for r in records]
    # LLMBar counts two unparsed verdicts as agreeing (None == None); kept so the replay is exact,
    # with the agreement among fully parsed pairs reported beside it.
    equal = [r["result"]["original"] == r["result"]["swapped"] for r in records]
    parsed = [r for r in records if r["result"]["original"] is not None and r["result"]["swapped"] is not None]
    return {
        "accuracy_original": proportion(sum(right), n),
        "accuracy_swapped": proportion(sum(right_swapped), n),
        "accuracy": (sum(right) + sum(right_swapped)) / (2 * n) if n else None,
        "correct_both": proportion(sum(a and b for a, b in zip(right, right_swapped, strict=True)), n),
        "positional_agreement": proportion(sum(equal), n),
        "positional_agreement_parsed": proportion(sum(r["result"]["original"] == r["result"]["swapped"]
                                                      for r in parsed), len(parsed)),
        "unparsed": sum(r["result"]["original"] is None for r in records)
        + sum(r["result"]["swapped"] is None for r in records),
    }


def published(statistics: Path) -> dict[str, Any]:
    """The published counts of an LLMBar statistics file: {metric: (k, n)} and Acc. in percent."""
    data = json.loads(statistics.read_text(encoding="utf-8"))
    counts = {key: tuple(int(x) for x in _FRACTION.search(data[key]).groups())
              for key in ("correct_False", "correct_True", "correct_both", "equal")}
    return {"counts": counts, "accuracy_percent": float(data["correct_average"].rstrip("%")),
            "agreement_percent": float(data["equal"].rsplit("=", 1)[1].strip().rstrip("%"))}
