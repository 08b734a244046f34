"""Time of reading judge answers: the shipped adversarial corpus and the reading corpus through every
reader, quotation blanking of long answers with unclosed quotation marks, beside a 0.05 s per answer
target, and whole readers on answers 20-30 times longer than a judge writes, beside 1 s.

    python bench/parsers.py
    python bench/parsers.py --target 0.05

A judge answer is at most a few thousand characters (max_tokens 900); the long inputs here are ten
times that, built to make a quotation pattern scan far (every mark opened, none closed).
"""

from __future__ import annotations

import argparse
import contextlib
import time

from adversarial import corpus_module
from reading import corpus_module as reading_corpus

from llmjury.errors import JudgeParseError
from llmjury.families.socratic.decision import parse_decision
from llmjury.judgement.judges import parse_choice
from llmjury.reading.quotes import unquoted

#: Seconds for a whole reader on a long answer (every word a name the prose rules look at).
LONG = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=float, default=0.05, help="seconds per answer")
    target = parser.parse_args().target
    corpus = corpus_module()  # the corpus and its parsers as the tests read them
    rows = corpus.ROWS
    start = time.perf_counter()
    for row in rows:
        with contextlib.suppress(JudgeParseError):
            corpus.PARSERS[row["parser"]](row["text"])
    each = (time.perf_counter() - start) / len(rows)
    print(f"corpus: {len(rows)} answers, {each * 1000:.3f} ms per answer (target {target * 1000:.0f} ms)")
    reading = reading_corpus()
    answers = reading.load()
    start = time.perf_counter()
    for row in answers:
        reading.read(row)
    each = (time.perf_counter() - start) / len(answers)
    print(f"reading corpus: {len(answers)} answers, {each * 1000:.3f} ms per answer (target {target * 1000:.0f} ms)")
    for name, text in {"socratic: prose x100,000 then ### (b)": "Teacher A is better than Teacher B at " * 2650
                       + "\n### (b)", "compare: ### B then prose x100,000": "### B\n" + "Response A " * 9000,
                       "socratic: Korean x70,000 with zero-width spaces": "선생님 B가 더 낫습니다\u200b " * 5000
                       + "\n### (b)"}.items():
        reader = parse_decision if name.startswith("socratic") else parse_choice
        start = time.perf_counter()
        with contextlib.suppress(JudgeParseError):
            reader(text)
        took = time.perf_counter() - start
        print(f"{name:<48} {took:.3f} s (target {LONG:.2f} s){'' if took <= LONG else '  SLOWER'}")
    for name, text in {"unclosed « x40,000": "« " * 20000, "unclosed “ x40,000": "“ " * 20000,
                       "unclosed ' x60,000": " 'x" * 20000, "unclosed <q> x40,000": "<q> " * 10000,
                       "words x100,000 then ### (b)": "word " * 20000 + "\n### (b)"}.items():
        start = time.perf_counter()
        unquoted(text)
        took = time.perf_counter() - start
        print(f"{name:<30} {took:.3f} s (target {target:.2f} s){'' if took <= target else '  SLOWER'}")


if __name__ == "__main__":
    main()
