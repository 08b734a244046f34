"""A choice after a marker: `### (b) Teacher B`, `### tie`, `[[A]]`, read by the rules of
`llmjury.reading.decisions` in the options' own names and their translations.

A family declares its options once (`Choice`): the value each returns, the names the prompt gives
it ("(a) Teacher A", "Teacher A", "(a)", "a") and the marker (`###` before the choice, or `[[ ]]`
around it). A decision line may carry a label (`Final decision:`, `최종 결정:`, `Decisione
finale:`), markdown bold, a list bullet, a full stop, and commentary that names no other option
(a loser named after a comparison is fine: `### Teacher B is better than Teacher A`; the option named
as the loser, `### A is worse`, is not a decision for it). Without the
marker, a labelled line (`Final decision: B`), a `###` heading followed by the choice alone, or
(where the family allows it) an explicit option alone on the final line is a decision too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from llmjury.asked import Asked
from llmjury.errors import ConfigError, JudgeParseError
from llmjury.reading.decisions import Found, conflict, final_words_start
from llmjury.reading.declaration import Declaration
from llmjury.reading.text import OwnWords, fold
from llmjury.reading.words import (
    BOLD,
    CLOSED_LABEL,
    COMPARATIVE,
    DECISION_WORD,
    LABEL,
    LEAD,
    LOSER,
    ROLE_WORDS,
    TAKE_BACK,
    TIE_WORDS,
    any_of,
    language_of,
)

Marker = Literal["###", "[[]]"]
_FLAGS = re.IGNORECASE | re.MULTILINE
# A name ends at a word's end, and "Teacher A's reply" names a reply, not the option.
_EDGE = r"(?![A-Za-z0-9])(?![ \t]*['’]s\b)"
#: The heading marker the prompt asks for ("###"); a judge may write two to six.
_MARK = r"#{2,6}(?!#)"
#: An article a judge may put before an option's name ("### L'Insegnante B", "### The response B").
_ARTICLE = r"(?:(?:the|l'|l’|la|il|lo)[ \t]*)?"
_PROSE_REACH = 4000
_KOREAN_ENDING = re.compile(r"^(?:입니다|이다|다|임|요|이에요|예요)?[ \t]*[.!]?$")


@dataclass(frozen=True)
class Option:
    """One decision a prompt allows: what the reader returns, and every name the prompt gives it."""

    value: str
    names: tuple[str, ...]


def _name_pattern(name: str) -> str:
    """A name as a pattern: role and tie words in every language read, a letter in parentheses or
    brackets with any spacing (`(b)`, `( b )`, `[b]`, `b)`), a bare letter only as a word of its own."""
    parts = []
    for token in re.findall(r"\(\s*\w\s*\)|[^\s()]+", name):
        key = token.lower()
        letter = re.fullmatch(r"\(\s*(\w)\s*\)", token)
        if letter:
            parts.append(rf"(?:\(\s*{re.escape(letter.group(1))}\s*\)|\[\s*{re.escape(letter.group(1))}\s*\]"
                         rf"|(?<![\w(\[]){re.escape(letter.group(1))}\))")
        elif key in ROLE_WORDS:
            parts.append(any_of(ROLE_WORDS[key]))
        elif key in TIE_WORDS:
            parts.append(any_of(TIE_WORDS[key]))
        else:
            parts.append(re.escape(token))
    return r"\s*".join(parts) + _EDGE


def _prose_names(option: Option) -> str:
    """How prose names an option: its names that are more than a bare letter, and its letter after
    a role word or in upper case ("Response B", "B"; never the article "a")."""
    names = [_name_pattern(n) for n in option.names if len(n.strip()) > 1]
    letters = {n.strip() for n in option.names if len(n.strip()) == 1 and n.strip().isalpha()}
    roles = any_of([w for words in ROLE_WORDS.values() for w in words])
    for letter in letters:
        names.append(rf"(?:{roles}\s*)?(?-i:{re.escape(letter.upper())}){_EDGE}")
        names.append(rf"{roles}\s*{re.escape(letter)}{_EDGE}")
    return "(?:" + "|".join(sorted(names, key=len, reverse=True)) + ")" if names else r"(?!)"


def _prose_decisions(o: str) -> str:
    """Prose that decides for the option named by `o`, in English, Korean and Italian: the name then
    what it is ("Teacher B is better", "선생님 B가 더 낫다", "l'Insegnante B è migliore"), or a verb
    then the name ("I prefer B", "scelgo la B"). One pattern, the name tried once per position."""
    end = (r"(?=\s*(?:[.!;,:)]|$|than\b|overall\b|and\b|here\b|in\s+this\s+case|because\b|since\b|as\s+it\b"
           r"|perché\b|poiché\b|porque\b|weil\b|car\b|di\s+\w))")
    after_name = "|".join([
        r"\s+(?:is|was|seems|appears|remains|(?:would|should|will|must)\s+be)\s+"
        r"(?:(?:clearly|slightly|much|far|definitely|overall|actually|really|truly|indeed|now|in\s+fact|still"
        r"|honestly)\s+){0,3}"
        rf"(?:the\s+)?(?:better|best|superior|preferable|preferred|stronger|winner)"
        rf"(?:\s+(?:one|response|answer|teacher|choice|option|pick|overall))?{end}",
        r"[ \t]*,?[ \t]+(?:actually|rather|instead|after\s+all)(?=[ \t]*(?:[.!;]|$))",
        r"\s+wins\b",
        r"\s*(?:가|이|는|은)?\s*(?:더|훨씬|조금|약간)?\s*(?:낫|좋|우수|뛰어나)",
        r"\s*(?:을|를)\s*(?:선택|선호)", r"\s*(?:의\s*)?승리",
        r"\s+(?:è|e'|risulta|sembra|appare)\s+(?:chiaramente\s+|decisamente\s+|leggermente\s+|nel\s+complesso\s+)?"
        rf"(?:la\s+|il\s+)?(?:migliore|meglio|preferibile|superiore|vincitore|vincitrice){end}",
        r"\s+vince\b",
        r"\s+es\s+(?:claramente\s+|mucho\s+)?(?:mejor|superior|preferible|(?:el|la)\s+mejor)" + end,
        r"\s+ist\s+(?:klar\s+|deutlich\s+|insgesamt\s+)?(?:besser|überlegen|vorzuziehen|die\s+bessere)" + end,
        r"\s+est\s+(?:clairement\s+|nettement\s+)?(?:meilleure?|supérieure?|préférable|la\s+meilleure?)" + end,
        r"\s*(?:的回答|的回复)?\s*(?:更好|更优|较好|胜出|获胜)", r"\s*(?:の方が|が|は)\s*(?:より)?\s*(?:良い|優れ|勝)",
    ])
    verbs = (r"(?:(?<!\bnot\s)(?<!n't\s)(?<!n’t\s)(?<!never\s)(?<!\bnon\s)"
             r"\b(?:prefer|choose|chose|pick|select|favou?r|go\s+with|winner\s+is|scelgo|preferisco|vince|meglio"
             r"|prefiero|elijo|bevorzuge|wähle|préfère|choisis)\s+(?:la\s+|il\s+|l'|el\s+|le\s+|die\s+|den\s+)?"
             r"|(?:选择|选|我选)\s*)")
    german = rf"\b(?:ist|sind)\s+(?:der\s+|die\s+|das\s+)?{o}\s+(?:klar\s+|deutlich\s+)?(?:besser|überlegen)"
    # the option alone after words that take back what came before ("Hmm, no, A.", "Scratch that: A.")
    taken_back = rf"{TAKE_BACK}(?:[\s,:;.!—–-]+{TAKE_BACK})*[\s,:;.!—–-]+{o}(?=[ \t]*(?:[.!;]|$))"
    return rf"{o}(?:{after_name})|{verbs}{o}|{german}|{taken_back}"


_TIE_PROSE = (r"\b(?:(?:it\s*['’]?s|it\s+is)(?:\s+(?:basically|essentially|practically|really|effectively|pretty\s+much"
              r"|more\s+or\s+less|just))?|call\s+it)\s+a\s+(?:tie|draw)\b"
              r"|\b(?:both|they)\s+are\s+(?:equally\s+good|equivalent|equal)\b"
              r"|\bneither\s+(?:one\s+|response\s+|answer\s+)?is\s+(?:clearly\s+)?better\b"
              r"|무승부|동점|둘\s*다\s*(?:비슷|동등)|\bpareggio\b|\bparità\b|\bsono\s+equivalenti\b")


@dataclass(frozen=True)
class Choice:
    """A prompt's options and where its decision stands; `read` is the family's parser."""

    parser: str
    options: tuple[Option, ...]
    marker: Marker
    #: The decision's format as the prompt asks it (what a repair call asks for).
    expected: Asked
    #: Whether an explicit option alone on the final line (`(a) Teacher A`, a name with its letter in
    #: parentheses) decides where no marker stands anywhere (as small models answer).
    alone_at_end: bool = False
    #: The option values that mean "neither" (their prose is "it's a tie", "they are equivalent").
    ties: frozenset[str] = field(default_factory=frozenset)

    def declared(self, declaration: Declaration) -> Choice:
        """The options with the names a template declares for them, and its format for the causes to
        name (the repair call asks in its language and format: `llmjury.judgement.judging`)."""
        named = self.with_names(declaration.labels, declaration.source) if declaration.labels else self
        return replace(named, expected=declaration.asked) if declaration.asked else named

    def with_names(self, extra: Mapping[str, Sequence[str]], source: str = "labels") -> Choice:
        """The same options with more names (a template's own labels and translations); ConfigError
        naming `source` for a label of an option the reader does not have."""
        unknown = sorted(set(extra) - {o.value for o in self.options})
        if unknown:
            raise ConfigError(f"{source}: no option {', '.join(unknown)} in {self.parser} (its options: "
                              f"{', '.join(o.value for o in self.options)})")
        return replace(self, options=tuple(Option(o.value, (*o.names, *extra.get(o.value, ())))
                                           for o in self.options))

    def __call__(self, text: str) -> str:
        return self.read(text)

    @cached_property
    def _other(self) -> Choice:
        """The same options after the other common marker (`[[A]]` for `### A`, and back): a judge that
        answers in MT-Bench's brackets when asked for `###` (or the reverse) still decides."""
        return replace(self, marker="###" if self.marker == "[[]]" else "[[]]")

    # -- patterns, built once per declaration --------------------------------------------------------
    @cached_property
    def _names(self) -> list[tuple[Option, re.Pattern[str]]]:
        return [(o, re.compile("|".join(_name_pattern(n) for n in o.names), re.IGNORECASE)) for o in self.options]

    @cached_property
    def _option(self) -> str:
        names = sorted({n for o in self.options for n in o.names}, key=len, reverse=True)
        return "(?P<option>" + "|".join(_name_pattern(n) for n in names) + ")"

    @cached_property
    def _explicit(self) -> str:
        names = sorted({n for o in self.options for n in o.names if "(" in n}, key=len, reverse=True)
        return "(?P<option>" + "|".join(_name_pattern(n) for n in names) + ")"

    @cached_property
    def _patterns(self) -> dict[str, re.Pattern[str]]:
        head = rf"{_MARK}[ \t]*{BOLD}[ \t]*(?:{LABEL})?{BOLD}[ \t]*"
        option, tail = self._option, rf"{BOLD}(?P<tail>[^\n]*)$"
        # the marker after prose that names the decision: "Therefore, my final decision is ### (b)"
        # (the prose is matched greedily and checked for a decision word apart: linear on a long line)
        inline = rf"{LEAD}(?P<prose>[^\n#]*)"
        return {
            "marked": re.compile(rf"{LEAD}{head}{_ARTICLE}{option}{tail}", _FLAGS),
            "inline": re.compile(rf"{inline}{head}{_ARTICLE}{option}{tail}", _FLAGS),
            "heading": re.compile(rf"{LEAD}{_MARK}[ \t]*{BOLD}[ \t]*{LABEL}{BOLD}[ \t]*\.?[ \t]*$", _FLAGS),
            "labelled_heading": re.compile(rf"{LEAD}{BOLD}{LABEL}{BOLD}[ \t]*$", _FLAGS),
            "alone": re.compile(rf"{LEAD}{BOLD}[ \t]*{option}{tail}", _FLAGS),
            "explicit": re.compile(rf"{LEAD}{BOLD}[ \t]*{self._explicit}{tail}", _FLAGS),
            "labelled": re.compile(rf"{LEAD}{BOLD}(?:{CLOSED_LABEL}){BOLD}[ \t]*{_ARTICLE}{option}{tail}", _FLAGS),
            "mention": re.compile(rf"{_MARK}[ \t]*{BOLD}[ \t]*(?:{LABEL})?{BOLD}[ \t]*{option}", _FLAGS),
            "brackets": re.compile(rf"\[\[[ \t]*{option}[ \t]*\]\]", _FLAGS),
            "bracket_shaped": re.compile(r"\[\[\s*[^\[\]\n]{1,12}?\s*\]\]|\[\s*\[\s*\w\s*\]\s*\]", re.IGNORECASE),
        }

    @cached_property
    def _prose(self) -> list[tuple[str, re.Pattern[str]]]:
        found = []
        for option in self.options:
            if option.value in self.ties:
                found.append((option.value, re.compile(_TIE_PROSE, re.IGNORECASE)))
                continue
            found.append((option.value, re.compile(_prose_decisions(_prose_names(option)), re.IGNORECASE)))
        return found

    @cached_property
    def _support(self) -> list[tuple[str, re.Pattern[str]]]:
        """Looser prose for an option ("Response B is correct", "B is right", "Teacher B guides the
        student better", "선생님 B가 학생에게 더 잘 질문합니다", "l'Insegnante B guida meglio"), which only a
        correction uses; a negation before the comparison ("does not guide better") supports nothing."""
        found = []
        for option in self.options:
            if option.value in self.ties:
                continue
            name = _prose_names(option)
            found.append((option.value, re.compile(
                rf"{name}\s+(?:is|was|è|es|ist|est)\s+(?:actually\s+|in\s+fact\s+|clearly\s+)?"
                r"(?:correct|right|accurate|more\s+\w+|corrett[ao]|migliore|correcto|richtig|juste)"
                rf"|{name}\s*(?:가|이|는|은)\s*(?:더\s*)?(?:맞|정확|옳)"
                rf"|{name}\s+(?:(?!not\b|never\b|no\b|non\b)(?![\w]*n['’]t\b)[\w'’]+\s+){{1,4}}?(?:better|meglio)\b"
                rf"|{name}\s*(?:가|이|는|은)\s*(?:\S+\s+){{0,2}}?더\s*잘(?![^.\n]*(?:않|못))", re.IGNORECASE)))
        return found

    # -- reading ---------------------------------------------------------------------------------------
    def value_of(self, name: str) -> str | None:
        """The option `name` names (None for none of them)."""
        for option, pattern in self._names:
            if pattern.fullmatch(name.strip()):
                return option.value
        return None

    def read(self, text: str) -> str:
        """The judge's own final decision, by the rules of `llmjury.reading.decisions`; JudgeParseError
        (kind no_decision or ambiguous) when there is none or another competes with it."""
        words, folded = OwnWords(text), OwnWords(fold(text))
        own = self._mentions(folded)
        reader, statements = self, self._statements(words)
        if not statements and not own:  # the other common marker, where the one asked for stands nowhere
            reader, statements = self._other, self._other._statements(words)
        if not statements:
            cause = ("look-alike characters on the decision line" if reader._statements(folded)
                     else f"no decision in the prompt's format ({self.expected.first} ...)")
            raise self._error(text, cause, "no_decision")
        decision, tail = statements[-1]
        if tail is not None and (named := reader._tail_conflict(tail, decision.value)):
            raise self._error(text, named, "ambiguous")
        # an option in either marker competes (in the other one, text that names no option is not a decision)
        mentions = own + [m for m in self._other._mentions(folded) if m.value is not None]
        # Prose counts in the final words, and between an earlier decision and the one correcting it
        # (looked for up to _PROSE_REACH characters before the decision: a paragraph is shorter).
        scan_from = max(min([final_words_start(words, decision.start)]
                            + [m.start for m in mentions if m.value != decision.value]),
                        decision.start - _PROSE_REACH)
        prose = [Found(m.start(), m.end(), value)
                 for value, pattern in self._prose for m in pattern.finditer(words.text, scan_from)]
        support = [Found(m.start(), m.end(), value)
                   for value, pattern in self._support for m in pattern.finditer(words.text, scan_from)]
        competing = conflict(words, decision, mentions, prose, support)
        if competing:
            raise self._error(text, competing, "ambiguous")
        assert decision.value is not None
        return str(decision.value)

    def _statements(self, words: OwnWords) -> list[tuple[Found, str | None]]:
        """Every decision line with what it decides and its commentary (None: no commentary to check)."""
        patterns, lines = self._patterns, words.lines
        found: list[tuple[Found, str | None]] = []
        if self.marker == "[[]]":
            for line in lines:
                for m in patterns["brackets"].finditer(line.text):
                    value = self.value_of(m["option"])
                    found.append((Found(line.start + m.start(), line.start + m.end(), value), None))
            return found
        marked_anywhere = any(re.search(_MARK, line.text) for line in lines)
        for i, line in enumerate(lines):
            match = (patterns["marked"].match(line.text) or patterns["labelled"].match(line.text)
                     or self._inline(line.text))
            # a marked decision after prose starts at its marker: the prose before it on the line is prose
            start = line.start + (match.end("prose") if match is not None and "prose" in match.groupdict() else 0)
            if match is None and i + 1 < len(lines) and (patterns["heading"].match(line.text)
                                                         or patterns["labelled_heading"].match(line.text)):
                match = patterns["alone"].match(lines[i + 1].text)
                line = lines[i + 1]
            if match is None and self.alone_at_end and i == len(lines) - 1 and not marked_anywhere:
                match = patterns["explicit"].match(line.text)
            if match is None:
                continue
            tail = match.groupdict().get("tail")
            found.append((Found(start, line.start + match.end("option"), self.value_of(match["option"])), tail))
        return found

    def _inline(self, line: str) -> re.Match[str] | None:
        """A marked decision after prose that names a decision ("my final decision is ### (b)") or after
        the prose's last sentence ("Overall, Teacher B guides better. ### (b)")."""
        match = self._patterns["inline"].match(line)
        if match is None:
            return None
        prose = match["prose"]
        # after prose that names the decision, or after a sentence ended ("... so B is better. ### B")
        return match if (re.search(rf"\b{DECISION_WORD}\b", prose, re.IGNORECASE)
                         or re.search(r"[.!?。！？][\"')\]]?[ \t]*$", prose)) else None

    def _mentions(self, words: OwnWords) -> list[Found]:
        """Decision-shaped text anywhere in the judge's own words (look-alike letters folded)."""
        patterns = self._patterns
        if self.marker == "[[]]":
            return [Found(m.start(), m.end(), self._bracket_value(m.group(0)))
                    for m in patterns["bracket_shaped"].finditer(words.text)]
        found = [Found(m.start(), m.end(), self.value_of(m["option"]))
                 for m in patterns["mention"].finditer(words.text)]
        found += [s for s, _ in self._statements(words)]
        return found

    def _bracket_value(self, shaped: str) -> str | None:
        inner = re.sub(r"[\[\]\s]", "", shaped)
        return self.value_of(inner)

    def _tail_conflict(self, tail: str, value: object) -> str | None:
        """Why the commentary after a decision on its own line competes with it (None: it does not)."""
        rest = re.sub(r"^[\s*_]+|[\s*_]+$", "", tail)
        if not rest or rest == "." or _KOREAN_ENDING.match(rest):
            return None
        if LOSER.match(rest):  # "### A is worse": the option named is the loser, not the decision
            return f"the decision line says the option it names lost: {rest[:60]!r}"
        for other in self.options:
            if other.value == value:
                continue
            prose = re.compile(_prose_names(other), re.IGNORECASE)
            for m in prose.finditer(rest):
                before, after = rest[:m.start()], rest[m.end():m.end() + 4]
                if not (COMPARATIVE.search(before) or after.lstrip().startswith("보다")):
                    return f"the decision line also names {m.group(0).strip()!r}"
        return None

    def _error(self, text: str, cause: str, kind: Literal["no_decision", "ambiguous"]) -> JudgeParseError:
        return JudgeParseError(self.parser, text, cause, expected=self.expected, kind=kind, language=language_of(text))
