"""A JSON verdict: one object, validated against the schema the prompt asked for.

The answer is the object alone (a ```json fence around it is fine, and so is prose around the object
or the one ```json block that holds it, when the prose states no number but the object's own; an
answer asked for JSON may lead to the one unfenced object in prose, or write it as a Python dict). An
object that names a key twice (`{"score": 2, "score": 5}`), or holds two score fields that disagree (`{"score": 2,
"final_score": 5}`), is ambiguous: which value counts would be a guess. A field the schema bounds
(`ge`/`le`) with a value off its scale is `out_of_scale`. A text answer that merely begins with `{`
but is no JSON object is not a JSON verdict at all: `json_object` says so, and the text readers
read it.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from llmjury.asked import Asked
from llmjury.errors import JudgeParseError, UnscoredCause, validation_cause
from llmjury.reading.words import RESTATED_SCALE, language_of

M = TypeVar("M", bound=BaseModel)
_JSON_BLOCK = re.compile(r"```(?:json|JSON)[ \t]*\n(.*?)```", re.DOTALL)
#: A comma before a closing brace or bracket (`{"score": 4,}`), as JSON-like answers end a list; a string's own kept.
_TRAILING_COMMA = re.compile(r'"(?:[^"\\\n]|\\.)*"|,\s*([}\]])')
_OPENING_FENCE = re.compile(r"^```(?:json|JSON)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
#: Keys that hold a score; keys naming a bound of the scale (`max_score`) do not.
_SCORE_KEY = re.compile(r"score|rating|grade|punteggio|voto|점수|평점", re.IGNORECASE)
_BOUND_KEY = re.compile(r"max|min|scale|range|out_of|total|possible|bound|limit", re.IGNORECASE)


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice."""


