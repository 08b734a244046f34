"""Writing a run's reports. `summary.json` is the single source: Markdown, CSV and the terminal
table are rendered from it (and from the saved verdicts), never from live state."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from llmjury.family import Family
from llmjury.gates import GateResult
from llmjury.loading import LoadReport

OFFLINE_BANNER = (
    "> **Offline run.** Every response and verdict here came from llmjury's built-in offline "
    "heuristics, not from an LLM: the numbers exercise the pipeline, they say nothing about any model."
)


def write_run(directory: Path, summary: dict[str, Any], records: list[dict[str, Any]],
              gates: list[GateResult], families: Mapping[str, Family]) -> Path:
    """Write `directory/<run-id>/` and mirror it to `directory/latest/`; returns the run folder."""
    run_dir = directory / summary["run"]["id"]
    run_dir.mkdir(parents=True, exist_ok=True)
    summary = {**summary, "gates": [g.__dict__ for g in gates]}
    _write(run_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    _write(run_dir / "verdicts.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    for name in summary["run"].get("families", []):
        family_records = [r for r in records if r["family"] == name]
        _write(run_dir / f"{name}.csv", verdict_table(family_records).to_csv(index=False))
        family = families.get(name)
        if family is not None:
            section = family.section.model_validate(_own_fields(family, summary[name]))
            typed = [family.typed(r) for r in family_records]
            for filename, content in family.files(section, typed).items():
                _write(run_dir / filename, content)
    _write(run_dir / "summary.md", markdown(summary, gates, families))
    latest = directory / "latest"
    if latest.exists():
        shutil.rmtree(latest)
    shutil.copytree(run_dir, latest)
    return run_dir


def _write(path: Path, text: str) -> None:
    """Write through a temporary file so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def verdict_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per verdict, nested fields flattened (`result.winner`, `judge.provider`, ...)."""
    if not records:
        return pd.DataFrame()
    slim = [{k: v for k, v in r.items() if k != "raw"} | {"raw": " ||| ".join(r.get("raw", []))} for r in records]
    return pd.json_normalize(slim, sep=".")


def metric_rows(section: dict[str, Any], prefix: str = "", hidden: frozenset[str] = frozenset()
                ) -> list[tuple[str, dict[str, Any]]]:
    """Every metric (a dict with value/low/high/n) in a section, with its gate path; keys in
    `hidden` (bulky sub-sections a family renders itself) are left out."""
    rows: list[tuple[str, dict[str, Any]]] = []
    for key, value in section.items():
        if key in hidden or (key == "unscored_rate" and not prefix):
            continue
        if isinstance(value, dict) and "value" in value and "n" in value:
            rows.append((prefix + key, value))
        elif isinstance(value, dict):
            rows.extend(metric_rows(value, f"{prefix}{key}.", hidden))
    return rows


def _own_fields(family: Family, section: dict[str, Any]) -> dict[str, Any]:
    """A summary section less the core's counts: what the family's section model holds."""
    from llmjury.aggregate import CORE_KEYS

    return {k: v for k, v in section.items() if k not in CORE_KEYS}


def hidden_keys(families: Mapping[str, Family], name: str) -> frozenset[str]:
    family = families.get(name)
    return frozenset(family.hidden_from_tables if family is not None else ())


def format_metric(m: dict[str, Any]) -> str:
    if m["value"] is None:
        return "n/a"
    text = f"{m['value']:.3f}"
    if m.get("low") is not None and m.get("high") is not None:
        text += f" [{m['low']:.3f}, {m['high']:.3f}]"
    return text


def markdown(summary: dict[str, Any], gates: list[GateResult], families: Mapping[str, Family]) -> str:
    run = summary["run"]
    lines = [f"# llmjury run `{run['id']}`", ""]
    if run.get("offline"):
        lines += [OFFLINE_BANNER, ""]
    if (summary.get("budget") or {}).get("stopped"):  # the cases it left unscored change every figure below
        lines += [f"> **{summary['budget']['note']}**", ""]
    lines += [f"- judge: `{run.get('judge')}`; cache: `{run.get('cache_mode')}`; seed: {run.get('seed')}; "
              f"workers: {run.get('workers')}", ""]
    for provider, learned in (run.get("adaptations") or {}).items():
        lines.append(f"- `{provider}` adapted to its server: " + "; ".join(f"{k}: {v}" for k, v in learned.items()))
    if run.get("adaptations"):
        lines.append("")
    if gates:
        lines += ["## Gates", "", "| status | gate | value | interval | threshold |", "|---|---|---|---|---|"]
        for g in gates:
            interval = "" if g.interval is None else f"[{g.interval[0]}, {g.interval[1]}]"
            lines.append(f"| {g.status} | `{g.gate}` | {g.value} | {interval} | {g.threshold} |")
        lines.append("")
    for name in run.get("families", []):
        section = summary[name]
        reasons = ", ".join(f"{k}: {v}" for k, v in section["unscored_reasons"].items()) or "none"
        judges = ", ".join(f"`{j}`" for j in section["judges"])
        lines += [f"## {name}", "", f"{section['cases']} cases, {section['verdicts']} verdicts, "
                  f"{section['unscored']} unscored ({reasons}); judge: {judges}", ""]
        lines += [f"- data: {LoadReport.model_validate(r).line()}" for r in section.get("loading", [])]
        if section.get("loading"):
            lines.append("")
        family = families.get(name)
        if family is not None:
            own = family.markdown(family.section.model_validate(_own_fields(family, section)))
            if own:
                lines += [own, ""]
        rows = metric_rows(section, hidden=hidden_keys(families, name))
        if rows:
            lines += ["| metric | value [95% CI] | n | method |", "|---|---|---|---|"]
            lines += [f"| `{name}.{path}` | {format_metric(m)} | {m['n']} | {m['method']} |" for path, m in rows]
            lines.append("")
    usage = summary.get("usage", {})
    if usage.get("providers"):
        lines += ["## Usage", "", "| provider | calls | fresh samples | cached samples | prompt tokens | "
                  "completion tokens | est. cost (USD) |", "|---|---|---|---|---|---|---|"]
        for provider, u in usage["providers"].items():
            cost = "unpriced" if u["cost_usd"] is None else f"{u['cost_usd']:.4f}"
            lines.append(f"| `{provider}` | {int(u.get('calls', 0))} | {int(u.get('fresh_samples', 0))} | "
                         f"{int(u.get('cached_samples', 0))} | {int(u.get('prompt_tokens', 0))} | "
                         f"{int(u.get('completion_tokens', 0))} | {cost} |")
        lines.append("")
    return "\n".join(lines)


def terminal_lines(summary: dict[str, Any], gates: list[GateResult], run_dir: Path,
                   families: Mapping[str, Family]) -> list[str]:
    """The compact table printed at the end of a pytest run."""
    lines: list[str] = []
    if summary["run"].get("offline"):
        lines.append("offline run: numbers come from heuristics, not an LLM")
    for name in summary["run"].get("families", []):
        section = summary[name]
        counts = f"{section['cases']} cases, {section['verdicts']} verdicts, {section['unscored']} unscored"
        lines.append(f"{name}: {counts}")
        lines += [f"  data: {LoadReport.model_validate(r).line()}" for r in section.get("loading", [])
                  if r["dropped"] or r.get("given")]  # a user's own file: always said
        for path, m in metric_rows(section, hidden=hidden_keys(families, name))[:20]:
            lines.append(f"  {name}.{path:<34} {format_metric(m):<28} n={m['n']}")
    lines.extend(g.line() for g in gates)
    lines.append(f"reports: {run_dir}")
    return lines
