"""report.html's per-case view: for each case, what was asked and answered (the verdict's
attributes), the judge's raw text, the parsed verdict and why a verdict went unscored, on this run
and, when compared, on the baseline, with a small inline script to filter them.

Every text here came from a model or a dataset, and the page is opened from CI artifacts by
reviewers: each one is escaped (`html.escape`) before it reaches the page, and the page's content
security policy lets only the filter script below run (by its hash), so markup in an answer shows
as text and runs nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from llmjury.portable import portable
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


def view(records: Sequence[Mapping[str, Any]], baseline: Sequence[Mapping[str, Any]] | None, flips: list[Flips],
         root: Path, limit: int = CASES_PER_FAMILY) -> str:
    """The filter form, then one folded block per shown case, and the filter script."""
    now, before = _group(records), _group(baseline or [])
    flipped = {(f.family, c.case_id): i for f in flips for i, c in enumerate(f.cases)}  # worse first
    families = sorted({family for family, _ in now})
    blocks, left_out = [], []
    for family in families:
        keys = [key for key in now if key[0] == family]
        flags = {key: _flags(key, now, before, flipped, baseline is not None) for key in keys}
        # a case a judge spoke on before replayed reference data, which holds no judge text
        keys.sort(key=lambda k: (_rank(flags[k]), flipped.get(k, 0), not any(r.get("raw") for r in now[k]), k[1]))
        blocks += [_case(key, now[key], before.get(key), flags[key], baseline is not None, root)
                   for key in keys[:limit]]
        if len(keys) > limit:
            left_out.append(f"{len(keys) - limit} of {family}'s {len(keys)}")
    options = "".join(f'<option value="{escape(f)}">{escape(f)}</option>' for f in families)
    changed = ('<label><input type="checkbox" name="changed"> changed against the baseline only</label>'
               if baseline is not None else '<input type="checkbox" name="changed" hidden>')
    form = (f'<form id="case-filter"><label>family <select name="family"><option value="">all</option>{options}'
            f'</select></label> {changed} <label><input type="checkbox" name="unscored"> unscored only</label> '
            '<label>text <input type="search" name="q" placeholder="case id, answer, judge text"></label> '
            '<span id="case-count"></span></form>')
    note = ("<p>Shown per family: flipped and changed cases first, then unscored, then the rest (those a "
            "judge spoke on first) by id; "
            f"not shown here ({escape('; '.join(left_out))}) are in <code>verdicts.jsonl.gz</code>.</p>"
            if left_out else "")
    if blocks:  # the first case (flipped or changed, when any is) open: what a reviewer reads first
        blocks[0] = blocks[0].replace('<details class="case"', '<details open class="case"', 1)
    return form + note + '<div id="cases">' + "".join(blocks) + f"</div><script>{SCRIPT}</script>"


def _group(records: Sequence[Mapping[str, Any]]) -> Group:
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
          compared: bool, root: Path) -> str:
    family, case_id = key
    badges = "".join(f' <span class="badge {flag}">{flag}</span>' for flag in flags)
    columns = [("this run", now)]
    if compared:
        columns.append(("baseline", before or []))
    body = "".join(f'<section class="run"><h4>{title}</h4>{_verdict_list(records, root)}</section>'
                   for title, records in columns)
    return (f'<details class="case" data-family="{escape(family)}" data-flags="{" ".join(flags)}">'
            f"<summary><code>{escape(case_id)}</code> <small>{escape(family)}</small>{badges}</summary>"
            f'<div class="runs">{body}</div></details>')


def _verdict_list(records: list[Mapping[str, Any]], root: Path) -> str:
    if not records:
        return "<p><i>no verdict for this case in this run</i></p>"
    return "".join(_verdict(portable(dict(r), root)) for r in records)


def _verdict(r: dict[str, Any]) -> str:
    judge = r.get("judge") or {}
    kind, provider = escape(str(r.get("kind") or "verdict")), escape(str(judge.get("provider", "")))
    head = f"<p><b>{kind}</b>, judged by <code>{provider}</code>"
    if not r.get("valid", True):
        head += f' <span class="badge unscored">unscored</span>: {_text(str(r.get("error") or "no cause recorded"))}'
    parts = [head + "</p>"]
    attributes = r.get("attributes") or {}
    if attributes:
        rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{_value(v)}</td></tr>" for k, v in attributes.items())
        parts.append(f'<table class="attrs"><caption>input and answers</caption>{rows}</table>')
    for i, raw in enumerate(r.get("raw") or [], 1):
        parts.append(f"<p class=\"label\">judge's raw text {i}</p><pre>{_text(str(raw))}</pre>")
    if r.get("result") is not None:
        parsed = json.dumps(r["result"], indent=1, ensure_ascii=False)
        parts.append(f'<p class="label">parsed verdict</p><pre>{_text(parsed)}</pre>')
    return '<div class="verdict">' + "".join(parts) + "</div>"


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"<pre>{_text(text)}</pre>" if "\n" in text or len(text) > 80 else _text(text)


def _text(text: str) -> str:
    """Escaped, and cut to TEXT_LIMIT characters with a note of how many were left out."""
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n[... {len(text) - TEXT_LIMIT} more characters in verdicts.jsonl.gz]"
    return escape(text)
