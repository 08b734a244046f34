#!/usr/bin/env bash
# The steps of .github/workflows/evals.yml, runnable on any machine (tests/test_workflow.py runs them):
#
#   evals.sh baseline   run the eval suite and keep the run (verdicts, summary, cache) as the baseline
#   evals.sh compare    run the suite against the baseline's cache, compare with the baseline's run,
#                       append summary.md to $GITHUB_STEP_SUMMARY, exit with pytest's status (10 when
#                       a gate fails, 11 when one is inconclusive)
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
#                          of runs and catches a 15-point drop at n=60 in about 80%; bench/gating.py)
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

outcome() {  # a failing gate is red, an inconclusive one a warning on a green step, unless asked otherwise
  local status=$1
  case "$status" in
    10) annotate error "a gate failed: see the Decision in the step summary (exit 10)" ;;
    11) annotate warning "a gate is inconclusive: the data cannot tell yet (see the Decision in the step summary)"
        if [ "${LLMJURY_INCONCLUSIVE:-neutral}" != fail ]; then status=0; fi ;;
  esac
  return "$status"
}

annotate() {  # a GitHub Actions annotation on the run's page, a plain line elsewhere
  if [ -n "${GITHUB_ACTIONS:-}" ]; then echo "::$1 title=llmjury::$2"; else echo "llmjury $1: $2" >&2; fi
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
    if [ -f "$baseline/run/verdicts.jsonl.gz" ]; then
      if [ -f "$baseline/cache.sqlite" ] && [ ! -f "$cache" ]; then
        mkdir -p "$(dirname "$cache")" && copy_sqlite "$baseline/cache.sqlite" "$cache"
      fi
      args+=("--llm-baseline=$baseline/run")  # = form: a separate value is read as a test path for the rootdir
      if [ "${LLMJURY_ALLOW_JUDGE_CHANGE:-0}" = 1 ]; then args+=(--llm-baseline-allow-judge-change); fi
      for gate in "${gates[@]}"; do args+=(--llm-gate "$gate"); done
    else
      echo "no baseline in $baseline/: running without a comparison (delta gates skipped)" >&2
      for gate in "${gates[@]}"; do
        case "$gate" in *.delta*) ;; *) args+=(--llm-gate "$gate") ;; esac
      done
    fi
    status=0
    python "${args[@]}" || status=$?
    summarise
    outcome "$status" || exit $?
    exit 0
    ;;
  *)
    echo "usage: $0 baseline|compare" >&2
    exit 2
    ;;
esac
