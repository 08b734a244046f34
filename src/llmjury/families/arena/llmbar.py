"""LLMBar (MIT): pairwise instances with gold labels and judges' recorded verdicts in both answer
orders. A recorded pairwise judge replays them through our parser and swap handling; the figures
and the published ones they are set beside are `agreement.llmbar_figures`'."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

from llmjury.asked import Asked
from llmjury.cases import slug
from llmjury.datasets.files import read_jsonl, read_text
from llmjury.errors import DatasetError, JudgeParseError
from llmjury.families.arena.cases import FAMILY, RecordedJudgeFile
from llmjury.families.arena.results import LLMBAR, LLMBarReplay, Winner
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.reading.choice import Choice, Option

DATASET = "llmbar"
PARSER_VERSION = "llmbar-output/3"
#: LLMBar's prompt asks for "Output (a)" or "Output (b)" and nothing else (`llmjury.reading.choice`).
OUTPUT_CHOICE = Choice(PARSER_VERSION, (Option("model_a", ("Output (a)",)), Option("model_b", ("Output (b)",))),
                       marker="###", expected=Asked(alternatives=("Output (a)", "Output (b)")), alone_at_end=True)
_FRACTION = re.compile(r"(\d+) / (\d+)")
GOLD: dict[int, Winner] = {1: "model_a", 2: "model_b"}


def parse_output_choice(text: str) -> Winner:
    """`Output (a)` / `Output (b)`, LLMBar's verdict format, as the judge's own final decision → model_a / model_b."""
    return cast(Winner, OUTPUT_CHOICE.read(text))


def recorded_files(root: Path) -> list[RecordedJudgeFile]:
    """One case per `judges/<set>/<judge>/<strategy>.jsonl` under `root`."""
    if not (root / "judges").is_dir():
        raise DatasetError(str(root), None, "not an LLMBar folder: expected judges/ in it")
    files = []
    for path in sorted((root / "judges").rglob("*.jsonl")):
        rel = path.relative_to(root / "judges")
        set_name, judge, strategy = "/".join(rel.parts[:-2]), rel.parts[-2], path.stem
        files.append(RecordedJudgeFile(id=f"{DATASET}-{slug(set_name)}-{slug(judge)}-{slug(strategy)}",
                                       dataset=DATASET, set_name=set_name, judge=judge, strategy=strategy,
                                       path=str(path)))
    return files


def _choice(text: str) -> Winner | None:
    try:
        return parse_output_choice(text)
    except JudgeParseError:
        return None


def verdicts(case: RecordedJudgeFile) -> list[Verdict]:
    path = Path(case.path)
    out = []
    for number, item in read_jsonl(path):
        try:
            gold = GOLD[int(item["label"])]
            original, swapped = _choice(item["completion"]), _choice(item["completion_swapped"])
            recorded = [str(item["winner"]), str(item["winner_swapped"])]
            index = int(item["index"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), number, f"not a recorded LLMBar verdict ({exc})") from None
        # The swapped run showed output 2 first: its "Output (a)" means output 2.
        swapped = {"model_a": "model_b", "model_b": "model_a"}.get(swapped or "")  # type: ignore[assignment]
        consistent = original is not None and original == swapped
        out.append(Verdict(
            case_id=f"{case.id}-{index:03d}", family=FAMILY, kind=LLMBAR,
            judge=JudgeConfig(provider=f"recorded:llmbar-{case.judge}-{case.strategy}", parser=PARSER_VERSION,
                              runs=2),
            result=LLMBarReplay(winner=original if consistent and original else "tie", original=original,
                                swapped=swapped, gold=gold, recorded=recorded),
            attributes={"benchmark": DATASET, "dataset": DATASET, "set": case.set_name, "llmbar_judge": case.judge,
                        "strategy": case.strategy, "statistics": str(path.with_suffix(".statistics.json"))}))
    return out


async def replay(case: RecordedJudgeFile, jury: Jury) -> Outcome:
    return Outcome(verdicts(case))


def published(statistics: Path) -> dict[str, Any]:
    """The published counts of an LLMBar statistics file: {metric: (k, n)} and Acc. in percent."""
    try:
        data = json.loads(read_text(statistics))
        counts = {key: tuple(int(x) for x in _FRACTION.search(data[key]).groups())  # type: ignore[union-attr]
                  for key in ("correct_False", "correct_True", "correct_both", "equal")}
        return {"counts": counts, "accuracy_percent": float(data["correct_average"].rstrip("%")),
                "agreement_percent": float(data["equal"].rsplit("=", 1)[1].strip().rstrip("%"))}
    except (json.JSONDecodeError, KeyError, AttributeError, ValueError) as exc:
        raise DatasetError(str(statistics), None, f"not an LLMBar statistics file ({exc})") from None
