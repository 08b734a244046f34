"""Reading the pairwise judge's decision (the robust k-run majority lives in `llmjury.majority`)."""

from __future__ import annotations

import re
from typing import Literal

from llmjury.decision_line import BOLD, compile_line, fold, looks_alike, own_lines
from llmjury.errors import JudgeParseError
from llmjury.running.decision_field import DecisionField

PARSER_VERSION = "socratic-decision/3"
Decision = Literal["a", "b", "c"]

#: What the judge is asked for when its answer holds no readable decision (the repair call).
DECISION_FORMAT = "### (a) Teacher A\nor\n### (b) Teacher B\nor\n### (c) Equivalent"

#: The same options as a schema field (llmjury.running.decision_field): the prompt's three, as it lists them.
DECISION_FIELD = DecisionField({"(a) Teacher A": "a", "(b) Teacher B": "b", "(c) Equivalent": "c"}, PARSER_VERSION)

_LABEL = r"(?:(?:final\s+|overall\s+)?(?:decision|verdict|answer)\s*:?\s*)?"
# An option as the prompt lists it: "(b)", "(b) Teacher B", "Teacher B", "b", "(c) Equivalent", "Equivalent".
_OPTION = (rf"(?:\(\s*(?P<letter>[abc])\s*\)(?:\s+{BOLD}(?:teacher\s+(?P<named>[ab])|(?P<equal>equivalent)){BOLD})?"
           r"|teacher\s+(?P<teacher>[ab])|(?P<bare>[abc])|(?P<word>equivalent))")
_MARKED = compile_line(rf"###\s*{BOLD}\s*{_LABEL}{BOLD}\s*{_OPTION}")
_HEADING = compile_line(rf"###\s*{BOLD}\s*{_LABEL}")
_EXPLICIT = compile_line(rf"(?=\()({_OPTION})")
# Decision-shaped text elsewhere: a `###` followed by an option, or a line that is only an option.
_ELSEWHERE = re.compile(rf"###\s*{BOLD}\s*{_LABEL}{BOLD}\s*(?:\(\s*[abc]\s*\)|teacher\s+[ab]\b|[abc]\b|equivalent)",
                        re.IGNORECASE)


def parse_decision(text: str) -> Decision:
    """The decision on the final line of the judge's own words (quotations blanked), as the prompt
    asks it "after ###": `### (b)`, `### (b) Teacher B`, `### Teacher B`, `### b` or
    `### (c) Equivalent` (an optional `Final decision:` label allowed), or a `###` heading line
    followed by the option alone. Without any `###`, a final line that is an explicit option alone
    (`(a) Teacher A`, as small models answer) is the decision.

    Anything else on the decision line ("### Teacher B (not (a), ...)", "### In a word: B"), a
    look-alike letter, or a second decision-shaped `###` or option line anywhere else in the
    answer is ambiguous: JudgeParseError, never a guess.
    """
    lines = own_lines(text)
    if not lines:
        raise _ambiguous(text, "no final decision after \"###\"")
    last = lines[-1].text
    used = 1
    match = _MARKED.match(last)
    if match is None and (explicit := _EXPLICIT.match(last) or _bare_option(last)) is not None:
        if len(lines) > 1 and _HEADING.match(lines[-2].text):
            match, used = explicit, 2
        elif not any("###" in line.text for line in lines) and _EXPLICIT.match(last):
            match = explicit
    if match is None:
        cause = "look-alike characters on the decision line" if looks_alike(last) else (
            f"the final line {last.strip()[:80]!r} is not a decision in the prompt's format")
        raise _ambiguous(text, cause)
    decision = _decision(match)
    if decision is None:
        raise _ambiguous(text, f"the decision line {last.strip()[:80]!r} names two different options")
    for line in lines[:-used]:
        folded = fold(line.text)
        if _ELSEWHERE.search(folded) or _EXPLICIT.match(folded):
            raise _ambiguous(text, f"a second decision-shaped line {line.text.strip()[:80]!r}")
    return decision


def _bare_option(line: str) -> re.Match[str] | None:
    return compile_line(_OPTION).match(line)


def _decision(match: re.Match[str]) -> Decision | None:
    groups = match.groupdict()
    letter = (groups["letter"] or groups["teacher"] or groups["bare"] or "").lower()
    if groups["word"]:
        letter = "c"
    named = (groups["named"] or "").lower() or ("c" if groups["equal"] else "")
    if named and letter and named != letter:
        return None
    return (letter or named) or None  # type: ignore[return-value]


def _ambiguous(text: str, cause: str) -> JudgeParseError:
    return JudgeParseError(PARSER_VERSION, text, cause, expected=DECISION_FORMAT)
