"""Content fingerprints: a short hash of what a case shows its system and judge, and of the criteria
text a judge call is given, so a comparison with a baseline can tell a reworded case (or rubric)
under the same id from the same case judged again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: The judge-call arguments that say what the judge looks for (`jury.compare`'s criteria,
#: `jury.score`'s rubric, `jury.geval`'s criterion and steps): part of the judge's fingerprint.
CRITERIA_FIELDS = ("criteria", "rubric", "criterion", "steps")


def fingerprint(content: Any) -> str:
    """A 16-hex-digit hash of JSON-able content, the same for the same content on any machine."""
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def case_fingerprint(fields: Mapping[str, Any]) -> str:
    """A case's fingerprint: every field but its id (which names it, and stays when its content changes)."""
    return fingerprint({key: value for key, value in fields.items() if key != "id"})


def criteria_fingerprint(texts: Mapping[str, Any], names: Iterable[str] = CRITERIA_FIELDS) -> str:
    """The fingerprint of the criteria texts a judge call was given, "" when it was given none."""
    given = {name: texts[name] for name in names if texts.get(name) not in (None, "")}
    return fingerprint(given) if given else ""


def stamp(records: list[dict[str, Any]], case_id: str, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records of one case, each carrying the case's fingerprint (`case_fingerprint`)."""
    mark = case_fingerprint(fields)
    return [record | {"case_fingerprint": mark} if record.get("case_id") == case_id
            and "case_fingerprint" not in record else record for record in records]
