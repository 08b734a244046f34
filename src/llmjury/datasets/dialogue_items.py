"""Rated dialogue items: a context, the response judged, and human ratings by dimension and annotator.

Shapes read, told apart by content:

* DSTC9, in its original parallel-list form and seed 004's restructured form;
* Topical-Chat USR in UniEval's form (per-item means) and seed 004's restructured form;
* USR's per-annotator release (`[{context, fact, annotators, responses: [{response, model, <Dimension>:
  [ratings]}]}]`), for Topical-Chat or any other corpus; each rating keeps the name `annotators` gives
  it, so a person is one annotator across contexts (positions name different people);
* rated items, the documented bring-your-own schema, in JSON Lines, a JSON list or CSV: one record per
  item (ratings as numbers or lists, one per annotator) or one per item and annotator (an
  `annotator` column; rows of the same item merge).

Every loader returns `DialogueItem`s keeping each dimension's name as the file spells it; mapping
names to a family's criteria is the family's business. Items a loader leaves out (empty responses,
duplicates) are tallied on the `LoadCounter` it is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmjury.cases import slug
from llmjury.datasets.files import read_json, read_records
from llmjury.errors import DatasetError
from llmjury.loading import LoadCounter

#: Fields of a rated-items record that are not ratings.
ITEM_FIELDS = frozenset({"id", "context", "response", "system", "system_id", "model", "fact", "knowledge",
                         "context_id", "annotator", "annotators", "ratings", "judge", "judge_scores"})
#: A field `judge_<dimension>` holds a judge's recorded score for that dimension (replayed, never asked).
JUDGE_PREFIX = "judge_"
EMPTY = "empty responses"
DUPLICATE = "duplicates"
#: One per row that repeats an annotator of its item, however many dimensions it rates.
DUPLICATE_RATING = "repeated annotator rows (same item and annotator; the first rating kept)"


@dataclass(frozen=True)
class DialogueItem:
    """One rated response. `human` is the mean rating per dimension; `ratings` keeps every
    annotator's (dimension -> annotator -> rating) where the file has them, for the human ceiling;
    `recorded` holds a judge's scores saved in the file (dimension -> score), for replay."""

    id: str
    dataset: str
    context_id: str
    turns: list[tuple[str, str]]
    response: str
    system_id: str | None
    human: dict[str, float]
    fact: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)
    recorded: dict[str, float] = field(default_factory=dict)
    judge: str | None = None

    def whole_dialogue(self) -> list[tuple[str, str]]:
        """The turns with the judged response appended (seed 004's whole-dialogue task)."""
        responder = "system" if self.dataset == "dstc9" else ("B" if self.turns and self.turns[-1][0] == "A" else "A")
        return [*self.turns, (responder, self.response)]


def dstc9(path: Path, models_path: Path | None = None) -> list[DialogueItem]:
    """DSTC9 in the original parallel-list form ({contexts, responses, references, scores[, models]})
    or seed 004's restructured list ([{dialog_id, turns: [{speaker, utterance}], score, system_id}],
    where the last turn is the judged system response). Empty responses are kept: people rated them."""
    data = read_json(path)
    if isinstance(data, list):
        return [_dstc9_restructured(path, i, row) for i, row in enumerate(data)]
    try:
        contexts, responses, scores = data["contexts"], data["responses"], data["scores"]
    except (KeyError, TypeError) as exc:
        raise DatasetError(str(path), None, f"not DSTC9: missing list {exc}") from exc
    models, flowscore = _models(path, data)
    if models_path is not None:
        models, flowscore = _models(models_path, read_json(models_path))
    if not len(contexts) == len(responses) == len(scores) or (models and len(models) != len(contexts)):
        raise DatasetError(str(path), None, "contexts, responses, scores (and models) differ in length")
    positions = data.get("source_index", list(range(len(contexts))))
    items = []
    for i, (context, response, score) in enumerate(zip(contexts, responses, scores, strict=True)):
        try:
            human = float(score)
        except (TypeError, ValueError) as exc:
            raise DatasetError(str(path), i, f"score {score!r} is not a number") from exc
        turns = [("user" if k % 2 == 0 else "system", str(u)) for k, u in enumerate(context)]
        items.append(DialogueItem(
            id=f"dstc9-{positions[i]:04d}", dataset="dstc9", context_id=f"dstc9-{positions[i]:04d}", turns=turns,
            response=str(response), system_id=(models[i].removesuffix(".json") if models else None),
            human={"overall": human},
            extra={"flowscore": flowscore[i]} if flowscore else {}))
    return items


