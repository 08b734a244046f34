"""The shipped GitHub workflows pass a security review: every action pinned to the commit of the
release it names, and zizmor (offline, auditor persona: its strictest) finds nothing. `.ci/run`
installs zizmor; where it is missing, the zizmor tests skip and say so."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
#: `owner/repo@<40 hex>  # vX.Y.Z`: the commit is what runs, the comment what a reviewer reads.
PINNED = re.compile(r"uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s*v\d+\.\d+\.\d+\s*$")

needs_zizmor = pytest.mark.skipif(shutil.which("zizmor") is None,
                                  reason="zizmor is not installed (`pip install zizmor`; .ci/run installs it)")


def zizmor(*paths: Path) -> list[dict[str, object]]:
    """zizmor's findings on `paths`, offline, as its JSON report."""
    done = subprocess.run(["zizmor", "--offline", "--persona", "auditor", "--format", "json", *map(str, paths)],
                          capture_output=True, text=True, check=False)
    assert done.stdout.strip().startswith("["), done.stderr  # a parse error prints no report
    return list(json.loads(done.stdout))


def test_every_action_a_workflow_uses_is_pinned_to_a_commit_with_its_release_in_a_comment():
    assert WORKFLOWS, "no workflow under .github/workflows"
    for workflow in WORKFLOWS:
        lines = [line for line in workflow.read_text().splitlines() if re.search(r"^\s*(-\s*)?uses:", line)]
        assert lines, f"{workflow.name}: no action used"
        unpinned = [line.strip() for line in lines if not PINNED.search(line)]
        assert not unpinned, f"{workflow.name}: not pinned to a commit: {unpinned}"


def test_every_checkout_keeps_no_credentials():
    for workflow in WORKFLOWS:
        for job in yaml.safe_load(workflow.read_text())["jobs"].values():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("actions/checkout@"):
                    assert step.get("with", {}).get("persist-credentials") is False, workflow.name


@needs_zizmor
def test_zizmor_finds_nothing_in_the_shipped_workflows():
    findings = zizmor(*WORKFLOWS)
    assert findings == [], [(f["ident"], f["desc"]) for f in findings]


@needs_zizmor
def test_zizmor_flags_an_action_pinned_to_a_tag_and_a_checkout_that_keeps_credentials(tmp_path):
    shipped = (REPO / ".github" / "workflows" / "evals.yml").read_text()
    loose = re.sub(r"(actions/checkout)@[0-9a-f]{40}\s+#\s*v[\d.]+", r"\1@v4", shipped)
    loose = loose.replace("persist-credentials: false", "persist-credentials: true")
    assert loose != shipped
    copy = tmp_path / "evals.yml"
    copy.write_text(loose)
    assert sorted(f["ident"] for f in zizmor(copy)) == ["artipacked", "unpinned-uses"]
