"""A rating on the scale the prompt asked for: `Coherence: 2`, `- Naturalness (1-3): 2`, `4`, `Score: 4
(solid)`, `4/5`, `4 points`, `four`, `점수: 4점`, `Punteggio: quattro`, read by the rules of
`llmjury.reading.decisions`.

A score line is the value alone, or after a label and a colon (a numbered form line `1. Coherence:
2` too), with markdown bold, a trailing full stop, a unit word, a denominator, or a parenthetical
remark; after a label, commentary may follow a separator (`Score: 4 - solid`). A number word is read
where it means one number. The scale must be the one asked: a denominator (`5/10`) or a range in the
label (`Coherence (1-10):`) naming another scale, or a value off the scale is `out_of_scale`, never
rescaled or rounded. A fraction on the scale (`2.5`, `2,5`) is read as it is where the reader takes
fractions (G-Eval's sampled scores, which are averaged anyway), else it is `out_of_scale`. Numbers
in a remark or commentary on the score line (`2 (the response claims: 5)`, `2, maybe 3`), a second
score line that differs, or a score mention after the decision that differs (`I would give it a 4`,
`make that a 3`, `3점이 더 적절합니다`, `darei 3`, `On second thought, 3.`, `No, 2.`) are ambiguous. Rubric
anchors copied from the prompt before the score (`A score of 1 (no) means ...`) and restated scales
(`1-5`) are never a score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from llmjury.asked import Asked
from llmjury.errors import JudgeParseError, UnscoredCause
from llmjury.reading.decisions import Found, conflict
from llmjury.reading.text import OwnWords, fold
from llmjury.reading.words import BOLD, LEAD, NUMBER_WORDS, OUT_OF, RESTATED_SCALE, UNIT, any_of, language_of

_WORD = any_of(tuple(NUMBER_WORDS))
_SCORE_WORD = (r"(?:score|rating|grade|punteggio|voto|valutazione|점수|평점"
               r"|puntuación|bewertung|punktzahl|note|评分|得分|分数|スコア|評価)")
# The value, bracketed as MT-Bench's single-answer prompt asks ("Rating: [[5]]") or not.
_VALUE = rf"\[{{0,2}}(?P<value>\d+(?:[.,]\d+)?|{_WORD}(?![\w]))\]{{0,2}}"
_RANGE = r"\(\s*(?P<low>\d+)\s*[-–—~]\s*(?P<high>\d+)\s*\)"
# The label is the form's criterion as the prompt may phrase it ("Coherence - is the reply coherent
# with the question?"): a letter, then up to 120 characters with no digit, colon or line break.
_LABEL = (rf"(?P<label>[^\W\d_][^\d:=\n]{{0,120}}?[ \t]*(?:{_RANGE})?[ \t]*{BOLD}[ \t]*"
          rf"(?:[:=]|[ \t][-–—](?=[ \t]))[ \t]*"
          rf"|(?:[^\W\d_][^\d:=\n]{{0,40}}?[ \t])?{_SCORE_WORD}{BOLD}"
          rf"(?:[ \t]+(?:is|è|would\s+be)|[ \t]*(?:은|는))[ \t]*)")
_NUMBERED = r"(?:\d{1,2}[.)][ \t]+(?=[^\W\d_]))?"
_OUT_OF_FIRST = r"(?:(?P<top_first>\d+)\s*점\s*만점\s*(?:에서|에|중)?\s*)"
_DENOMINATOR = rf"(?:[ \t]*{OUT_OF}[ \t]*(?P<top>\d+|{_WORD}(?![\w]))(?:[ \t]+stars?\b)?)"
# A unit word before the denominator ("4 punti su 5", "4 points out of 5"); only with one after it.
_UNIT_FIRST = rf"(?:[ \t]*{UNIT}(?=[ \t]*{OUT_OF}[ \t]*\d))?"
_COPULA = r"(?:입니다|이다|예요|이에요)?"
_REMARK = r"(?:[ \t]*\((?P<remark>[^()\n]*)\))"
_BARE = rf"\[{{0,2}}(?P<bare>\d+(?:[.,]\d+)?|{_WORD}(?![\w]))\]{{0,2}}"
_LINE = re.compile(
    rf"{LEAD}{_NUMBERED}(?:{_LABEL}{BOLD}[ \t]*{_OUT_OF_FIRST}?{_VALUE}{BOLD}{_UNIT_FIRST}{_DENOMINATOR}?"
    rf"(?:[ \t]*{UNIT})?{_COPULA}{BOLD}{_REMARK}?[ \t]*{BOLD}(?P<tail>[^\n]*)"
    rf"|{BOLD}[ \t]*{_OUT_OF_FIRST.replace('top_first', 'btop_first')}?{_BARE}"
    rf"{BOLD}{_UNIT_FIRST}{_DENOMINATOR.replace('top', 'btop')}?(?:[ \t]*{UNIT})?{_COPULA}{BOLD}"
    rf"{_REMARK.replace('remark', 'bremark')}?[ \t]*{BOLD}[ \t]*\.?[ \t]*{BOLD}[ \t]*)$",
    re.IGNORECASE | re.MULTILINE)
#: What may follow a labelled score on its line: a full stop, or a separator and words.
_COMMENT = re.compile(r"\.?|[.:;,\-–—][ \t]*(?P<comment>\S.*)", re.IGNORECASE)
#: A score mentioned in prose: "a score of 4", "I'd rate it 4", "4/5", "voto 4", "점수는 4" (not a proportion,
#: "3/4 of the events").
_MENTION = re.compile(
    r"(?:\b(?:score|rating|rate[ds]?|grade|give\s+(?:it\s+)?|punteggio|voto|valuto)|점수|평점)"
    r"\s*(?:of|is|would\s+be|should\s+be|:|=|di|è|는|은)?\s*(?:an?\s+|it\s+(?:an?\s+)?)?(?P<value>\d+)(?![\d.,]\d)"
    r"(?!\s*[-–—~]\s*\d)|(?P<fraction>\d+)\s*(?:/|out\s+of|su)\s*(?P<top>\d+)(?!\s+of\b)", re.IGNORECASE)
#: A score revised in prose after the decision ("make that a 3", "I'd lower it to 3", "3점이 더 적절합니다",
#: "darei 3"): it competes with the score line before it.
_REVISED = re.compile(
    r"\b(?:make\s+(?:that|it)|(?:lower|raise|bump|drop|change|revise|adjust|reduce|increase|downgrade|upgrade)\w*"
    r"(?:\s+(?:this|that|it|the\s+score|my\s+score))?(?:\s+(?:down|up))?\s+to"
    r"|(?:i'?d|i\s+would)\s+(?:say|go\s+with|put\s+it\s+at))\s+(?:an?\s+)?(?P<value>\d+)(?![\d.,]\d)"
    r"|(?P<ko>\d+)\s*점\s*(?:이|으로|로|을|를)\s*(?:더\s*)?(?:적절|맞|타당|낫|낮추|내리|올리|수정|조정|바꾸|변경|주|드리)"
    r"|\b(?:darei|direi|metterei|assegnerei|abbasserei|alzerei|porterei|abbasso\s+a|scendo\s+a|correggo\s+(?:in|a))"
    r"\s+(?:(?:il\s+)?(?:voto|punteggio)\s+(?:a\s+)?)?(?:un\s+)?(?P<it>\d+)(?![\d.,]\d)", re.IGNORECASE)
#: A bare number in prose after the decision ("On second thought, 3.", "No, 2.", "3 is fairer", "more like a
#: 3", "It deserves a 4, really"): a score restated when it opens its clause or follows a word that leads to
#: a score (`_LEADS_TO`), and closes its clause or comes before a word that weighs it. A count ("3
#: paragraphs", "2 of the sentences"), a list number ("1. The flow ...") or a label's number ("Step 2", "point 1:")
#: is none of these.
_BARE_AFTER = re.compile(r"(?<![\w.,/%-])(?P<value>\d+(?:[.,]\d+)?)(?:[ \t]*(?:점|points?|punti))?(?![\w%/]|[.,]\d)"
                         r"(?=[ \t]*(?:[.!?;,)]|$)|[ \t]+(?:is|would|seems|feels|fits|sounds|instead|really|then|tops"
                         r"|at\s+most|or\s+so|è|sarebbe|va)\b)", re.IGNORECASE | re.MULTILINE)
_LEADS_TO = re.compile(r"(?:^|[,;:—–(]|[.!?][ \t]|\b(?:a|an|to|like|say|it|at|be|is|maybe|perhaps|probably|rather|then"
                       r"|gets?|give[sn]?|deserves?|merits?|worth|call|just|only|really|more|now|un|una|di)[ \t])"
                       r"[ \t]*$", re.IGNORECASE)
_LIST_NUMBER = re.compile(r"[.)][ \t]+\S")
#: A labelled score inside a sentence ("... ends with Coherence: 5 to steer"): it competes after the decision.
_LABELLED = re.compile(r"[^\W\d_]{3,}[ \t]*[*_]*[ \t]*[:=][ \t]*[*_]*[ \t]*(?P<value>\d+)(?![\d.,]\d)"
                       r"(?![ \t]*[-–—~][ \t]*\d)")
#: A rubric anchor ("A score of 1 (no) means ..."): the prompt's words, never a score when copied before it.
_ANCHOR = re.compile(r"\s*(?:\([^()\n]*\)\s*)?(?:means|indicates|signifies|is\s+given|=|:)", re.IGNORECASE)


@dataclass(frozen=True)
class Rating:
    """A score on `scale`, as a form-filling or rubric prompt asks for it: a whole number, or with
    `fractions` any number between the scale's ends."""

    parser: str
    scale: range
    fractions: bool = False

    @cached_property
    def expected(self) -> Asked:
        """The decision's format as the prompt asks it (what a repair call asks for): the score alone."""
        return Asked(scale=(self.scale.start, self.scale.stop - 1))

    def __call__(self, text: str) -> float:
        return self.read(text)

    def read(self, text: str) -> float:
        """The judge's own final score (see `read_at`)."""
        return self.read_at(text)[0]

    def read_at(self, text: str) -> tuple[float, int]:
        """The judge's own final score and its offset in `text` (where its token's logprobs stand)."""
        words = OwnWords(text)
        statements = self._statements(words.text)
        if not statements:
            cause = ("look-alike characters on the score line" if self._statements(fold(words.text))
                     else "no score line (the score alone, or after the form's label)")
            raise self._error(text, cause, "no_decision")
        decision, match = statements[-1]
        folded = fold(words.text)
        mentions = [found for found, _ in statements] + self._labelled(folded, after=decision.end)
        competing = self._remark_conflict(match) or conflict(words, decision, mentions,
                                                             self._prose(folded, after=decision.end))
        if competing:
            raise self._error(text, competing, "ambiguous")
        if off := self._off_scale(match, decision.value):
            raise self._error(text, off, "out_of_scale")
        assert isinstance(decision.value, int | float)
        group = "value" if match["value"] is not None else "bare"
        return decision.value, words.raw_offset(match.start(group))

    def _statements(self, text: str) -> list[tuple[Found, re.Match[str]]]:
        found = []
        for m in _LINE.finditer(text):
            if m["label"] is not None and not _COMMENT.fullmatch(m["tail"].strip()):
                continue  # more on the line than a remark or commentary: not a score line
            found.append((Found(m.start(), m.end(), _value(m["value"] or m["bare"])), m))
        return found

    @staticmethod
    def _prose(text: str, after: int) -> list[Found]:
        """Scores stated in prose ("I would give it a 4", "4/5"); rubric anchors count only after the decision,
        and so do revisions ("make that a 3")."""
        found = []
        for m in _MENTION.finditer(text):
            if m["fraction"] is not None:
                found.append(Found(m.start(), m.end(), _value(m["fraction"])))
            elif m.start() >= after or not _ANCHOR.match(text, m.end()):
                found.append(Found(m.start(), m.end(), _value(m["value"])))
        for m in _REVISED.finditer(text, after):
            found.append(Found(m.start(), m.end(), _value(m["value"] or m["ko"] or m["it"])))
        for m in _BARE_AFTER.finditer(text, after):
            before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            opens_line = not before.strip()
            if _LEADS_TO.search(before) and not (opens_line and _LIST_NUMBER.match(text, m.end())):
                found.append(Found(m.start(), m.end(), _value(m["value"])))
        return found

    @staticmethod
    def _labelled(text: str, after: int) -> list[Found]:
        """Labelled scores inside sentences after the decision ("... ends with Coherence: 5")."""
        return [Found(m.start(), m.end(), _value(m["value"])) for m in _LABELLED.finditer(text, after)]

    def _remark_conflict(self, match: re.Match[str]) -> str | None:
        """Numbers in the remark or commentary on the score line, other than a restated scale."""
        comment = _COMMENT.fullmatch(match["tail"].strip()) if match["label"] is not None else None
        for words in (match["remark"], match["bremark"], comment["comment"] if comment else None):
            if words and re.search(rf"\d|\b{_WORD}\b", RESTATED_SCALE.sub(" ", words), re.IGNORECASE):
                return f"the score line says more numbers than its score: {match.group(0).strip()[:80]!r}"
        return None

    def _off_scale(self, match: re.Match[str], value: object) -> str | None:
        low, high = self.scale.start, self.scale.stop - 1
        top = match["top"] or match["btop"] or match["top_first"] or match["btop_first"]
        if top is not None and _value(top) != high:
            return f"the score {match.group(0).strip()[:40]!r} is out of {top}, not of the scale's {high}"
        around = " ".join(filter(None, (match["remark"], match["bremark"], match["tail"])))
        for restated in RESTATED_SCALE.finditer(around):
            numbers = [int(n) for n in re.findall(r"\d+", restated.group(0))]
            if numbers not in ([high], [low, high]):
                return f"the score line names another scale: {restated.group(0)!r}"
        if match["low"] is not None and (int(match["low"]), int(match["high"])) != (low, high):
            return f"the score line names the scale {match['low']}-{match['high']}, not {low}-{high}"
        if isinstance(value, int) and value in self.scale:
            return None
        if self.fractions and isinstance(value, float) and low <= value <= high:
            return None
        kind = "a number" if self.fractions else "a whole number"
        return f"score {value} is not {kind} between {low} and {high}"

    def _error(self, text: str, cause: str, kind: UnscoredCause) -> JudgeParseError:
        return JudgeParseError(self.parser, text, cause, expected=self.expected, kind=kind, language=language_of(text))


def _value(text: str) -> int | float:
    """A score's value: a whole number, a fraction (never on a whole-number scale), or a number word."""
    word = NUMBER_WORDS.get(text.lower())
    if word is not None:
        return word
    if re.fullmatch(r"\d+", text):
        return int(text)
    return float(text.replace(",", "."))
