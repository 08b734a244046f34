"""Throughput of the planning phase beside the bare SDK: N calls of latency L, C in flight.

Starts a local fake OpenAI-compatible server that sleeps L seconds per request and measures, in
one run and against the same server:
- `bare SDK`: one Python process with `openai.AsyncOpenAI` and an `asyncio.Semaphore(C)`, start-up
  included: the floor any tool built on the SDK pays;
- llmjury at each `-n`: a one-pipeline eval of N cases run by pytest with the default `record`
  cache mode (a fresh cache file per run, so every call is paid).
Each row prints its wall time and its ratio to the bare row; `ideal` is N*L/C.

    python bench/throughput.py --cases 1000 --latency 0.2 --concurrency 64
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

BARE = textwrap.dedent("""
    import asyncio, sys
    import openai

    async def main(base_url, cases, concurrency):
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        gate = asyncio.Semaphore(concurrency)

        async def one(i):
            async with gate:
                response = await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": f"case-{i:05d}"}])
                return response.choices[0].message.content

        answers = await asyncio.gather(*(one(i) for i in range(cases)))
        assert len(answers) == cases
        await client.close()

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
""")


def run_llmjury(folder: Path, base_url: str, workers: str, concurrency: int, run: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:deepeval", "-p", "no:cacheprovider", "-n", workers,
         "--llm-cache", "record", "--llm-cache-path", str(folder / f"cache-{run}.sqlite"),
         "--llm-concurrency", str(concurrency), "--llm-reports", str(folder / "reports"),
         "--llm-judge", f"openai:bench;base_url={base_url}", "-o", "markers=bench: bench"],
        cwd=folder, check=True, capture_output=True,
    )
    return time.perf_counter() - started


def run_bare(folder: Path, base_url: str, cases: int, concurrency: int) -> float:
    script = folder / "bare_sdk.py"
    script.write_text(BARE)
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script), base_url, str(cases), str(concurrency)], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", default="0,2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_bench.py").write_text(SUITE.format(cases=args.cases))
        ideal = args.cases * args.latency / args.concurrency
        print(f"N={args.cases} calls, L={args.latency}s, C={args.concurrency}: ideal N*L/C = {ideal:.2f}s")
        print(f"{'run':<14} {'wall':>8} {'vs bare':>8}  peak in flight")
        with FakeOpenAI(latency=args.latency) as server:
            bare = run_bare(folder, server.base_url, args.cases, args.concurrency)
            print(f"{'bare SDK':<14} {bare:>7.2f}s {1:>7.2f}x  {server.max_in_flight}")
        for run, workers in enumerate(args.workers.split(",")):
            with FakeOpenAI(latency=args.latency) as server:
                wall = run_llmjury(folder, server.base_url, workers, args.concurrency, run)
                print(f"{'llmjury -n ' + workers:<14} {wall:>7.2f}s {wall / bare:>7.2f}x  {server.max_in_flight}")


if __name__ == "__main__":
    main()
