"""Rated dialogues: DSTC9 and Topical-Chat (USR), in their original and seed 004's restructured forms.

Every loader returns `DialogueItem`s: the turns before the judged response, the response, the
knowledge fact where there is one, the system that produced the response, the item's context
group (for per-context correlations) and every human score the dataset has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmjury.errors import DatasetError

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
DSTC9_SAMPLE = FIXTURES / "dstc9" / "dstc9_sample.json"
TOPICAL_CHAT = FIXTURES / "topical_chat_usr" / "topical_chat.json"
USR_DIMENSIONS = ("understandability", "naturalness", "coherence", "engagingness", "groundedness", "overall")


@dataclass(frozen=True)
class DialogueItem:
    id: str
    dataset: str
    context_id: str
    turns: list[tuple[str, str]]
    response: str
    system_id: str | None
    human: dict[str, float]
    fact: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def whole_dialogue(self) -> list[tuple[str, str]]:
        """The turns with the judged response appended (seed 004's whole-dialogue task)."""
        responder = "system" if self.dataset == "dstc9" else ("B" if self.turns and self.turns[-1][0] == "A" else "A")
        return [*self.turns, (responder, self.response)]


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(str(path), None, f"cannot read JSON ({exc})") from exc


def dstc9(path: Path | None = None, models_path: Path | None = None) -> list[DialogueItem]:
    """DSTC9 in the original parallel-list form ({contexts, responses, references, scores[, models]})
    or seed 004's restructured list ([{dialog_id, turns: [{speaker, utterance}], score, system_id}],
    where the last turn is the judged system response)."""
    source = path or DSTC9_SAMPLE
    data = _read(source)
    if isinstance(data, list):
        return [_dstc9_restructured(source, i, row) for i, row in enumerate(data)]
    try:
        contexts, responses, scores = data["contexts"], data["responses"], data["scores"]
    except (KeyError, TypeError) as exc:
        raise DatasetError(str(source), None, f"missing list {exc}") from exc
    models = data.get("models")
    flowscore = data.get("flowscore")
    if models_path is not None:
        extra = _read(models_path)
        models, flowscore = extra.get("models"), extra.get("flowscore")
    if not len(contexts) == len(responses) == len(scores) or (models and len(models) != len(contexts)):
        raise DatasetError(str(source), None, "contexts, responses, scores (and models) differ in length")
    positions = data.get("source_index", list(range(len(contexts))))
    items = []
    for i, (context, response, score) in enumerate(zip(contexts, responses, scores, strict=True)):
        try:
            human = float(score)
        except (TypeError, ValueError) as exc:
            raise DatasetError(str(source), i, f"score {score!r} is not a number") from exc
        turns = [("user" if k % 2 == 0 else "system", str(u)) for k, u in enumerate(context)]
        items.append(DialogueItem(
            id=f"dstc9-{positions[i]:04d}", dataset="dstc9", context_id=f"dstc9-{positions[i]:04d}", turns=turns,
            response=str(response), system_id=(models[i].removesuffix(".json") if models else None),
            human={"overall": human},
            extra={"flowscore": flowscore[i]} if flowscore else {}))
    return items


def _dstc9_restructured(source: Path, i: int, row: Any) -> DialogueItem:
    try:
        turns = [(t["speaker"], t["utterance"]) for t in row["turns"]]
        score = float(row["score"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(str(source), i, f"not a restructured DSTC9 dialogue ({exc})") from exc
    if not turns:
        raise DatasetError(str(source), i, "dialogue has no turns")
    ident = str(row.get("dialog_id", i))
    return DialogueItem(id=f"dstc9-{ident}", dataset="dstc9", context_id=f"dstc9-{ident}", turns=turns[:-1],
                        response=turns[-1][1], system_id=row.get("system_id"), human={"overall": score})


def topical_chat(path: Path | None = None) -> list[DialogueItem]:
    """Topical-Chat USR (360 items) in UniEval's form ([{source, context, system_id, system_output,
    scores}]) or seed 004's restructured form ([{dialogue, turns, score, system_id, system_output,
    context}]); every human dimension the file has is kept."""
    source = path or TOPICAL_CHAT
    data = _read(source)
    if not isinstance(data, list):
        raise DatasetError(str(source), None, "expected a list of items")
    items = []
    contexts: dict[str, int] = {}
    for i, row in enumerate(data):
        try:
            if "turns" in row:
                turns = [(t["speaker"], t["utterance"]) for t in row["turns"]]
                history = "\n".join(u for _, u in turns)
                human = {"overall": float(row["score"])} if not isinstance(row["score"], dict) else \
                    {k: float(v) for k, v in row["score"].items()}
            else:
                history = row["source"]
                lines = [line for line in history.split("\n") if line.strip()]
                turns = [("A" if k % 2 == 0 else "B", line) for k, line in enumerate(lines)]
                human = {k: float(v) for k, v in row["scores"].items()}
            response, system = row["system_output"], row["system_id"]
            fact = row.get("context", "")
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(source), i, f"not a Topical-Chat item ({exc})") from exc
        group = contexts.setdefault(history, len(contexts))
        items.append(DialogueItem(id=f"tc-{group:02d}-{i:03d}", dataset="topical_chat", context_id=f"tc-{group:02d}",
                                  turns=turns, response=response, system_id=system, human=human, fact=fact,
                                  extra={"source": history}))
    return items
