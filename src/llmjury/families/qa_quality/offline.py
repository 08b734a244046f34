"""Offline stand-in for the Q&A rubric judge: the seed's special cases as string rules.

completeness: 1 for "저도 궁금해요"-style non-answers; a link-only answer 3; a thin answer (under
40 characters, no code or link) 2; "~해보세요"/"try" without code at most 3; otherwise 3 plus one
for a substantial answer (60+ characters), plus one for code or an official link, minus one when
the question asks two things ("?" twice or "그리고") and the answer is short.
context_independence: deictic words ("그거", "저기", "아까", "위에", "earlier", "above", "the one")
or attachment references give 2, or 1 when both question and answer lean on them; otherwise 4, 5
when an error message or code is included. technical_accuracy: 1 for a non-answer, 2 for a thin
answer; 3 for hedging ("것 같아요", "I think", "maybe"); 4 by default; 5 with code or an official
documentation link. It cannot check facts: a confidently wrong answer passes. The judge's own grade
follows the section 4 rules.
"""

from __future__ import annotations

import json
import random
import re

from llmjury.chat import ChatRequest
from llmjury.families.qa_quality.evaluation import grade
from llmjury.providers.offline import OfflineAnswers

ANSWERS = OfflineAnswers()

NON_ANSWER = ("저도 궁금", "모르겠", "no idea", "same question")
DEICTIC = ("그거", "저기", "아까", "위에", "그 부분", "earlier", "above", "the one", "that one")
ATTACHMENT = ("첨부", "이미지", "screenshot", "attached")
HEDGE = ("것 같아요", "것 같습니다", "i think", "maybe", "probably")
TRY_ONLY = ("해보세요", "써보세요", "just try", "try it")
OFFICIAL = ("docs", "documentation", "arxiv.org", "pandas.pydata.org", "pytorch.org", "huggingface.co/docs",
            "python.org")
_QA = re.compile(r"## 질문\n(?P<q>.*?)\n\n## 답변들\n(?P<a>.*)$", re.DOTALL)


def clamp(x: int) -> int:
    return max(1, min(5, x))


@ANSWERS.answer("qa_quality/judge.j2")
def rubric(request: ChatRequest, rng: random.Random) -> str:
    match = _QA.search(request.messages[-1].content)
    question, answers = (match["q"], match["a"]) if match else ("", "")
    body = re.sub(r"\[답변 \d+\]\n", "", answers).strip()
    low_q, low_a = question.lower(), body.lower()
    has_code = "```" in body or "`" in body
    official = any(o in low_a for o in OFFICIAL)
    link_only = bool(re.fullmatch(r"\s*https?://\S+\s*", body))
    thin = len(body) < 40 and not has_code and "http" not in low_a
    if any(n in low_a for n in NON_ANSWER):
        completeness = 1
    elif link_only:
        completeness = 3
    elif thin:
        completeness = 2
    else:
        completeness = 3 + (len(body) >= 60) + (has_code or official)
        if any(t in low_a for t in TRY_ONLY) and not has_code:
            completeness = min(completeness, 3) - (len(body) < 30)
        if (question.count("?") >= 2 or "그리고" in question) and len(body) < 80:
            completeness -= 1
    leaning_q = any(d in low_q for d in DEICTIC) or any(a in low_q for a in ATTACHMENT)
    leaning_a = any(d in low_a for d in DEICTIC)
    if leaning_q or leaning_a:
        independence = 1 if leaning_q and leaning_a else 2
    else:
        independence = 4 + ("error" in low_q or "에러" in low_q or "```" in question)
    if completeness == 1:
        accuracy = 1
    elif thin:
        accuracy = 2
    elif any(h in low_a for h in HEDGE):
        accuracy = 3
    else:
        accuracy = 4 + (has_code or official)
    scores = [clamp(completeness), clamp(independence), clamp(accuracy)]
    reasons = ["answer coverage by the offline rules", "self-containedness by the offline rules",
               "accuracy signals by the offline rules"]
    payload: dict[str, object] = {name: {"score": s, "reasoning": r} for name, s, r in
               zip(("completeness", "context_independence", "technical_accuracy"), scores, reasons, strict=True)}
    payload["overall_quality"] = grade(scores)
    payload["improvement_suggestion"] = None if min(scores) >= 4 else "Add the missing context or a concrete example."
    return json.dumps(payload, ensure_ascii=False)