def strict_json(text: str) -> Any:
    """`json.loads` that refuses an object with a repeated key (which value counts is a guess):
    DuplicateKeyError; malformed JSON raises json.JSONDecodeError as usual."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key!r} in the judge's JSON")
            seen[key] = value
        return seen

    return json.loads(text, object_pairs_hook=pairs)


def json_parts(text: str, *, embedded: bool = False) -> tuple[str, str] | None:
    """The answer's JSON object and the prose after it: the answer itself (a ```json fence around it is
    fine), an object that opens the answer, or the one ```json block of an answer that wraps it in
    prose (the prose before it is the judge's reasoning); with `embedded` (an answer asked for JSON
    alone), also the one object that prose leads to unfenced (`Here is my grade: {...}`). A trailing
    comma (`{"score": 4,}`) is dropped, and a repeated key still counts as an object (reading it names
    that fault). None for a text answer, even one that begins with `{`."""
    text = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(0), text.translate(_INVISIBLE).strip())
    fence = _OPENING_FENCE.match(text)
    if fence:
        body, prose = fence.group(1), text[fence.end():]
    elif text.startswith("{"):
        try:
            end = json.JSONDecoder().raw_decode(text)[1]
        except ValueError:
            written = python_dict(text)
            return None if written is None else (written, "")
        body, prose = text[:end], text[end:]
    else:
        blocks = list(_JSON_BLOCK.finditer(text))
        objects = objects_in(text) if embedded and not blocks else []
        if len(blocks) == 1:
            body, prose = blocks[0].group(1), text[blocks[0].end():]
        elif len(objects) == 1:
            start, end = objects[0]
            body, prose = text[start:end], text[end:]
        else:
            return None
    try:
        value = strict_json(body)
    except DuplicateKeyError:
        return body.strip(), prose
    except ValueError:
        return None
    return (body.strip(), prose) if isinstance(value, dict) else None


def python_dict(text: str) -> str | None:
    """An answer that is a Python dict literal of JSON's values (`{'score': 4}`, as some models write
    JSON) as the JSON it means; None for anything else, and for a key written twice (which value
    counts would be a guess)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree, ast.Dict):
        return None
    keys = [key.value for key in tree.keys if isinstance(key, ast.Constant)]
    if len(keys) != len(tree.keys) or len(set(keys)) != len(keys) or not all(isinstance(k, str) for k in keys):
        return None
    try:
        return json.dumps(ast.literal_eval(tree))
    except (ValueError, TypeError, SyntaxError):
        return None


def objects_in(text: str) -> list[tuple[int, int]]:
    """Where each JSON object stands in `text` (start, end), outermost only: a brace that opens no
    object is prose."""
    found: list[tuple[int, int]] = []
    decoder, at = json.JSONDecoder(), text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append((at, end))
        at = text.find("{", end)
    return found


def json_verdict(text: str, *, embedded: bool = False) -> tuple[str, str] | None:
    """The answer's JSON object and the prose after it (`json_parts`) where that prose states no number
    but the object's own and the scale ("Hope this helps!", "Final score: 4 out of 5"): prose that says
    another (`{"score": 2} I think 5 is fairer`) makes the answer no JSON verdict. None for a text
    answer, even one that begins with `{`."""
    parts = json_parts(text, embedded=embedded)
    if parts is None:
        return None
    body, prose = parts
    stated = set(re.findall(r"\d+(?:[.,]\d+)?", RESTATED_SCALE.sub(" ", prose)))
    return None if stated and not stated <= _numbers_in(body) else parts


def json_body(text: str, *, embedded: bool = False) -> str | None:
    """The object of the answer's JSON verdict (`json_verdict`), or None."""
    parts = json_verdict(text, embedded=embedded)
    return None if parts is None else parts[0]


def _numbers_in(body: str) -> set[str]:
    """Every number the object states, as text ("4", "4.0" as "4" too)."""
    found = set(re.findall(r"\d+(?:[.,]\d+)?", body))
    return found | {n.split(".")[0] for n in found if re.fullmatch(r"\d+\.0+", n)}


def disagreeing_scores(data: Any, where: str = "") -> str | None:
    """The first object (by its path) whose score fields hold different numbers, if any."""
    if isinstance(data, list):
        return next((found for i, item in enumerate(data) if (found := disagreeing_scores(item, f"{where}[{i}]"))),
                    None)
    if not isinstance(data, dict):
        return None
    scores = {key: value for key, value in data.items() if _SCORE_KEY.search(key) and not _BOUND_KEY.search(key)
              and isinstance(value, int | float | str) and not isinstance(value, bool) and _number(value) is not None}
    if len({_number(v) for v in scores.values()}) > 1:
        return f"{where or 'the object'} holds scores that disagree: " + ", ".join(
            f"{key}={value!r}" for key, value in scores.items())
    return next((found for key, value in data.items() if (found := disagreeing_scores(value, f"{where}.{key}"
                                                                                      if where else key))), None)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def read_model(text: str, schema: type[M], parser: str) -> M:
    """The judge's JSON answer as `schema`; JudgeParseError naming the field and the kind of fault."""
    expected = Asked(fields=tuple(schema.model_fields))
    language = language_of(text)

    def error(cause: str, kind: Any = "ambiguous") -> JudgeParseError:
        return JudgeParseError(parser, text, cause, expected=expected, kind=kind, language=language)

    body = json_body(text, embedded=True)
    if body is None and len(_JSON_BLOCK.findall(text)) > 1:
        raise error("two ```json blocks: which one is the verdict is a guess")
    if body is None:
        raise error(*_why_no_object(text))
    try:
        data = strict_json(body)
    except DuplicateKeyError as exc:
        raise error(f"json: {exc}") from exc
    if boolean := _boolean_number(schema, data):  # pydantic's lax mode reads true as 1
        raise error(f"{boolean}: a boolean is not a number")
    if disagreement := disagreeing_scores(data):
        raise error(f"json: {disagreement}")
    data = _as_listed(schema, _whole_scores(data))
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        off_scale = first["type"] in {"greater_than_equal", "less_than_equal", "greater_than", "less_than"} or (
            first["type"] == "literal_error" and _number(first.get("input")) is not None)
        kind = "out_of_scale" if off_scale else "no_decision" if first["type"] == "missing" else "ambiguous"
        raise error(validation_cause(exc, "json"), kind) from exc


def _why_no_object(text: str) -> tuple[str, UnscoredCause]:
    """Why an answer holds no JSON verdict, and the cause's kind: no object at all (no_decision), or
    several, or prose after the one that states another number (ambiguous: two decisions)."""
    if not text.strip():
        return "no JSON object", "no_decision"
    objects = objects_in(text.translate(_INVISIBLE))
    if len(objects) > 1:
        return f"{len(objects)} JSON objects: which one is the verdict is a guess", "ambiguous"
    if objects:
        return "the words after the JSON object state another number: which one counts is a guess", "ambiguous"
    return "no JSON object (the answer is not JSON)", "no_decision"


def _whole_scores(data: Any) -> Any:
    """`data` with each score field written as a whole number in a string (`"score": "4"`) as that number,
    as a schema of whole numbers reads it (an enum of scores, `Literal[1, 2, 3, 4, 5]`, would not)."""
    if isinstance(data, list):
        return [_whole_scores(item) for item in data]
    if not isinstance(data, dict):
        return data
    return {key: int(value) if isinstance(value, str) and _SCORE_KEY.search(key) and not _BOUND_KEY.search(key)
            and re.fullmatch(r"\s*\d+\s*", value) else _whole_scores(value) for key, value in data.items()}


def _as_listed(schema: type[BaseModel], data: Any) -> Any:
    """`data` with a field the schema lists the words of (`Literal["high", "low"]`) written as listed
    when it differs only in case (`"High"`): the same word, never another."""
    if not isinstance(data, dict):
        return data
    fixed = dict(data)
    for name, spec in schema.model_fields.items():
        value = data.get(name)
        listed = get_args(spec.annotation) if get_origin(spec.annotation) is Literal else ()
        words = [w for w in listed if isinstance(w, str)]
        if isinstance(value, str) and value not in words:
            fixed[name] = next((w for w in words if w.casefold() == value.strip().casefold()), value)
    return fixed


def _boolean_number(schema: type[BaseModel], data: Any) -> str | None:
    """The first numeric field the judge answered with true or false, if any."""
    if not isinstance(data, dict):
        return None
    return next((name for name, spec in schema.model_fields.items()
                 if isinstance(data.get(name), bool) and spec.annotation in (int, float, int | None, float | None)),
                None)
