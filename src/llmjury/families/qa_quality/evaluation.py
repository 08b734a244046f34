"""Seed 001's evaluation input, output schema and grade rules."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

Grade = Literal["high", "medium", "low", "remove"]
DIMENSIONS = ("completeness", "context_independence", "technical_accuracy")


@dataclass
class EvaluationInput:
    """LLM 평가를 위한 최소화된 입력 (seed section 6.3)."""

    question: str
    answers: list[str]
    original_id: str
    source_file: str

    def to_prompt_format(self) -> str:
        answers_formatted = "\n\n".join(f"[답변 {i + 1}]\n{answer}" for i, answer in enumerate(self.answers))
        return f"""## 질문
{self.question}

## 답변들
{answers_formatted}"""


def extract_for_evaluation(qa_pair: dict[str, Any], source_file: str = "") -> EvaluationInput:
    """원본 QA 데이터에서 평가에 필요한 부분만 추출 (metadata, users, reactions dropped)."""
    return EvaluationInput(
        question=qa_pair["question"]["text"].strip(),
        answers=[a["text"].strip() for a in qa_pair["answers"] if a["text"].strip()],
        original_id=str(qa_pair["question"]["timestamp"]),
        source_file=source_file,
    )


def estimate_tokens(text: str) -> int:
    """Rough tokens: about 4 ASCII characters a token, about one token per other character
    (Hangul syllables usually take one or more), so the ratio, not the count, is what to read."""
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return ascii_chars // 4 + (len(text) - ascii_chars)


def token_saving(qa_pair: dict[str, Any], evaluation_input: EvaluationInput) -> tuple[int, int]:
    """(estimated tokens of the raw JSON, of the prompt format): what section 6 saves."""
    raw = json.dumps({"question": qa_pair["question"], "answers": qa_pair["answers"]}, ensure_ascii=False)
    return estimate_tokens(raw), estimate_tokens(evaluation_input.to_prompt_format())


class DimensionScore(BaseModel):
    """개별 평가 차원의 점수와 근거"""

    score: Literal[1, 2, 3, 4, 5] = Field(description="1-5 점수")
    reasoning: str = Field(description="이 점수를 준 구체적인 근거 (1-2문장)")


class QualityEvaluation(BaseModel):
    """Q&A 품질 평가 결과"""

    completeness: DimensionScore = Field(description="답변 완전성: 질문의 모든 부분에 충분히 답변했는가")
    context_independence: DimensionScore = Field(description="맥락 독립성: Q&A만 봐도 내용을 이해할 수 있는가")
    technical_accuracy: DimensionScore = Field(description="기술적 정확성: 코드/개념/설명이 정확한가")
    overall_quality: Literal["high", "medium", "low", "remove"] = Field(description="종합 품질 등급")
    improvement_suggestion: str | None = Field(default=None, description="품질 개선을 위한 제안 (optional)")


def grade(scores: list[int]) -> Grade:
    """Section 4: remove when the mean is below 2.0 or two or more dimensions score 1; high when
    mean >= 4.0 and min >= 3; medium when mean >= 3.0 and min >= 2; otherwise low (including a
    single 1 on an otherwise valuable pair)."""
    mean = sum(scores) / len(scores)
    if mean < 2.0 or scores.count(1) >= 2:
        return "remove"
    if mean >= 4.0 and min(scores) >= 3:
        return "high"
    if mean >= 3.0 and min(scores) >= 2:
        return "medium"
    return "low"
