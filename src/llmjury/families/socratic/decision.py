"""Reading the pairwise judge's decision (the robust k-run majority lives in `llmjury.majority`):
the prompt's three options after "###", read by `llmjury.reading.choice` (its rules are there)."""

from __future__ import annotations

from typing import Literal, cast

from llmjury.asked import Asked
from llmjury.reading.choice import Choice, Option
from llmjury.running.decision_field import DecisionField

PARSER_VERSION = "socratic-decision/5"
Decision = Literal["a", "b", "c"]

#: What the judge is asked for when its answer holds no readable decision (the repair call).
DECISION_FORMAT = Asked(alternatives=("### (a) Teacher A", "### (b) Teacher B", "### (c) Equivalent"))

#: The prompt's options as it lists them ("(b) Teacher B"), and the shorter names a judge uses for them.
DECISION_CHOICE = Choice(PARSER_VERSION, (Option("a", ("(a) Teacher A", "Teacher A", "(a)", "a")),
                                          Option("b", ("(b) Teacher B", "Teacher B", "(b)", "b")),
                                          Option("c", ("(c) Equivalent", "Equivalent", "(c)", "c"))),
                         marker="###", expected=DECISION_FORMAT, alone_at_end=True, ties=frozenset({"c"}))

#: The same options as a schema field (llmjury.running.decision_field): the prompt's three, as it lists them.
DECISION_FIELD = DecisionField({"(a) Teacher A": "a", "(b) Teacher B": "b", "(c) Equivalent": "c"}, PARSER_VERSION)


def parse_decision(text: str) -> Decision:
    """The judge's own final decision after "###" (`### (b)`, `### (b) Teacher B`, `### Teacher B`,
    `### 최종 결정: (b) 선생님 B`, a `###` heading with the option on the next line, or an explicit
    option alone on the final line where no "###" stands): see `llmjury.reading.choice`."""
    return cast(Decision, DECISION_CHOICE.read(text))
