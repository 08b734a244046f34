"""A pydantic model's refusal as one line that names the field: every reader of a file or an answer
(summaries, shard manifests, verdict lines, batch lines, Q&A pairs, chat choices) words it alike."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from llmjury.errors import validation_cause


class Inner(BaseModel):
    score: int


class Record(BaseModel):
    case_id: str
    inner: Inner

    @field_validator("case_id")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a case id is not blank")
        return value


def refusal(model: type[BaseModel], value: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(value)
    return caught.value


def test_the_first_refusal_names_its_field_path_and_every_refusal_is_joined_when_asked():
    exc = refusal(Record, {"case_id": " ", "inner": {"score": "high"}})
    assert validation_cause(exc) == "case_id: Value error, a case id is not blank"
    assert validation_cause(exc, every=True) == ("case_id: Value error, a case id is not blank; "
                                                 "inner.score: Input should be a valid integer, unable to parse "
                                                 "string as an integer")


def test_a_refusal_of_the_whole_value_is_named_as_asked_or_is_its_message_alone():
    exc = refusal(Record, ["not", "an", "object"])
    assert validation_cause(exc, "line") == "line: Input should be a valid dictionary or instance of Record"
    assert validation_cause(exc) == "Input should be a valid dictionary or instance of Record"
