#!/usr/bin/env bash
# The steps of .github/workflows/evals.yml, runnable on any machine:
#
#   evals.sh install    install the project (when it is a package) and llmjury: the version that made
#                       the baseline (lookup.json) unless llmjury is the project itself, else what
#                       the project installed, else the newest
#   evals.sh baseline   run the eval suite and keep the run (verdicts, summary, cache) as the baseline
#   evals.sh compare    run the suite against the baseline's cache, compare with the baseline's run,
#                       write the outcome to $GITHUB_STEP_SUMMARY and as an annotation, and exit:
#                       10 when a gate fails, 12 when the run could not be compared and that fails
#                       (LLMJURY_NOT_COMPARED), 11 when a gate is inconclusive and that fails
#
# The baseline folder is what .github/scripts/find_baseline.py fetched: lookup.json (what the search
# found, or why nothing) and, when found, run/ and cache.sqlite. A folder with neither is "absent".
#
# Environment (all optional):
#   LLMJURY_EVALS          what pytest runs (default: evals)
#   LLMJURY_ARGS           more pytest arguments, split on spaces (default: -n auto)
#   LLMJURY_GATES          gates, one a line, added to the suite's own llm_gates
#   LLMJURY_BASELINE_DIR   where the baseline is kept or found (default: baseline)
#   LLMJURY_REPORTS        the reports directory (default: reports)
#   LLMJURY_CACHE          the response cache (default: .llmjury/cache.sqlite)
#   LLMJURY_ITEM_FAILURES  what a failed assertion on one case does: record (default: an outcome,
#                          the gates decide the exit code, and main's baseline is kept) or fail
#   LLMJURY_ALLOW_JUDGE_CHANGE=1   compare even when the judges differ (a pull request that changes them)
#   LLMJURY_COMPARE_CONFIDENCE   the level of the paired intervals delta gates read (default 0.92: a
#                          delta.high>=0 gate then fails an unchanged pull request in at most about 5%
#                          of runs and catches a 15-point drop at n=60 in about 80%)
#   LLMJURY_NOT_COMPARED   what a run that could not be compared makes the step: auto (default: a
#                          notice and exit 0 only when main has never kept a baseline or none was
#                          looked for; an error and exit 12 when main has one that could not be used:
#                          expired, not fetched, judges that differ, a judge with no key), pass or fail
#   LLMJURY_INCONCLUSIVE   what an inconclusive gate (pytest's exit 11) makes the step: neutral (default:
#                          a warning, exit 0) or fail (exit 11)
#   GITHUB_STEP_SUMMARY    set by GitHub Actions: the job summary page
set -euo pipefail

mode=${1:-}
evals=${LLMJURY_EVALS:-evals}
baseline=${LLMJURY_BASELINE_DIR:-baseline}
reports=${LLMJURY_REPORTS:-reports}
cache=${LLMJURY_CACHE:-.llmjury/cache.sqlite}
read -r -a extra <<< "${LLMJURY_ARGS:--n auto}"

args=(-m pytest "$evals" "${extra[@]}" --llm-reports "$reports" --llm-cache-path "$cache"
      --llm-item-failures "${LLMJURY_ITEM_FAILURES:-record}"
      --llm-compare-confidence "${LLMJURY_COMPARE_CONFIDENCE:-0.92}")
gates=()
while IFS= read -r gate; do
  if [ -n "${gate//[[:space:]]/}" ]; then gates+=("$gate"); fi
done <<< "${LLMJURY_GATES:-}"

copy_sqlite() {  # a consistent copy of a live SQLite file (WAL included), not a byte copy
  python -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))' "$1" "$2"
}

copy_samples() {  # the samples a pull request replays, none of the run's own bookkeeping; says its size
  python - "$1" "$2" <<'EOF'
import sys
from pathlib import Path
from llmjury.running.cache import copy_samples
count = copy_samples(Path(sys.argv[1]), Path(sys.argv[2]))
print(f"baseline: cache {count} samples, {Path(sys.argv[2]).stat().st_size / 1e6:.2f} MB")
EOF
}

