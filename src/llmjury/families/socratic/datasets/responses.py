"""Pre-collected replies to judge (seed 000 step 4 on its own): no dialogue is simulated and no
tutor is asked; each item's two replies go straight to the pairwise judge.

Two shapes, told apart by content:

- seed 000's endpoint responses file (`collect_endpoint_response.py`'s output): a JSON object
  `{"summary": ..., "results": [{"subset_id", "responses": {NAME: reply, ...}, "success"}]}`,
  where `ours_name` and `baseline_name` pick the two replies (the seed's `chat` and
  `simple-chat`). Its items carry no dialogue: `subsets_dir` names the seed's subsets folder
  (`subset_*.json`, each `{"subset_id", "messages": [{"role": "user"|"assistant", "message"}]}`),
  unless an item has its own `messages` or `context` (the seed's `judge_evaluations_*.json` files,
  with `dialogue_history` and `teacher_responses`, are read the same way);
- rows (JSON Lines, a JSON list or CSV): `id`, `context` (or `dialogue`), `candidate`, `baseline`,
  where `context` is `Student: ...` / `Teacher: ...` lines (`[Student]: ...` and `Tutor:` too), or in
  JSON a list of `{"role", "content"}` messages.

Items the collection marked unsuccessful, items with an empty reply and repeated ids are left
out and counted; an item without any dialogue is an error naming it. An item whose dialogue and
both replies repeat an earlier item's (another subset id, the same text) would put the same
question to the judge twice and count its answer twice: it is judged once, through the first
item, which names the others (`same_as`), and counted as left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from llmjury.cases import slug
from llmjury.datasets.files import read_json, read_records, read_text
from llmjury.errors import DatasetError
from llmjury.families.socratic.cases import ResponsePairCase
from llmjury.families.socratic.dialogue import STUDENT, TEACHER
from llmjury.families.socratic.options import NAME
from llmjury.loading import LoadCounter, LoadReport

#: Where an item may hold its dialogue, in the order they are looked for.
CONTEXT_FIELDS = ("context", "dialogue", "dialogue_history", "messages")
SPEAKERS = {"student": STUDENT, "user": STUDENT, "teacher": TEACHER, "tutor": TEACHER, "assistant": TEACHER}
_SPEAKER = re.compile(r"^\[?(student|user|teacher|tutor|assistant)\]?\s*:\s*", re.IGNORECASE)


def items(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(item number, item) from seed 000's `{"results": [...]}` (or `{"evaluations": [...]}`) object, or rows of
    JSON Lines, a JSON list or CSV."""
    text = read_text(path).lstrip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON Lines: one object per line
        key = next((k for k in ("results", "evaluations") if isinstance(data, dict) and k in data), None)
        if key is not None:  # else a single JSON Lines row
            results = data[key]
            if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
                raise DatasetError(str(path), None, f"{key!r} must be a list of items (seed 000's shape)")
            if not results:
                raise DatasetError(str(path), None, f"{key!r} is empty")
            return list(enumerate(results))
    return read_records(path)


def parse_context(value: Any) -> list[tuple[str, str]]:
    """A dialogue as (speaker, text) turns, from `Speaker: text` lines or a list of role messages."""
    turns: list[tuple[str, str]] = []
    if isinstance(value, list):
        for message in value:
            if not isinstance(message, dict):
                continue
            speaker = SPEAKERS.get(str(message.get("role") or message.get("speaker") or "").lower())
            said = message.get("message", message.get("content", message.get("text")))
            if speaker and isinstance(said, str):
                turns.append((speaker, said.strip()))
        return turns
    for raw in str(value or "").splitlines():
        line = raw.strip()
        match = _SPEAKER.match(line)
        if match:
            turns.append((SPEAKERS[match.group(1).lower()], line[match.end():].strip()))
        elif line and turns:
            turns[-1] = (turns[-1][0], turns[-1][1] + "\n" + line)
    return turns


def subset_histories(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Seed 000's subsets (`subset_*.json`, or any `*.json` there) by subset id."""
    files = sorted(folder.glob("subset_*.json")) or sorted(folder.glob("*.json"))
    if not files:
        raise DatasetError(str(folder), None, "no subset JSON files (subset_*.json) in this folder")
    histories = {}
    for file in files:
        data = read_json(file)
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise DatasetError(str(file), None, "not a seed 000 subset: expected {'subset_id', 'messages': [...]}")
        # The seed finds a subset by its file name, subset_<id>.json; the id inside wins when present.
        histories[str(data.get("subset_id", file.stem.removeprefix("subset_")))] = parse_context(data["messages"])
    return histories


def _replies(item: dict[str, Any], ours: str, baseline: str, path: Path, number: int) -> tuple[Any, Any]:
    for key in ("responses", "teacher_responses"):
        if key not in item:
            continue
        replies = item[key]
        if not isinstance(replies, dict) or ours not in replies or baseline not in replies:
            found = sorted(replies) if isinstance(replies, dict) else type(replies).__name__
            raise DatasetError(str(path), number, f"{key!r} holds {found}, not {ours!r} and {baseline!r}; "
                                                  f"set {NAME}.ours_name and {NAME}.baseline_name to its names")
        return replies[ours], replies[baseline]
    if "candidate" not in item or "baseline" not in item:
        raise DatasetError(str(path), number, "expected 'candidate' and 'baseline' fields (or seed 000's 'responses')")
    return item["candidate"], item["baseline"]


def response_cases(path: Path, *, name: str | None = None, ours_name: str = "ours", baseline_name: str = "baseline",
                   subsets_dir: Path | None = None) -> tuple[list[ResponsePairCase], LoadReport]:
    """One case per usable item, and what loading kept and left out."""
    name = name or path.stem
    histories = subset_histories(subsets_dir) if subsets_dir else {}
    counter = LoadCounter()
    cases: list[ResponsePairCase] = []
    seen: set[str] = set()
    by_content: dict[tuple[tuple[tuple[str, str], ...], str, str], ResponsePairCase] = {}
    for number, item in items(path):
        subset_id = str(item.get("subset_id") or item.get("id") or number)
        if subset_id in seen:
            counter.drop("repeated ids (first kept)")
            continue
        seen.add(subset_id)
        if item.get("success") is False:
            counter.drop("items the collection marked unsuccessful")
            continue
        ours, baseline = _replies(item, ours_name, baseline_name, path, number)
        if not isinstance(ours, str) or not isinstance(baseline, str) or not ours.strip() or not baseline.strip():
            counter.drop("items with an empty reply")
            continue
        context = next((item[k] for k in CONTEXT_FIELDS if item.get(k)), None)
        history = parse_context(context) if context else histories.get(subset_id, [])
        if not history:
            hint = (f"neither in the item nor in {subsets_dir}" if subsets_dir else "give 'context' (or 'messages') "
                    f"per item, or set {NAME}.subsets_dir to seed 000's subsets folder")
            raise DatasetError(str(path), number, f"no dialogue for {subset_id!r}: {hint}")
        content = (tuple(history), ours.strip(), baseline.strip())
        if content in by_content:
            by_content[content].same_as.append(subset_id)
            counter.drop("items repeating an earlier item's dialogue and replies (judged once)")
            continue
        case = ResponsePairCase(id=f"{slug(name)}-{slug(subset_id)}", dataset=name, subset_id=subset_id,
                                history=history, ours=ours.strip(), baseline=baseline.strip())
        cases.append(by_content.setdefault(content, case))
    if not cases:
        raise DatasetError(str(path), None, "no item with both replies to judge")
    return cases, counter.report(NAME, name, path, len(cases))
