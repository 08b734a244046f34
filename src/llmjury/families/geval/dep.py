"""DEP (CC BY 4.0): a GPT-family judge's recorded dialogue ratings beside human ratings, for DSTC9
(2,016 dialogues, 11 chatbots) and FED (120 dialogues, Meena / Mitsuku / Human), replayed as a
recorded judge through the same meta-evaluation (dialogue- and system-level correlations).

The judge answered in words (Very bad, Bad, Okay, Good, Very good); our parser maps them to 0-4.
DSTC9's file also has the curators' numeric `openai_score`, empty for 220 rows: the replay is run
both ways, so the curators' figures (on the 1,796 scored rows) and ours (all rows) sit side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from llmjury.cases import Case
from llmjury.datasets.files import read_text
from llmjury.errors import DatasetError, JudgeParseError
from llmjury.families.geval.datasets import FAMILY, find
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.running.settings import Settings

FILES = {"dstc9": "dstc9_dep_step2_eval.csv", "fed": "fed_dep_step2_eval.csv"}
LABELS = {"very bad": 0, "bad": 1, "okay": 2, "good": 3, "very good": 4}
PARSER_VERSION = "dep-label/1"
REFERENCE = {"note": "DEP SOURCE.md, computed by the data's curators: Pearson / Spearman with human overall",
             "dstc9 recorded openai_score (1,796 rows)": {"dialogue": (0.2742, 0.2575), "system": (0.9718, 0.9545)},
             "fed response text (120 rows)": {"dialogue": (0.6467, 0.6810)}}


def parse_label(text: str) -> int:
    """"Very good" → 4 ... "Very bad" → 0 (the longest label that starts the answer)."""
    cleaned = str(text).strip().lower().rstrip(".!")
    for label in sorted(LABELS, key=len, reverse=True):
        if cleaned.startswith(label):
            return LABELS[label]
    raise JudgeParseError(PARSER_VERSION, str(text), "no rating label (Very bad .. Very good)")


class DEPCase(Case):
    family: str = FAMILY
    dataset: str  # "dstc9" or "fed"
    source: str  # "score" (the curators' numeric column) or "text" (our parse of the judge's words)
    folder: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", "whole_dialogue"]


def dep_cases(options: GEvalOptions, settings: Settings) -> list[DEPCase]:
    """DEP's replays, when DSTC9 is judged and DEP's folder is found."""
    folder = find(options, settings, "dep")
    if folder is None or "dstc9" not in options.selected or not (options.dep or folder.exists()):
        return []
    return [DEPCase(id="dep-dstc9-score", dataset="dstc9", source="score", folder=str(folder)),
            DEPCase(id="dep-dstc9-text", dataset="dstc9", source="text", folder=str(folder)),
            DEPCase(id="dep-fed-text", dataset="fed", source="text", folder=str(folder))]


def _frame(folder: Path, dataset: str) -> pd.DataFrame:
    path = folder / FILES[dataset]
    read_text(path)  # a missing, empty or non-UTF-8 file is named here
    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.ParserError) as exc:
        raise DatasetError(str(path), None, f"cannot read DEP CSV ({exc})") from exc


async def replay(case: DEPCase, jury: Jury) -> Outcome:
    return Outcome(recorded_verdicts(Path(case.folder), case.dataset, case.source, case.id))


def recorded_verdicts(folder: Path, dataset: str, source: str, prefix: str) -> list[Verdict]:
    """DEP's recorded ratings of `dataset` as verdicts: the curators' score (`score`) or the judge's words (`text`)."""
    frame = _frame(folder, dataset)
    human_column, system_column = ("human (overall)", "model") if dataset == "dstc9" else ("overall_avg", "system")
    judge = JudgeConfig(provider=f"recorded:dep-{source}", parser=PARSER_VERSION if source == "text"
                        else "recorded-score", scoring="recorded")
    verdicts = []
    for i, row in frame.iterrows():
        attributes: dict[str, Any] = {"dataset": f"{dataset}_dep", "item": f"{dataset}-dep-{i:04d}",
                                      "context_id": f"{dataset}-dep-{i:04d}",
                                      "system_id": str(row[system_column]).removesuffix(".json"),
                                      "task": "dialogue", "criterion": "overall", "human": float(row[human_column])}
        common: dict[str, Any] = dict(case_id=f"{prefix}-{i:04d}", family=FAMILY, kind="recorded", judge=judge,
                                      attributes=attributes, raw=[str(row["openai_response"])])
        if source == "score":
            if pd.isna(row.get("openai_score")):
                verdicts.append(Verdict(valid=False, error="unscored: no recorded openai_score", **common))
                continue
            verdicts.append(Verdict(result=ScoreResult(score=float(row["openai_score"]), method="recorded"), **common))
            continue
        try:
            verdicts.append(Verdict(result=ScoreResult(score=parse_label(row["openai_response"]), method="recorded"),
                                    **common))
        except JudgeParseError as exc:
            verdicts.append(Verdict(valid=False, error=f"unparseable: {exc.cause}", **common))
    return verdicts


def folder_verdicts(folder: Path) -> list[Verdict]:
    """Every DEP file the folder holds, replayed as the DEP cases of a run do."""
    verdicts = []
    for case in (("dstc9", "score"), ("dstc9", "text"), ("fed", "text")):
        if (folder / FILES[case[0]]).is_file():
            verdicts += recorded_verdicts(folder, *case, f"dep-{case[0]}-{case[1]}")
    return verdicts
