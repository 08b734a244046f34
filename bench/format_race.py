"""How often a run dies with INTERNALERROR while failures are formatted on two threads at once: the
engine thread formatting a planned test's failure and pytest's thread formatting another's. On
CPython 3.11 `traceback` parses source with `ast.parse` for its caret anchors, whose recursion depth
is shared by threads; two at once stopped a run with `SystemError: AST constructor recursion depth
mismatch`. Each round runs, under `-n 2`, a suite whose 120 planned async tests all fail.

    python bench/format_race.py --rounds 50

Reference, issue 22 (before llmjury.tracebacks): 2 INTERNALERRORs in a handful of faulted runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: The planned async tests a round runs; every one fails.
CASES = 120
SUITE = '''
import llmjury
from llmjury import Case


def nested(depth, case):
    if depth == 0:
        values = {"answer": case.id}
        assert values["answer"] + values["answer"] == "never", f"wrong answer for {case.id}"
    return nested(depth - 1, case)


@llmjury.parametrize([Case(id=f"q{i:03d}", family="answers") for i in range({cases})])
async def test_answer(case, jury):
    nested(20, case)
'''
INI = """[pytest]
addopts = -p no:cacheprovider -p no:randomly -p no:deepeval -p no:asyncio -p no:benchmark
"""


def write_suite(root: Path, cases: int = CASES) -> None:
    """The suite and its ini in `root`: `cases` planned async tests that fail with a deep traceback."""
    (root / "pytest.ini").write_text(INI)
    (root / "test_race.py").write_text(SUITE.replace("{cases}", str(cases)))


def run_suite(root: Path) -> str:
    """Run the suite in `root` once at -n 2; what pytest printed (an INTERNALERROR says it crashed)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:randomly"], cwd=root,
                         capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                         check=False)
    return run.stdout + run.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50, help="pytest runs (default 50)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: must be at least 1")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_suite(root)
        internal_errors = sum("INTERNALERROR" in run_suite(root) for _ in range(args.rounds))
    print(f"{'runs':>6} {'INTERNALERROR':>14}   reference (before llmjury.tracebacks)")
    print(f"{args.rounds:>6} {internal_errors:>14}   2 in a handful of faulted runs at -n 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
