"""bench/adversarial.py's table: a row per parser under its family, a total per family of several
parsers, and the corpus total, each column summed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from script_module import script_module

BENCH = Path(__file__).resolve().parents[1] / "bench" / "adversarial.py"


def test_the_table_sums_each_family_and_the_corpus():
    bench = script_module(BENCH, "bench_adversarial")
    corpus = bench.corpus_module()
    columns = corpus.COLUMNS
    counts = {"arena_scores": Counter(entries=3, kept=2, unscored=1, repaired=1),
              "mtbench_pair": Counter(entries=2, kept=1, flips=1), "socratic": Counter(entries=4, kept=4, repaired=2)}
    lines = bench.table(counts, {"arena_scores": "arena", "mtbench_pair": "arena", "socratic": "socratic"}, columns)
    cells = {tuple(line.split()[:2]): line.split()[2:] for line in lines[1:]}
    assert list(cells) == [("arena", "arena_scores"), ("arena", "mtbench_pair"), ("arena", "(all)"),
                           ("socratic", "socratic"), ("corpus", "(all)")]
    assert dict(zip(columns, map(int, cells[("arena", "(all)")]), strict=True)) == {
        "entries": 5, "kept": 3, "flips": 1, "wrongly_scored": 0, "unscored": 1, "lost": 0, "repaired": 1}
    assert dict(zip(columns, map(int, cells[("corpus", "(all)")]), strict=True))["repaired"] == 3
    # the columns are the ones the tests count, and every family of the corpus has its parsers
    assert set(corpus.FAMILY_OF) == set(corpus.PARSERS) and "wrongly scored" in lines[0]
