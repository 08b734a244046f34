"""report.html's per-case view: for each case, what was asked and answered (the verdict's
attributes), the judge's raw text, the parsed verdict and why a verdict went unscored, on this run
and, when compared, on the baseline, with a small inline script to filter them.

Every text here came from a model or a dataset, and the page is opened from CI artifacts by
reviewers: the template (`templates/cases.html.j2`, autoescape on) escapes each one, and the page's content
security policy lets only the filter script below run (by its hash), so markup in an answer shows
as text and runs nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from llmjury.portable import portable
from llmjury.reporting.templates import templates
from llmjury.results.decision import Flips

#: Cases shown per family: flipped first, then those whose verdict differs, then unscored, then the
#: rest (those with a judge's text first).
CASES_PER_FAMILY = 150
#: Characters of one text shown; the whole text is in verdicts.jsonl.gz.
TEXT_LIMIT = 4000

SCRIPT = """(function () {
  var form = document.getElementById("case-filter");
  var cases = Array.prototype.slice.call(document.querySelectorAll(".case"));
  var count = document.getElementById("case-count");
  function apply() {
    var family = form.elements.family.value, text = form.elements.q.value.toLowerCase();
    var changed = form.elements.changed.checked, unscored = form.elements.unscored.checked, shown = 0;
    cases.forEach(function (c) {
      var flags = " " + c.getAttribute("data-flags") + " ";
      var keep = (!family || c.getAttribute("data-family") === family)
        && (!changed || flags.indexOf(" changed ") >= 0) && (!unscored || flags.indexOf(" unscored ") >= 0)
        && (!text || c.textContent.toLowerCase().indexOf(text) >= 0);
      c.hidden = !keep;
      shown += keep ? 1 : 0;
    });
    count.textContent = shown + " of " + cases.length + " cases shown";
  }
  // a link may carry a filter: report.html#family=custom&changed=1&unscored=1&q=timeout
  new URLSearchParams(location.hash.slice(1)).forEach(function (value, key) {
    var field = form.elements[key];
    if (!field) return;
    if (field.type === "checkbox") field.checked = value === "1"; else field.value = value;
  });
  form.addEventListener("input", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  apply();
  document.body.setAttribute("data-filter", "ready");
})();"""

Group = dict[tuple[str, str], list[Mapping[str, Any]]]


def script_hash() -> str:
    """The filter script's CSP hash: the page lets this script run and no other."""
    return "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")


@dataclass(frozen=True)
class FamilyCases:
    """One family's block of the view: the cases shown, and how many were left out when more than
    the limit ran (a report built a family at a time keeps these, not the family's records)."""

    family: str
    cases: list[dict[str, Any]]
    left_out: str | None = None


def view(records: Sequence[Mapping[str, Any]], baseline: Sequence[Mapping[str, Any]] | None, flips: list[Flips],
         root: Path, limit: int = CASES_PER_FAMILY) -> str:
    """The filter form, then one folded block per shown case, and the filter script (templates/cases.html.j2)."""
    now, before = group(records), group(baseline or [])
    flipped = {(f.family, c.case_id): i for f in flips for i, c in enumerate(f.cases)}  # worse first
    blocks = [family_cases(family, {key: cases for key, cases in now.items() if key[0] == family}, before, flipped,
                           baseline is not None, root, limit)
              for family in sorted({family for family, _ in now})]
    return render(blocks, compared=baseline is not None)


def family_cases(family: str, now: Group, before: Group, flipped: Mapping[tuple[str, str], int], compared: bool,
                 root: Path, limit: int = CASES_PER_FAMILY) -> FamilyCases:
    """The cases of one family's verdicts (`now`, grouped by case) to show: flipped first, then
    changed, unscored and the rest."""
    keys = list(now)
    flags = {key: _flags(key, now, before, flipped, compared) for key in keys}
    # a case a judge spoke on before replayed reference data, which holds no judge text
    keys.sort(key=lambda k: (_rank(flags[k]), flipped.get(k, 0), not any(r.get("raw") for r in now[k]), k[1]))
    cases = [_case(key, now[key], before.get(key), flags[key], compared, root) for key in keys[:limit]]
    return FamilyCases(family, cases, f"{len(keys) - limit} of {family}'s {len(keys)}" if len(keys) > limit else None)


def render(blocks: Sequence[FamilyCases], compared: bool) -> str:
    """The view of the families' blocks, in the order given."""
    # the first case (flipped or changed, when any is) is open: what a reviewer reads first
    return templates().get_template("cases.html.j2").render(
        families=[block.family for block in blocks], compared=compared, cases=[c for b in blocks for c in b.cases],
        left_out=[block.left_out for block in blocks if block.left_out], script=Markup(SCRIPT))


def group(records: Iterable[Mapping[str, Any]]) -> Group:
    """Verdict records by (family, case id), each case's in their order."""
    grouped: Group = {}
    for record in records:
        grouped.setdefault((record["family"], record["case_id"]), []).append(record)
    return grouped


def _flags(key: tuple[str, str], now: Group, before: Group, flipped: Mapping[tuple[str, str], int],
           compared: bool) -> list[str]:
    flags = []
    if key in flipped:
        flags.append("flipped")
    if compared and (key not in before or _verdicts(now[key]) != _verdicts(before[key])):
        flags.append("changed")
    if any(not r.get("valid", True) for r in now[key]):
        flags.append("unscored")
    return flags


def _verdicts(records: list[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """What a case's verdicts decided, comparable across runs (not when or at what cost)."""
    return [(r.get("kind"), r.get("valid"), r.get("result"))
            for r in sorted(records, key=lambda r: str(r.get("kind")))]


def _rank(flags: list[str]) -> int:
    return next((i for i, flag in enumerate(("flipped", "changed", "unscored")) if flag in flags), 3)


def _case(key: tuple[str, str], now: list[Mapping[str, Any]], before: list[Mapping[str, Any]] | None, flags: list[str],
          compared: bool, root: Path) -> dict[str, Any]:
    """What the template shows of one case: its flags and each run's verdicts."""
    family, case_id = key
    runs = [("this run", now), *([("baseline", before or [])] if compared else [])]
    return {"family": family, "case_id": case_id, "flags": flags,
            "runs": [{"title": title, "verdicts": [_verdict(portable(dict(r), root)) for r in records]}
                     for title, records in runs]}


def _verdict(r: dict[str, Any]) -> dict[str, Any]:
    """One verdict as the template shows it: its texts cut to TEXT_LIMIT (escaped by the template)."""
    judge = r.get("judge") or {}
    attributes = [(str(k), *_value(v)) for k, v in (r.get("attributes") or {}).items()]
    parsed = None if r.get("result") is None else _text(json.dumps(r["result"], indent=1, ensure_ascii=False))
    return {"kind": str(r.get("kind") or "verdict"), "provider": str(judge.get("provider", "")),
            "error": None if r.get("valid", True) else _text(str(r.get("error") or "no cause recorded")),
            "attributes": attributes, "raw": [_text(str(raw)) for raw in r.get("raw") or []], "parsed": parsed}


def _value(value: Any) -> tuple[str, bool]:
    """An attribute's text and whether it is long enough (or multi-line) to show preformatted."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _text(text), "\n" in text or len(text) > 80


def _text(text: str) -> str:
    """Cut to TEXT_LIMIT characters with a note of how many were left out."""
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n[... {len(text) - TEXT_LIMIT} more characters in verdicts.jsonl.gz]"
    return text