def _models(path: Path, data: Any) -> tuple[list[str] | None, list[Any] | None]:
    """The chatbot of each DSTC9 dialogue and its FlowScore, if the object has them; a wrong type is
    named with the shape expected, not left to fail as an attribute error later."""
    shape = 'a JSON object {"models": [chatbot name, ...], "flowscore": [number, ...]}'
    if not isinstance(data, dict):
        raise DatasetError(str(path), None, f"expected {shape}, got a JSON {type(data).__name__}")
    models, flowscore = data.get("models"), data.get("flowscore")
    if models is not None and not (isinstance(models, list) and all(isinstance(m, str) for m in models)):
        raise DatasetError(str(path), None, f'"models" must be a list of chatbot names ({shape}), '
                                            f"got {type(models).__name__}")
    if flowscore is not None and not isinstance(flowscore, list):
        raise DatasetError(str(path), None, f'"flowscore" must be a list of numbers ({shape}), '
                                            f"got {type(flowscore).__name__}")
    return models, flowscore


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


def is_usr(data: Any) -> bool:
    """USR's per-annotator release: a list of contexts, each with its rated `responses`."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "responses" in data[0]


def topical_chat(path: Path, counter: LoadCounter | None = None) -> list[DialogueItem]:
    """Topical-Chat USR (360 items) in UniEval's form ([{source, context, system_id, system_output,
    scores}]), seed 004's restructured form ([{dialogue, turns, score, system_id, system_output,
    context}]) or USR's per-annotator release; every human dimension the file has is kept."""
    if path.suffix.lower() in (".csv", ".jsonl"):
        return rated_items(path, "topical_chat", counter, prefix="tc")
    data = read_json(path)
    if is_usr(data):
        return _items(path, "topical_chat", _usr_records(path, data), counter or LoadCounter(), prefix="tc")
    if not isinstance(data, list):
        raise DatasetError(str(path), None, "expected a list of items")
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
                turns = _alternating(history)
                human = {k: float(v) for k, v in row["scores"].items()}
            response, system = row["system_output"], row["system_id"]
            fact = row.get("context", "")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DatasetError(str(path), i, f"not a Topical-Chat item (missing or bad {exc}); Topical-Chat files "
                                             "are UniEval's form, seed 004's or USR's per-annotator release") from None
        group = contexts.setdefault(history, len(contexts))
        items.append(DialogueItem(id=f"tc-{group:02d}-{i:03d}", dataset="topical_chat", context_id=f"tc-{group:02d}",
                                  turns=turns, response=response, system_id=system, human=human, fact=fact,
                                  extra={"source": history}))
    return items


def rated_items(path: Path, name: str, counter: LoadCounter | None = None, prefix: str | None = None
                ) -> list[DialogueItem]:
    """Rated items of any corpus: USR's per-annotator release, or the rated-items schema in JSON
    Lines, a JSON list or CSV. `name` labels the items (ids, markers, reports)."""
    counter = counter or LoadCounter()
    if path.suffix.lower() not in (".csv", ".tsv", ".jsonl"):
        data = read_json(path)
        if is_usr(data):
            return _items(path, name, _usr_records(path, data), counter, prefix)
    return _items(path, name, read_records(path), counter, prefix)


