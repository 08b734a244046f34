"""Replaying gpt-3.5-turbo's recorded G-Eval answers on Topical-Chat (Chiang & Lee, "A Closer Look
into Using Large Language Models for Automatic Evaluation", 2023): 20 sampled answers per item,
exactly seed 004's n = 20 frequency-weighted scoring.

Two parsers: the paper's rule (`paper_parse`, below), under which an answer with no number counts
as 0, so the replay reproduces the published row; and ours (`parse_score`), under which such an
answer is unscored and left out of the item's frequencies. The result files carry no license, so
they are not shipped: point `geval.closer_look` at the folder of `gpt3.5_<dim>_<mode>.json[.xz]`.
"""

from __future__ import annotations

import json
import lzma
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from llmjury.cases import Case
from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError, JudgeParseError
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, find
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.report import references
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.geval_scoring import PARSER_VERSION, parse_score
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.running.settings import Settings

DIMENSIONS = {"nat": "naturalness", "coh": "coherence", "eng": "engagingness", "gro": "groundedness"}
PUBLISHED = {name: tuple(row) for name, row in references()["closer_look"].rows.items()}
_FIRST = re.compile(r"[a-z]*:?-? ?[0-9]\.?[0-9]?")
_NUMBER = re.compile(r"^ ?([\d\.]+)")
_PREFIX = re.compile(r"[a-z]*:?-? *")


def paper_parse(text: str) -> float:
    """The paper's rule: lower-case, newlines to spaces, "1-3" blanked, the text after the last
    "rating:" if any; take the first `[a-z]*:?-? ?[0-9]\\.?[0-9]?`, blank its letters, colon and
    dash with a substitution that also matches the empty string between characters (so digits end
    up separated: "least 40" reads as 4 and "0.75" as 0); the leading number as a float. No number
    is 0, not missing; a negative number is NaN."""
    text = text.lower().replace("\n", " ").replace("1-3", " ")
    if "rating:" in text:
        text = text.split("rating:")[-1]
    match = _FIRST.search(text)
    if match is not None:
        text = _PREFIX.sub(" ", match.group(0)).replace("rating:", "").strip()
    number = _NUMBER.match(text)
    try:
        value = float(number.group(1)) if number else 0.0
    except ValueError:
        value = 0.0
    return math.nan if value < 0 else value


class CloserLookCase(Case):
    family: str = FAMILY
    path: str
    criterion: str
    parser: str  # "paper" or "ours"

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", f"criterion_{self.criterion}", "geval_topical_chat"]


def closer_look_cases(options: GEvalOptions, settings: Settings) -> list[CloserLookCase]:
    """Both parsers on each dimension's recorded file, when Topical-Chat is judged and the folder is found."""
    folder = find(options, settings, "closer_look")
    if folder is None or "topical_chat" not in options.selected:
        return []
    cases = []
    for short, criterion in DIMENSIONS.items():
        matches = sorted(folder.glob(f"gpt3.5_{short}_geval.json*"))
        if matches:
            cases += [CloserLookCase(id=f"closer-look-{criterion}-{p}", path=str(matches[0]), criterion=criterion,
                                     parser=p) for p in ("paper", "ours")]
    return cases


def load(path: Path) -> list[dict[str, Any]]:
    """The recorded answers: a JSON list, or the same compressed with xz."""
    if path.suffix != ".xz":
        data = read_json(path)
    else:
        try:
            with lzma.open(path, "rt", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, lzma.LZMAError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DatasetError(str(path), None, f"cannot read recorded G-Eval answers ({exc})") from exc
    if not isinstance(data, list):
        raise DatasetError(str(path), None, "expected a list of recorded items ({source, system_id, scores, "
                                            "all_responses})")
    return data


async def replay(case: CloserLookCase, jury: Jury) -> Outcome:
    return Outcome(recorded_answers(Path(case.path), case.criterion, case.parser, case.id))


def recorded_answers(path: Path, criterion: str, parser: str, prefix: str) -> list[Verdict]:
    """One verdict per recorded item: its sampled answers parsed (the paper's rule or ours) and averaged."""
    scale = CRITERIA[criterion].scale
    judge = JudgeConfig(provider=f"recorded:gpt-3.5-geval({parser} parser)", n=20, temperature=1.0,
                        parser="chiang-lee-2023" if parser == "paper" else PARSER_VERSION,
                        scoring="sampling (frequency-weighted)")
    contexts: dict[str, int] = {}
    verdicts = []
    for i, record in enumerate(load(path)):
        try:
            context = f"tc-{contexts.setdefault(record['source'], len(contexts)):02d}"
            answers = [str(text) for text in record["all_responses"]]
            attributes = {"dataset": "topical_chat", "item": f"{context}-{record['system_id']}",
                          "context_id": context, "system_id": record["system_id"], "task": "response",
                          "criterion": criterion, "human": float(record["scores"][criterion])}
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), i, f"not a recorded G-Eval item (missing or bad {exc}): expected "
                                             f"{{source, system_id, scores: {{{criterion}}}, all_responses}}") from None
        common: dict[str, Any] = dict(case_id=f"{prefix}-{i:03d}", family=FAMILY, kind="recorded", judge=judge,
                                      attributes=attributes, raw=answers[:3])
        if parser == "paper":
            values = np.array([paper_parse(t) for t in answers])
            if not np.isfinite(values).any():
                verdicts.append(Verdict(valid=False, error="unparseable: every sample negative", **common))
                continue
            verdicts.append(Verdict(result=ScoreResult(score=float(np.nanmean(values)), method="sampling",
                                                       samples=len(values)), **common))
            continue
        parsed = []
        for text in answers:
            try:
                parsed.append(parse_score(text, scale))
            except JudgeParseError:
                continue
        if not parsed:
            verdicts.append(Verdict(valid=False, error="unparseable: no sample had a score", **common))
            continue
        verdicts.append(Verdict(result=ScoreResult(score=sum(parsed) / len(parsed), method="sampling",
                                                   samples=len(answers), parsed=len(parsed)), **common))
    return verdicts
