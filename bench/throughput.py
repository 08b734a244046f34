"""Throughput of the planning phase: N calls of latency L under a concurrency limit C.

Starts a local fake OpenAI-compatible server that sleeps L seconds per request, writes a
one-pipeline eval of N cases, runs it with pytest at several `-n`, and prints the ideal wall
time N*L/C next to the measured one. The same run with L = 0 shows the fixed cost (Python and
pytest start-up, collection, the client and fake server's own CPU per call), which the ratio
to ideal also contains.

    python bench/throughput.py --cases 400 --latency 1.0 --concurrency 50
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from llmjury.testing import FakeOpenAI

SUITE = textwrap.dedent("""
    import llmjury
    from llmjury import Case, JudgeConfig, Outcome, Verdict
    from llmjury.chat import chat

    CASES = [Case(id=f"case-{{i:05d}}", family="bench") for i in range({cases})]

    async def judge(case, jury):
        completion = await jury.complete("judge", "bench", chat(("user", case.id)))
        return Outcome([Verdict(case_id=case.id, family="bench", judge=JudgeConfig(provider=completion.provider))])

    @llmjury.pipeline(judge)
    @llmjury.parametrize(CASES)
    def test_case(outcome):
        assert outcome.verdict.valid
""")


def run(folder: Path, base_url: str, workers: str, concurrency: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:deepeval", "-p", "no:cacheprovider", "-n", workers,
         "--llm-cache", "off", "--llm-concurrency", str(concurrency),
         "--llm-judge", f"openai:bench;base_url={base_url}", "-o", "markers=bench: bench"],
        cwd=folder, check=True, capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--workers", default="0,2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_bench.py").write_text(SUITE.format(cases=args.cases))
        ideal = args.cases * args.latency / args.concurrency
        print(f"N={args.cases} calls, L={args.latency}s, C={args.concurrency}: ideal N*L/C = {ideal:.2f}s")
        print(f"{'-n':>4} {'wall at L=0':>12} {'wall':>8} {'wall/ideal':>11}")
        for workers in args.workers.split(","):
            with FakeOpenAI() as server:
                startup = run(folder, server.base_url, workers, args.concurrency)
            with FakeOpenAI(latency=args.latency) as server:
                wall = run(folder, server.base_url, workers, args.concurrency)
                peak = server.max_in_flight
            print(f"{workers:>4} {startup:>11.2f}s {wall:>7.2f}s {wall / ideal:>10.2f}x   (peak in flight {peak})")


if __name__ == "__main__":
    main()
