"""A pair of scores, one per answer judged: `- Score of Model 1: 0` / `- Score of Model 2: 1`,
read by the rules of `llmjury.reading.decisions` for each of the two.

Each score stands on a line of its own (`Punteggio del Modello 1: 1`, `모델 1 점수: 1` as well),
anywhere in the answer, with markdown bold, a bullet, a full stop or a parenthetical remark without
numbers, a unit word (`1점`, `1 punto`) or the scale's top (`1/1`; another top is `out_of_scale`).
Each model's last score line is its score (without one, its last score stated in a sentence: "the
score of Model 1 is 0"); an earlier one that differs, or a `Score of Model N: x` mention or such a
sentence after it that differs, is ambiguous unless corrected as the rules allow. Commentary on the
line is fine when it holds no number. A score off the scale asked is unscored as `out_of_scale`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from llmjury.asked import Asked
from llmjury.errors import JudgeParseError, UnscoredCause
from llmjury.reading.decisions import Found, conflict
from llmjury.reading.text import OwnWords, fold
from llmjury.reading.words import BOLD, LEAD, OUT_OF, ROLE_WORDS, UNIT, any_of, language_of

_SCORE_WORD = r"(?:score|punteggio|voto|점수)"


@dataclass(frozen=True)
class ScorePair:
    """Two scores on a scale, one per numbered role (`Model 1`, `Model 2`)."""

    parser: str
    #: The role word the prompt numbers its answers with ("model": "Model 1", "Modello 1", "모델 1").
    role: str
    scale: range
    #: The decision's format as the prompt asks it (what a repair call asks for).
    expected: Asked

    @cached_property
    def _who(self) -> str:
        return rf"{any_of(ROLE_WORDS.get(self.role, (self.role,)))}\s*[12](?!\d)"

    @cached_property
    def _named(self) -> str:
        """A score's name: "Score of Model 1", "Punteggio del Modello 1", "모델 1의 점수", "Model 1 Score"."""
        who = self._who
        return (rf"{_SCORE_WORD}\s+(?:(?:of|for|del|della|di|per)\s+)?(?:the\s+)?{who}"
                rf"|{who}\s*(?:의\s*)?{_SCORE_WORD}")

    @cached_property
    def _line(self) -> re.Pattern[str]:
        name = rf"(?:{self._named}|{self._who}(?=\s*{BOLD}\s*:))"
        return re.compile(rf"{LEAD}{BOLD}[ \t]*(?P<name>{name})[ \t]*{BOLD}[ \t]*[:=][ \t]*{BOLD}[ \t]*(?P<score>\d+)"
                          rf"(?:[ \t]*{OUT_OF}[ \t]*(?P<top>\d+))?(?:[ \t]*{UNIT})?{BOLD}(?P<tail>[^\n]*)$",
                          re.IGNORECASE | re.MULTILINE)

    @cached_property
    def _mention(self) -> re.Pattern[str]:
        return re.compile(rf"(?P<name>{self._named})\s*[*_]*\s*[:=]\s*[*_]*\s*(?P<score>\d+)", re.IGNORECASE)

    @cached_property
    def _prose(self) -> re.Pattern[str]:
        """A score stated in a sentence: "the score of Model 1 is 0", "il punteggio del Modello 2 è 1",
        "모델 1의 점수는 0"."""
        return re.compile(rf"(?P<name>{self._named})\s*(?:is|was|would\s+be|should\s+be|è|sarebbe|는|은)\s+"
                          rf"(?:an?\s+)?(?P<score>\d+)(?![\d.,]\d)(?!\s*[-–—~]\s*\d)", re.IGNORECASE)

    def __call__(self, text: str) -> tuple[int, int]:
        return self.read(text)

    def read(self, text: str) -> tuple[int, int]:
        """(first score, second score): each model's own final score line."""
        words = OwnWords(text)
        folded = fold(words.text)
        statements: dict[str, list[Found]] = {"1": [], "2": []}
        for m in self._line.finditer(words.text):
            tail = re.sub(r"^[\s*_]+|[\s*_.]+$", "", m["tail"])
            if tail and not re.fullmatch(r"\([^()\d\n]*\)|[,;:\-–—][^\d\n]*\w[^\d\n]*", tail):
                continue  # more on the line than a remark: not a score line (a mention, checked below)
            top = int(m["top"]) if m["top"] is not None else None
            # a score out of another top than the scale's stands for none on it (its value is off the scale)
            score = int(m["score"]) if top in (None, self.scale.stop - 1) else -1
            statements[_number(m["name"])].append(Found(m.start(), m.end(), score))
        stated = {n: [Found(m.start(), m.end(), int(m["score"])) for m in self._prose.finditer(folded)
                      if _number(m["name"]) == n] for n in ("1", "2")}
        scores = []
        for n in ("1", "2"):
            if not statements[n] and not stated[n]:
                cause = ("look-alike characters on a score line" if self._line.search(folded)
                         else f"no score line for {self.role} {n} ({self.expected.first} ...)")
                raise self._error(text, cause, "no_decision")
            # Its last score line, else (as small models answer) its last score stated in a sentence.
            decision = statements[n][-1] if statements[n] else stated[n][-1]
            mentions = [Found(m.start(), m.end(), int(m["score"])) for m in self._mention.finditer(folded)
                        if _number(m["name"]) == n]
            mentions += statements[n] + stated[n]
            if competing := conflict(words, decision, mentions, []):
                raise self._error(text, competing, "ambiguous")
            assert isinstance(decision.value, int)
            if decision.value not in self.scale:
                shown = words.text[decision.start:decision.end].strip()
                raise self._error(text, f"{self.role} {n}'s score ({shown!r}) is not on the scale "
                                  f"{self.scale.start}-{self.scale.stop - 1}", "out_of_scale")
            scores.append(decision.value)
        return scores[0], scores[1]

    def _error(self, text: str, cause: str, kind: UnscoredCause) -> JudgeParseError:
        return JudgeParseError(self.parser, text, cause, expected=self.expected, kind=kind, language=language_of(text))


def _number(name: str) -> str:
    """Which answer a score's name numbers ("Score of Model 2" → "2")."""
    return str(re.findall(r"[12]", name)[-1])
