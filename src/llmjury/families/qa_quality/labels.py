"""People's labels of Q&A pairs: the vocabularies a labelled file may use.

A labelled file uses one vocabulary, ordered worst to best: SemEval-2016's Bad < PotentiallyUseful <
Good, or seed 001's grades remove < low < medium < high. The judge's agreement with them is measured
in `agreement`.
"""

from __future__ import annotations

VOCABULARIES: dict[str, tuple[str, ...]] = {
    "SemEval": ("Bad", "PotentiallyUseful", "Good"),
    "grade": ("remove", "low", "medium", "high"),
}
#: How the shipped SemEval-2016 data is named in reports; any other dataset goes by its own name.
KNOWN = {"semeval": "SemEval-2016 Task 3 subtask A (Qatar Living), human Good / PotentiallyUseful / Bad"}


def canonical(label: str) -> tuple[str, str] | None:
    """(vocabulary, label as the vocabulary spells it) for a label in any letter case, else None."""
    for name, labels in VOCABULARIES.items():
        for known in labels:
            if label.strip().lower() == known.lower():
                return name, known
    return None


def vocabulary(label: str) -> tuple[str, ...]:
    found = canonical(label)
    if found is None:
        raise ValueError(f"unknown label {label!r}")
    return VOCABULARIES[found[0]]


def describe(dataset: str, labels: tuple[str, ...]) -> str:
    return KNOWN.get(dataset) or f"{dataset}, human {' / '.join(reversed(labels))}"