def _alternating(history: str) -> list[tuple[str, str]]:
    lines = [line for line in history.split("\n") if line.strip()]
    return [("A" if k % 2 == 0 else "B", line) for k, line in enumerate(lines)]


def _usr_records(path: Path, data: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    """USR's contexts flattened into rated-items records (item number = position among all responses)."""
    records: list[tuple[int, dict[str, Any]]] = []
    for c, context in enumerate(data):
        try:
            history, fact, responses = context["context"], context.get("fact", ""), context["responses"]
            names = context.get("annotators")
            for response in responses:
                ratings = {k: v for k, v in response.items() if k not in ("response", "model")}
                records.append((len(records), {"context": history, "fact": fact, "response": response["response"],
                                               "system": response.get("model"), "ratings": ratings,
                                               **({"annotators": names} if names is not None else {})}))
        except (KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(str(path), c, f"not a USR context (missing or bad {exc}): expected {{context, "
                                             "fact, responses: [{response, model, <Dimension>: [...]}]}") from None
    return records


def _items(path: Path, name: str, records: Iterable[tuple[int, dict[str, Any]]], counter: LoadCounter,
           prefix: str | None) -> list[DialogueItem]:
    """Rated-items records into items: long-format rows merged, empty responses and duplicates dropped."""
    prefix = slug(prefix or name)
    merged: dict[Any, dict[str, Any]] = {}
    for number, record in records:
        row = _row(path, number, record)
        key = row["id"] if row["id"] is not None else (row["history"], row["response"], row["system"])
        if not row["response"].strip():
            counter.drop(EMPTY)
            continue
        seen = merged.get(key)
        if seen is None:
            merged[key] = row
        elif row["annotator"] is None or seen["annotator"] is None:
            counter.drop(DUPLICATE)
        else:
            _merge(seen, row, counter)
    contexts: dict[str, int] = {}
    items = []
    for position, row in enumerate(merged.values()):
        group = row["context_id"] if row["context_id"] is not None else contexts.setdefault(row["history"],
                                                                                               len(contexts))
        context_id = f"{prefix}-{group:02d}" if isinstance(group, int) else f"{prefix}-{slug(group)}"
        ident = f"{prefix}-{slug(row['id'])}" if row["id"] is not None else f"{context_id}-{position:03d}"
        ratings = {dim: dict(by) for dim, by in row["ratings"].items() if by}
        human = {dim: sum(by.values()) / len(by) for dim, by in ratings.items()}
        items.append(DialogueItem(
            id=ident, dataset=name, context_id=context_id, turns=row["turns"], response=row["response"],
            system_id=row["system"], human=human, fact=row["fact"], extra={"source": row["history"]},
            ratings={dim: by for dim, by in ratings.items() if len(by) > 1}, recorded=row["recorded"],
            judge=row["judge"]))
    return items


def _merge(seen: dict[str, Any], row: dict[str, Any], counter: LoadCounter) -> None:
    """Another annotator's row joins its item. A row repeating an annotator the item already has is
    one repeat, counted once (not once per dimension it rates); it adds only dimensions not yet rated."""
    repeated = False
    for dim, by in row["ratings"].items():
        target = seen["ratings"].setdefault(dim, {})
        for annotator, value in by.items():
            repeated |= annotator in target
            target.setdefault(annotator, value)
    counter.drop(DUPLICATE_RATING, int(repeated))
    seen["annotator"] = seen["annotator"] or row["annotator"]


def _row(path: Path, number: int, record: Mapping[str, Any]) -> dict[str, Any]:
    """One record checked: its text fields, its ratings by dimension and annotator, recorded judge scores."""
    def fail(cause: str) -> DatasetError:
        return DatasetError(str(path), number, cause)

    if "context" not in record or "response" not in record:
        missing = [k for k in ("context", "response") if k not in record]
        raise fail(f"missing field {', '.join(map(repr, missing))}: a rated item needs context and response "
                   f"(fields: {', '.join(sorted(record))})")
    turns, history = _turns(record["context"], fail)
    annotator = _text(record.get("annotator")) or None
    names = _annotators(record.get("annotators"), fail)
    ratings: dict[str, dict[str, float]] = {}
    raw = record.get("ratings")
    if raw is not None and not isinstance(raw, dict):
        raise fail(f"ratings must be an object of dimension: rating(s), got {type(raw).__name__}")
    fields = dict(raw or {}) | {k: v for k, v in record.items() if k not in ITEM_FIELDS
                                and not k.startswith(JUDGE_PREFIX)}
    for dim, value in fields.items():
        values = value if isinstance(value, list) else [value]
        numbers = [_number(v, f"rating {dim!r}", fail) for v in values]
        if names is not None and annotator is None and len(numbers) != len(names):
            raise fail(f"rating {dim!r} lists {len(numbers)} values for {len(names)} annotators {names}")
        who = names if names is not None and annotator is None else [str(k + 1) for k in range(len(numbers))]
        by = {(annotator or who[k]): x for k, x in enumerate(numbers) if x is not None}
        if annotator is not None and len(by) > 1:
            raise fail(f"rating {dim!r} lists {len(by)} values on a row with an annotator; give one per row")
        ratings[str(dim).strip()] = by
    recorded = {k.removeprefix(JUDGE_PREFIX): v for k, v in record.items() if k.startswith(JUDGE_PREFIX)}
    judge_scores = record.get("judge_scores") or {}
    if not isinstance(judge_scores, dict):
        raise fail(f"judge_scores must be an object of dimension: score, got {type(judge_scores).__name__}")
    recorded |= judge_scores
    scores = {dim: _number(v, f"recorded judge score {dim!r}", fail) for dim, v in recorded.items()}
    system = record.get("system", record.get("system_id", record.get("model")))
    return {"id": _text(record.get("id")) or None, "history": history, "turns": turns,
            "response": _text(record["response"]), "system": _text(system) or None,
            "fact": _text(record.get("fact", record.get("knowledge", ""))),
            "context_id": _text(record.get("context_id")) or None, "annotator": annotator, "ratings": ratings,
            "recorded": {dim: x for dim, x in scores.items() if x is not None},
            "judge": _text(record.get("judge")) or None}


def _turns(context: Any, fail: Any) -> tuple[list[tuple[str, str]], str]:
    """(speaker, text) turns and the history text: a string of lines (speakers A/B alternate), a list of
    strings, or a list of {speaker, utterance} objects."""
    if isinstance(context, str):
        return _alternating(context), context
    if isinstance(context, list):
        turns = []
        for k, turn in enumerate(context):
            if isinstance(turn, dict) and "utterance" in turn:
                turns.append((str(turn.get("speaker", "A" if k % 2 == 0 else "B")), str(turn["utterance"])))
            elif isinstance(turn, str):
                turns.append(("A" if k % 2 == 0 else "B", turn))
            else:
                raise fail(f"context turn {k} is neither text nor {{speaker, utterance}}")
        return turns, "\n".join(text for _, text in turns)
    raise fail(f"context must be text or a list of turns, got {type(context).__name__}")


def _annotators(value: Any, fail: Any) -> list[str] | None:
    """The names of the people whose ratings a record lists, in the lists' order (USR's `annotators`),
    so each person stays one annotator across items; None: they are numbered by position."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(f"annotators must be a list of names, got {value!r}")
    names = [v.strip() for v in value]
    if len(set(names)) != len(names):
        raise fail(f"annotators {names} name a person twice")
    return names


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _number(value: Any, what: str, fail: Any) -> float | None:
    """A rating as a float; an empty cell is no rating; anything else that is not a number is an error."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise fail(f"{what}: {value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise fail(f"{what}: {value!r} is not a number (an unknown column? every column besides "
                   f"{', '.join(sorted(ITEM_FIELDS - {'ratings', 'judge_scores'}))} and judge_<dimension> "
                   "is a rated dimension)") from None
