"""The human ceiling on Topical-Chat: how well one annotator agrees with the others.

USR's per-annotator file (three ratings per item and dimension) becomes three "judges", annotator k
scoring each item with its own rating against the mean of the other two as the human score; the
same meta-evaluation then gives each annotator's correlation, and their mean is the ceiling a
judge's correlation can be set against. The file has no stated license, so it is not shipped:
point `geval.usr_annotations` at it.
"""

from __future__ import annotations

import json
from pathlib import Path

from llmjury.cases import Case
from llmjury.errors import DatasetError
from llmjury.families.geval.cases import FAMILY
from llmjury.jury import Jury, Outcome
from llmjury.verdicts import JudgeConfig, Verdict

USR_KEYS = {"understandability": "Understandable", "naturalness": "Natural", "coherence": "Maintains Context",
            "engagingness": "Engaging", "groundedness": "Uses Knowledge", "overall": "Overall"}


class CeilingCase(Case):
    family: str = FAMILY
    path: str
    criterion: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", f"criterion_{self.criterion}", "geval_topical_chat"]


def ceiling_cases(path: str | None) -> list[CeilingCase]:
    if not path:
        return []
    return [CeilingCase(id=f"ceiling-{c}", path=path, criterion=c) for c in USR_KEYS]


async def annotators(case: CeilingCase, jury: Jury) -> Outcome:
    path = Path(case.path)
    try:
        contexts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(str(path), None, f"cannot read the USR annotations ({exc})") from exc
    key = USR_KEYS[case.criterion]
    verdicts = []
    for c, context in enumerate(contexts):
        for r, response in enumerate(context["responses"]):
            ratings = [float(x) for x in response[key]]
            for k, own in enumerate(ratings):
                others = [x for j, x in enumerate(ratings) if j != k]
                verdicts.append(Verdict(
                    case_id=f"ceiling-{case.criterion}-{c:02d}-{r}-a{k + 1}", family=FAMILY,
                    judge=JudgeConfig(provider=f"human:annotator-{k + 1}", scoring="leave one annotator out"),
                    result={"score": own, "method": "annotator"},
                    attributes={"dataset": "topical_chat", "item": f"tc-{c:02d}-{r}", "context_id": f"tc-{c:02d}",
                                "system_id": response.get("model"), "task": "response",
                                "criterion": case.criterion, "human": sum(others) / len(others)}))
    return Outcome(verdicts)
