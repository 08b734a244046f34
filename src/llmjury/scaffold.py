"""`llmjury workflow`: the pull-request workflow a project starts from, written into its repository.

The files are the ones this project runs on itself (`.github/workflows/evals.yml` and the steps it
calls, `.github/scripts/evals.sh` and `find_baseline.py`), shipped in the package so a new
repository needs nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from llmjury.errors import ConfigError

#: Shipped file -> where it goes in a repository.
WORKFLOW_FILES = {"evals.yml": Path(".github/workflows/evals.yml"), "evals.sh": Path(".github/scripts/evals.sh"),
                  "find_baseline.py": Path(".github/scripts/find_baseline.py")}


#: The shipped workflow's gate block: llmjury's own families' gates, which another project has none of.
_GATES = re.compile(r"^  LLMJURY_GATES: \|\n(?:    .*\n)+", re.MULTILINE)
#: What a project gets with no `--gate`: no gate until it names its own (its first pull request would
#: otherwise fail on families it does not have).
NO_GATES = ("  # No gate yet: name your families' delta gates, for example\n"
            '  #   custom.compare.test_answer.win_rate.delta.high>=0\n'
            '  LLMJURY_GATES: ""\n')


def with_gates(workflow: str, gates: Sequence[str]) -> str:
    """The workflow with `gates` as its LLMJURY_GATES block (none: an empty block saying how to add them)."""
    for gate in gates:
        if not gate.strip() or "\n" in gate:
            raise ConfigError(f"llmjury workflow: --gate {gate!r} is not one gate")
    block = "".join(f"    {gate.strip()}\n" for gate in gates)
    return _GATES.sub(lambda _: f"  LLMJURY_GATES: |\n{block}" if gates else NO_GATES, workflow, count=1)


def write_workflow(root: Path, *, force: bool = False, gates: Sequence[str] = ()) -> list[Path]:
    """Write the workflow files under `root` with `gates` as its delta gates; an existing file is kept
    unless `force` (a FileExistsError names it)."""
    targets = {name: root / path for name, path in WORKFLOW_FILES.items()}
    present = [path for path in targets.values() if path.exists()]
    if present and not force:
        raise FileExistsError(f"{present[0]} exists: pass --force to overwrite it")
    shipped = files("llmjury") / "data" / "workflow"
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (shipped / name).read_text(encoding="utf-8")
        target.write_text(with_gates(text, gates) if name == "evals.yml" else text, encoding="utf-8")
        if target.suffix in (".sh", ".py"):
            target.chmod(0o755)
    return list(targets.values())