complete() {  # did the run behind this summary finish (every selected test reported)?
  python -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("complete") else 1)' "$1"
}

summarise() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$reports/latest/summary.md" ]; then
    cat "$reports/latest/summary.md" >> "$GITHUB_STEP_SUMMARY"
  fi
}

case "$mode" in
  install)
    if [ -f pyproject.toml ] || [ -f setup.py ]; then python -m pip install -e .; fi
    want=$(python -c 'import json, sys; print(json.load(open(sys.argv[1])).get("llmjury_version", ""))' \
           "$baseline/lookup.json" 2>/dev/null || true)
    have=$(python -c 'import importlib.metadata as m; print(m.version("llmjury"))' 2>/dev/null || true)
    own=$(python -c 'import llmjury, pathlib; print(pathlib.Path(llmjury.__file__).resolve()
                     .is_relative_to(pathlib.Path.cwd().resolve()))' 2>/dev/null || true)
    if [ "$own" != True ] && [ -n "$want" ] && [ "$have" != "$want" ]; then
      python -m pip install "llmjury==$want"  # the version that made the baseline: the same rules on both sides
    elif [ -z "$have" ]; then
      python -m pip install llmjury
    fi
    python -c 'import importlib.metadata as m; print("llmjury", m.version("llmjury"))'
    ;;
  baseline)
    for gate in "${gates[@]}"; do
      case "$gate" in *.delta*) ;; *) args+=(--llm-gate "$gate") ;; esac  # nothing to differ from on main
    done
    status=0
    python "${args[@]}" || status=$?
    summarise
    if [ -f "$reports/latest/verdicts.jsonl.gz" ] && ! complete "$reports/latest/summary.json"; then
      echo "baseline not kept: the run did not finish (see INCOMPLETE RUN above); the last baseline stands" >&2
      if [ "$status" = 0 ]; then status=1; fi
    elif [ -f "$reports/latest/verdicts.jsonl.gz" ]; then
      rm -rf "$baseline" && mkdir -p "$baseline/run"
      cp "$reports/latest/verdicts.jsonl.gz" "$reports/latest/summary.json" "$baseline/run/"
      if [ -f "$cache" ]; then copy_samples "$cache" "$baseline/cache.sqlite"; fi
      echo "baseline kept in $baseline/"
    fi
    exit "$status"
    ;;
  compare)
    if [ ! -f "$baseline/lookup.json" ]; then  # not fetched by find_baseline.py: say what is here
      mkdir -p "$baseline"
      if [ -f "$baseline/run/verdicts.jsonl.gz" ]; then
        echo '{"found": true}' > "$baseline/lookup.json"
      else
        printf '{"found": false, "reason": "absent", "message": "no baseline in %s/ (none was fetched)"}\n' \
          "$baseline" > "$baseline/lookup.json"
      fi
    fi
    if [ -f "$baseline/cache.sqlite" ] && [ ! -f "$cache" ]; then
      mkdir -p "$(dirname "$cache")" && copy_sqlite "$baseline/cache.sqlite" "$cache"
    fi
    args+=("--llm-baseline=$baseline")  # = form: a separate value is read as a test path for the rootdir
    if [ "${LLMJURY_ALLOW_JUDGE_CHANGE:-0}" = 1 ]; then args+=(--llm-baseline-allow-judge-change); fi
    for gate in "${gates[@]}"; do args+=(--llm-gate "$gate"); done
    status=0
    errors=$(mktemp)
    python "${args[@]}" 2> "$errors" || status=$?
    cat "$errors" >&2
    step=0
    python -m llmjury.step_outcome --status "$status" --reports "$reports" --baseline "$baseline" \
      --stderr "$errors" || step=$?
    rm -f "$errors"
    if [ "$status" != 4 ]; then summarise; fi  # a run stopped at start-up wrote no summary of its own
    exit "$step"
    ;;
  *)
    echo "usage: $0 install|baseline|compare" >&2
    exit 2
    ;;
esac
