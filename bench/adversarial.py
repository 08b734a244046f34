"""The adversarial corpus end to end, counted per family: every judge answer of
`fixtures/adversarial/` served by a fake OpenAI-compatible server through its family's judge call
path (repair calls included), with the corpus, the server and the counting of
`tests/adversarial_corpus.py`, the module `tests/test_adversarial.py` asserts with.

    python bench/adversarial.py

Columns: entries; true decisions kept; flips (a decision read as another); wrongly scored (a score
where the judge decided nothing); unscored; lost (unscored although the judge's decision was
clear); repaired (scored after a repair call asked for the decision alone). Reference: 0 flips, 0
wrongly scored, 0 lost.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType

from llmjury.families import discover, offline_answers
from llmjury.running.cache import CacheMode, SampleStore
from llmjury.running.engine import Engine
from llmjury.running.settings import Settings
from llmjury.store.location import StoreLocation

CORPUS_MODULE = Path(__file__).resolve().parents[1] / "tests" / "adversarial_corpus.py"
HEADINGS = {"entries": "entries", "kept": "kept", "flips": "flips", "wrongly_scored": "wrongly scored",
            "unscored": "unscored", "lost": "lost", "repaired": "repaired"}


def corpus_module() -> ModuleType:
    """`tests/adversarial_corpus.py`, loaded by path: the one definition of the corpus run."""
    spec = importlib.util.spec_from_file_location("adversarial_corpus", CORPUS_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def table(counts: dict[str, Counter[str]], family_of: dict[str, str], columns: tuple[str, ...]) -> list[str]:
    """One row per parser under its family, a total row per family and one for the corpus."""
    widths = [max(len(HEADINGS[c]), 5) + 2 for c in columns]

    def line(family: str, parser: str, cells: list[str]) -> str:
        return f"{family:<11}{parser:<14}" + "".join(f"{cell:>{w}}" for cell, w in zip(cells, widths, strict=True))

    def row(family: str, parser: str, c: Counter[str]) -> str:
        return line(family, parser, [str(c[column]) for column in columns])

    lines = [line("family", "parser", [HEADINGS[c] for c in columns])]
    total: Counter[str] = Counter()
    for family in sorted(set(family_of.values())):
        parsers = sorted(p for p in counts if family_of[p] == family)
        subtotal = sum((counts[p] for p in parsers), Counter())
        lines += [row(family, p, counts[p]) for p in parsers]
        if len(parsers) > 1:
            lines.append(row(family, "(all)", subtotal))
        total += subtotal
    lines.append(row("corpus", "(all)", total))
    return lines


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    corpus = corpus_module()
    counts: dict[str, Counter[str]] = {}
    wrong: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        engines: list[Engine] = []

        def make_engine() -> Engine:
            settings = Settings(cache_mode=CacheMode.RECORD, retry_base_wait=0.01, retry_max_wait=0.2)
            store = SampleStore(StoreLocation("sqlite", Path(folder) / f"cache-{len(engines)}.sqlite"))
            engine = Engine(settings, store, "bench", offline_answers(discover()))
            engines.append(engine)
            return engine

        for parser in sorted(corpus.PARSERS):
            counts[parser], misread = corpus.run_corpus(make_engine, parser)
            wrong += [f"{parser} {line}" for line in misread]
        for engine in engines:
            engine.close()
    print("\n".join(table(counts, corpus.FAMILY_OF, corpus.COLUMNS)))
    print("reference: 0 flips, 0 wrongly scored, 0 lost")
    for line in wrong:
        print(f"  misread: {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
