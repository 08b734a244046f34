"""A verdict's result is always a typed model: a dict is refused, a foreign family's record is read as recorded."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from llmjury.family import Result
from llmjury.judgement.verdicts import JudgeConfig, UntypedResult, Verdict

RECORD = {"case_id": "item-01", "family": "toy", "kind": "aspect", "judge": {"provider": "openai:m"},
          "result": {"aspect": "a", "score": 3}, "valid": True}


class Aspect(Result):
    aspect: str
    score: int


def test_a_plain_dict_result_is_refused_naming_the_typed_ways_in():
    with pytest.raises(ValidationError, match=r"typed model .*not a dict.*`typed`.*Verdict\.foreign"):
        Verdict(case_id="c", family="toy", judge=JudgeConfig(provider="p"), result={"aspect": "a"})
    with pytest.raises(ValidationError, match="not a dict"):
        Verdict.model_validate(RECORD)


def test_a_typed_result_is_recorded_as_its_fields():
    verdict = Verdict(case_id="c", family="toy", judge=JudgeConfig(provider="p"), result=Aspect(aspect="a", score=3))
    assert verdict.record()["result"] == {"aspect": "a", "score": 3}


def test_a_foreign_familys_record_keeps_its_result_as_recorded():
    verdict = Verdict.foreign(RECORD)
    assert isinstance(verdict.result, UntypedResult) and verdict.result.aspect == "a"
    assert verdict.record() == Verdict.foreign(verdict.record()).record()
    assert verdict.record()["result"] == {"aspect": "a", "score": 3}
    assert Verdict.foreign({**RECORD, "result": None, "valid": False}).result is None
