"""`llmjury workflow`: the pull-request workflow a project starts from, written into its repository.

The files are the ones this project runs on itself (`.github/workflows/evals.yml` and the steps it
calls, `.github/scripts/evals.sh` and `find_baseline.py`), shipped in the package so a new
repository needs nothing else.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

#: Shipped file -> where it goes in a repository.
WORKFLOW_FILES = {"evals.yml": Path(".github/workflows/evals.yml"), "evals.sh": Path(".github/scripts/evals.sh"),
                  "find_baseline.py": Path(".github/scripts/find_baseline.py")}


def write_workflow(root: Path, *, force: bool = False) -> list[Path]:
    """Write the workflow files under `root`; an existing file is kept unless `force` (a FileExistsError names it)."""
    targets = {name: root / path for name, path in WORKFLOW_FILES.items()}
    present = [path for path in targets.values() if path.exists()]
    if present and not force:
        raise FileExistsError(f"{present[0]} exists: pass --force to overwrite it")
    shipped = files("llmjury") / "data" / "workflow"
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((shipped / name).read_text(encoding="utf-8"), encoding="utf-8")
        if target.suffix in (".sh", ".py"):
            target.chmod(0o755)
    return list(targets.values())
