"""Find and download the baseline a pull request is compared with, and say what was found.

Run by the workflow before llmjury is installed (it needs only Python and the GitHub CLI, so the
version of llmjury that made the baseline can be installed after it):

    python .github/scripts/find_baseline.py --dir baseline --branch main --head SHA

It lists the workflow's finished runs on the branch and takes the first that still holds a
baseline artifact (`llmjury-baseline-*`): the run of the pull request's merge base with the branch
when there is one, else the newest, falling back over older runs (a cancelled run, a failed one
that kept nothing, an expired artifact). Whatever happens it writes `lookup.json` in the folder
(llmjury.baseline_lookup reads it): the run, commit and age of the baseline, or why there is none,
so the compare step can say so instead of passing silently.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: Every baseline artifact's name starts so (the rest names the run and its attempt).
ARTIFACT = "llmjury-baseline"
#: How many of the branch's runs are searched, newest first.
RUNS = 50


class GhError(RuntimeError):
    """A `gh` command failed; its message says which and why."""


def gh(*args: str) -> str:
    """The output of a `gh` command, or a GhError with its stderr."""
    try:
        done = subprocess.run(["gh", *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise GhError(f"gh {' '.join(args[:2])}: {exc}") from None
    if done.returncode != 0:
        raise GhError(f"gh {' '.join(args[:2])}: {done.stderr.strip() or f'exit {done.returncode}'}")
    return done.stdout


def merge_base(branch: str, head: str) -> str | None:
    """The commit where the pull request's head left the branch (`git merge-base`), when git knows both."""
    for ref in (f"origin/{branch}", branch):
        done = subprocess.run(["git", "merge-base", ref, head], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return None


def runs(repo: str, workflow: str, branch: str) -> list[dict[str, Any]]:
    """The workflow's finished runs on the branch that could have kept a baseline, newest first."""
    listed = json.loads(gh("run", "list", "--repo", repo, "--workflow", workflow, "--branch", branch,
                           "--limit", str(RUNS), "--json", "databaseId,headSha,status,conclusion,createdAt,event,url"))
    finished = [run for run in listed if run.get("status") == "completed" and run.get("event") == "push"]
    return sorted(finished, key=lambda run: str(run.get("createdAt", "")), reverse=True)


def baseline_artifacts(repo: str, run_id: int) -> list[dict[str, Any]]:
    """A run's baseline artifacts, the last attempt's first."""
    listed = json.loads(gh("api", f"repos/{repo}/actions/runs/{run_id}/artifacts"))
    found = [a for a in listed.get("artifacts", []) if str(a.get("name", "")).startswith(ARTIFACT)]
    return sorted(found, key=lambda a: str(a.get("created_at", "")), reverse=True)


def llmjury_version(folder: Path) -> str | None:
    """The llmjury version the baseline run was made with (its summary.json), when it says."""
    try:
        summary = json.loads((folder / "run" / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = summary.get("run", {}).get("llmjury_version") if isinstance(summary, dict) else None
    return str(version) if version else None


def find(folder: Path, repo: str, workflow: str, branch: str, head: str | None) -> dict[str, Any]:
    """Search, download the first baseline found into `folder`, and return the lookup."""
    base = merge_base(branch, head) if head else None
    lookup: dict[str, Any] = {"found": False, "branch": branch, "merge_base": base}
    try:
        candidates = runs(repo, workflow, branch)
    except (GhError, ValueError) as exc:
        return lookup | {"reason": "unavailable", "message": f"the runs of {branch} could not be listed: {exc}"}
    # The merge base's run first: the pull request changed what it changed since then, nothing more.
    candidates.sort(key=lambda run: run.get("headSha") != base)
    expired = failed = 0
    problems: list[str] = []
    for run in candidates:
        if run.get("conclusion") == "cancelled":
            continue  # cancelled before its upload: it kept nothing
        try:
            artifacts = baseline_artifacts(repo, int(run["databaseId"]))
        except (GhError, ValueError) as exc:
            failed += 1
            problems.append(str(exc))
            continue
        live = [a for a in artifacts if not a.get("expired")]
        expired += len(artifacts) > 0 and not live
        if not live:
            continue
        try:
            gh("run", "download", str(run["databaseId"]), "--repo", repo, "--name", str(live[0]["name"]),
               "--dir", str(folder))
        except GhError as exc:
            failed += 1
            problems.append(str(exc))
            continue
        return lookup | {"found": True, "run_id": int(run["databaseId"]), "run_url": run.get("url"),
                         "commit": run.get("headSha"), "created_at": run.get("createdAt"),
                         "at_merge_base": base is not None and run.get("headSha") == base,
                         "llmjury_version": llmjury_version(folder)}
    if failed:
        return lookup | {"reason": "unavailable",
                         "message": f"{branch} has a baseline that could not be fetched ({problems[-1]})"}
    if expired:
        return lookup | {"reason": "expired", "message": f"every baseline {branch} kept has expired "
                                                          f"({expired} run(s)); push to {branch} to make a new one"}
    return lookup | {"reason": "first", "message": f"{branch} has never kept a baseline: "
                                                   "this pull request is the first to be gated"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("baseline"), help="where the baseline goes")
    parser.add_argument("--branch", required=True, help="the branch that keeps baselines (the default branch)")
    parser.add_argument("--head", help="the pull request's head commit, for its merge base with the branch")
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY", ""), help="owner/name")
    parser.add_argument("--workflow", default="evals.yml", help="the workflow file whose runs keep baselines")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    lookup = find(args.dir, args.repo, args.workflow, args.branch, args.head)
    (args.dir / "lookup.json").write_text(json.dumps({k: v for k, v in lookup.items() if v is not None}, indent=2)
                                          + "\n", encoding="utf-8")
    if lookup["found"]:
        print(f"baseline: run {lookup['run_id']} of commit {str(lookup['commit'])[:12]}"
              f"{' (the merge base)' if lookup['at_merge_base'] else ''}, made by llmjury "
              f"{lookup.get('llmjury_version') or '(version not recorded)'}")
    else:
        print(f"no baseline: {lookup['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
