"""What the engine's progress-and-budget hook costs per fresh call (`Meter.admit` + `Meter.paid`).

Without a budget a call only adds to counters (the board file is rewritten at most twice a
second); with one, a paid call reads the other workers' board files and rewrites its own before
its concurrency slot is free, which is what bounds the overshoot. Free calls (offline, priced at
0) never write at once.

    python bench/meter.py --workers 4
"""

from __future__ import annotations

import argparse
import os
import tempfile
import timeit
from pathlib import Path

from llmjury.chat import Sample, Usage
from llmjury.pricing import PriceTable
from llmjury.running.budget import Budget
from llmjury.session.progress import Board, Meter, Tally
from llmjury.store.location import StoreLocation


def per_call_us(meter: Meter, provider: str, calls: int) -> float:
    answer = [Sample(text="x", usage=Usage(prompt_tokens=10, completion_tokens=5))]
    best = min(timeit.repeat(lambda: (meter.admit(provider), meter.paid(provider, answer)), number=calls, repeat=3))
    return best / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4, help="processes publishing on the board")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    prices = PriceTable.load()
    with tempfile.TemporaryDirectory() as folder:
        board = Board(StoreLocation("sqlite", Path(folder) / "board.sqlite"), "bench")
        for index in range(1, args.workers):
            board.publish(Tally(worker=f"gw{index}"))
        budget = Budget(1e9, prices)
        rows = [
            ("no budget, paid model", Meter("gw0", board, prices), "openai:gpt-4o-mini", args.calls * 10),
            ("budget, offline call", Meter("gw0", board, budget=budget), "offline", args.calls * 10),
            (f"budget, paid call, {args.workers} processes", Meter("gw0", board, budget=budget),
             "openai:gpt-4o-mini", args.calls),
        ]
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for label, meter, provider, calls in rows:
            print(f"{label:<34} {per_call_us(meter, provider, calls):10.1f} us/call")


if __name__ == "__main__":
    main()
