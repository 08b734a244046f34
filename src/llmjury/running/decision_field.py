"""A verdict judge's decision as a field of a JSON schema, where the provider enforces one natively.

Free text mixes a decision with reasoning that mentions other decisions; a schema keeps them
apart: `reasoning` (a string, first, so the judge reasons before it decides) and `decision` (an
enum of exactly the values the prompt allows). The messages stay byte-identical to text mode: the
schema travels only as the request's response format (OpenAI's `json_schema`, Gemini's
`response_json_schema`), so a server that refuses it is asked the published prompt in plain text,
never with the schema pasted in.

An answer that is a JSON object is read by its `decision` field: a value of the enum, in any case
(`"b"` for `B`). A repeated key, a decision outside the enum, another field naming another decision
(`"winner": "A"` beside `"decision": "B"`), prose around the object that names another decision, or
malformed JSON is ambiguous (repaired or unscored with its cause, never a guess); a missing decision
is no decision. A missing `reasoning` or a field the schema does not list decides nothing and is let
be. An answer that leads to the object in prose (`Here is my evaluation: {...}`) is read by the object
when it holds a decision. Free text to a schema request (a server that ignores the response format),
even text that begins with `{` but is no JSON object, is read by the family's own text reader, exactly
as in text mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from llmjury.asked import Asked
from llmjury.chat import ChatRequest
from llmjury.errors import ConfigError, JudgeParseError, UnscoredCause
from llmjury.jurors import JurySpec
from llmjury.providers.base import KINDS, Provider
from llmjury.reading.verdict_json import DuplicateKeyError, json_verdict, strict_json
from llmjury.reading.words import language_of

#: `--llm-judge-output`: the schema where the provider takes one, always the schema, or never.
OUTPUT_MODES = ("auto", "schema", "text")
#: How a verdict run's decision was read: from the schema's field, or by the text parser.
Read = Literal["schema", "text"]
SCHEMA_NAME = "verdict"


@dataclass(frozen=True)
class DecisionField:
    """The decisions a verdict prompt allows: each enum value, with what the family's text parser
    returns for the same decision, so both modes hand the family one vocabulary."""

    values: Mapping[str, Any]
    #: The text parser's version, which errors name.
    parser: str

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "required": ["reasoning", "decision"],
                "properties": {"reasoning": {"type": "string"},
                               "decision": {"type": "string", "enum": list(self.values)}}}

    @property
    def expected(self) -> Asked:
        """What a repair call asks for: the object, with the decision's allowed values."""
        return Asked(fields=("reasoning", "decision"), values=tuple(self.values))

    def ask(self, request: ChatRequest) -> ChatRequest:
        """`request` (the text mode's, messages untouched) with the schema as its response format."""
        return request.model_copy(update={"json_schema": self.schema(), "schema_name": SCHEMA_NAME,
                                          "native_schema": True})

    def reader(self, parse: Callable[[str], Any]) -> Callable[[str], Any]:
        """The reader of an answer to a schema request: the field of a JSON answer, else `parse`."""

        def read(text: str) -> Any:
            parts = verdict_parts(text)
            return parse(text) if parts is None else self.decision(text, parts)

        return read

    def decision(self, text: str, parts: tuple[str, str]) -> Any:
        """The decision of a JSON answer (its object and the prose after it, `verdict_parts`);
        JudgeParseError naming the fault when it does not validate."""
        try:
            answer = strict_json(parts[0])
        except DuplicateKeyError as exc:
            raise self._ambiguous(text, f"json: {exc}") from exc
        except ValueError as exc:
            raise self._ambiguous(text, f"json: malformed ({exc})") from exc
        if "decision" not in answer:
            raise self._ambiguous(text, "json: missing field decision", "no_decision")
        given = answer["decision"]
        value = self._listed(given)
        if value is None:
            raise self._ambiguous(text, f"json: decision {given!r} is none of {', '.join(map(repr, self.values))}")
        for key, other in answer.items():  # a field beside it naming another decision ("winner": "A")
            if key != "decision" and isinstance(other, str) and self._listed(other) not in (None, value):
                raise self._ambiguous(text, f"json: {key} {other!r} names another decision than {given!r}")
        if other_named := self._named_after(parts[1], value):
            raise self._ambiguous(text, f"the words around the object name another decision: {other_named!r}")
        return self.values[value]

    def _listed(self, given: object) -> str | None:
        """The enum value a decision names: itself, or the one value it equals but for case and spaces
        (`"b"` for `B`); None for none of them."""
        if not isinstance(given, str):
            return None
        if given in self.values:
            return given
        same = [value for value in self.values if value.casefold() == given.strip().casefold()]
        return same[0] if len(same) == 1 else None

    def _named_after(self, prose: str, value: str) -> str | None:
        """Another decision the prose after the object names ("On second thought, A is better"), if any:
        a letter as a word of its own in upper case, a longer value in any case. The prose before it is
        the judge's reasoning, which names both options."""
        for other in self.values:
            if other != value and re.search(rf"(?<![\w'’]){re.escape(other)}(?![\w'’])", prose,
                                            0 if len(other) == 1 else re.IGNORECASE):
                return other
        return None

    def _ambiguous(self, text: str, cause: str, kind: UnscoredCause = "ambiguous") -> JudgeParseError:
        return JudgeParseError(self.parser, text, cause, expected=self.expected, kind=kind, language=language_of(text))


def verdict_parts(text: str) -> tuple[str, str] | None:
    """The JSON object of an answer to a schema request and the prose after it: the answer's object
    (`llmjury.reading.verdict_json.json_verdict`), or the one unfenced object prose leads to when it
    holds a `decision` (`Here is my evaluation: {...}`); None for a text answer, read as text."""
    if (parts := json_verdict(text)) is not None:
        return parts
    embedded = json_verdict(text, embedded=True)
    try:
        return embedded if embedded is not None and "decision" in strict_json(embedded[0]) else None
    except ValueError:
        return None


def how_read(text: str) -> Read:
    """Whether an answer to a schema request was read from its field (JSON) or as text."""
    return "schema" if verdict_parts(text) is not None else "text"


def reasoning(text: str) -> str:
    """What a report shows of an answer read from its field: the `reasoning`, else the text itself."""
    parts = verdict_parts(text)
    try:
        answer = strict_json(parts[0]) if parts is not None else None
    except ValueError:
        return text
    return answer["reasoning"] if isinstance(answer, dict) and isinstance(answer.get("reasoning"), str) else text


def uses_schema(mode: str, provider: Provider) -> bool:
    """Whether a verdict judge asks `provider` for its decision as a field: not in text mode, and
    only where the provider sends a schema natively and has not learned that its server refuses it
    (in `schema` mode a refusal is asked anyway, so the verdict says so rather than falling back)."""
    if mode == "text":
        return False
    return provider.takes_schema() if mode == "auto" else KINDS[provider.spec.kind].native_schema


def check_output(mode: str, judges: Mapping[str, JurySpec]) -> None:
    """`schema` mode needs every judge (role to spec) to send a schema natively: a ConfigError at
    start-up naming the first that cannot (an offline or http judge), not a run of unscored verdicts."""
    if mode != "schema":
        return
    for role, spec in judges.items():
        for juror in spec.jurors:
            kind = juror.spec.kind
            if not KINDS[kind].native_schema:
                raise ConfigError(f"--llm-judge-output schema: the {role} {juror.label} cannot be asked for a "
                                  f"decision field ({kind} providers take no JSON schema); use auto or text")
