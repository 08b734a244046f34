"""The readers over the reading corpus, counted per answer shape: every judge answer of
`tests/reading/corpus.jsonl` read by its family's own reader (the corpus and its counting are
`tests/reading_corpus.py`'s, the module `tests/test_reading_corpus.py` asserts with).

    python bench/reading.py

Columns: answers; correct (the judge's decision read); flipped (another decision read); wrongly
scored (a decision read where the judge stated none); lost (unscored although the decision was
clear); correctly unscored. Targets, printed beside: 0 flipped, 0 wrongly scored, at most 3% of
the clear decisions lost.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

CORPUS_MODULE = Path(__file__).resolve().parents[1] / "tests" / "reading_corpus.py"
HEADINGS = {"correct": "correct", "flipped": "flipped", "wrongly_scored": "wrongly scored", "lost": "lost",
            "correctly_unscored": "correctly unscored"}
#: The most each column may hold, as a share of the answers with a clear decision (None: no target).
TARGETS = {"flipped": 0.0, "wrongly_scored": 0.0, "lost": 0.03}


def corpus_module() -> ModuleType:
    """`tests/reading_corpus.py`, loaded by path: the one definition of the corpus and its outcomes."""
    spec = importlib.util.spec_from_file_location("reading_corpus", CORPUS_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def table(counts: dict[str, Counter[str]]) -> list[str]:
    """One row per shape and one for the corpus, each cell beside its target where there is one."""
    widths = [max(len(h), 7) + 2 for h in HEADINGS.values()]

    def line(name: str, answers: str, cells: list[str]) -> str:
        return f"{name:<12}{answers:>9}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))

    def row(name: str, c: Counter[str]) -> str:
        clear = c["correct"] + c["flipped"] + c["lost"]
        cells = []
        for column in HEADINGS:
            target = TARGETS.get(column)
            limit = "" if target is None else f" ({'0' if target == 0 else f'≤{target * clear:.0f}'})"
            cells.append(f"{c[column]}{limit}")
        return line(name, str(sum(c[column] for column in HEADINGS)), cells)

    lines = [line("shape", "answers", list(HEADINGS.values()))]
    lines += [row(shape, counts[shape]) for shape in sorted(counts)]
    lines.append(row("all", sum(counts.values(), Counter())))
    return lines


def missed(counts: dict[str, Counter[str]]) -> list[str]:
    """The targets the counts miss, one line each."""
    total = sum(counts.values(), Counter())
    clear = total["correct"] + total["flipped"] + total["lost"]
    return [f"{HEADINGS[column]}: {total[column]} > {share * clear:.1f}" for column, share in TARGETS.items()
            if total[column] > share * clear]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    corpus = corpus_module()
    counts = corpus.counts(corpus.load())
    print("\n".join(table(counts)))
    print("targets (in brackets): 0 flipped, 0 wrongly scored, at most 3% of clear decisions lost")
    for line in missed(counts):
        print(f"  missed: {line}")
    return 1 if missed(counts) else 0


if __name__ == "__main__":
    sys.exit(main())
