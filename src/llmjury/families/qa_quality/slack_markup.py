"""Slack's message markup, unwrapped for the judge: what a person saw in the channel, not Slack's wire text.

Slack writes links, mentions and channels between angle brackets and escapes only `&`, `<` and `>`
(its "mrkdwn" format). The judge reads the text a person reads:

| wire text | read as |
|---|---|
| `<https://x.io|the docs>` | `the docs (https://x.io)` |
| `<https://x.io>`, `<mailto:a@b.io|a@b.io>` | `https://x.io`, `a@b.io` |
| `<@U123>`, `<@U123|kim>` | `@` + the person's name from users.json (else the label, else the id) |
| `<#C1|general>`, `<#C1>` | `#general` (a bare id named from channels.json) |
| `<!here>`, `<!channel>`, `<!subteam^S1|@ta>`, `<!date^...|Nov 3>` | `@here`, `@channel`, `@ta`, `Nov 3` |
| `&lt;` `&gt;` `&amp;` | `<` `>` `&` |

Emoji shortcodes (`:+1:`) stay in the text: a person sees an emoji there. `decorations_removed`
takes them out, with mentions, so the filler and thanks rules read what a reply says in words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

ANGLED = re.compile(r"<([^<>\n]+)>")
EMOJI_SHORTCODE = re.compile(r":[a-z0-9_+'\-]+:(?::skin-tone-[2-6]:)?", re.IGNORECASE)
MENTION = re.compile(r"(?<!\w)@[\w.\-]+")


def unwrap(text: str, users: Mapping[str, str] | None = None, channels: Mapping[str, str] | None = None) -> str:
    """`text` with Slack's markup turned into what a person reads (names from `users` and `channels` by id)."""
    users, channels = users or {}, channels or {}

    def replace(match: re.Match[str]) -> str:
        target, _, label = match.group(1).partition("|")
        if target.startswith("@"):
            return "@" + users.get(target[1:], label.lstrip("@") or target[1:])
        if target.startswith("#"):
            return "#" + (label or channels.get(target[1:], target[1:]))
        if target.startswith("!"):
            return label if label else "@" + target[1:].split("^")[0]
        address = target.removeprefix("mailto:")
        return address if not label or label in (target, address) else f"{label} ({address})"

    unwrapped = ANGLED.sub(replace, text)
    return unwrapped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def decorations_removed(text: str) -> str:
    """`text` without emoji (shortcodes and pictographs) and mentions: the words a reply says."""
    text = MENTION.sub(" ", EMOJI_SHORTCODE.sub(" ", text))
    kept = "".join(" " if _is_emoji(c) else c for c in text)
    return " ".join(kept.split())


def _is_emoji(char: str) -> bool:
    # Pictographs are symbols ("So"); joiners and variation selectors glue them together.
    return unicodedata.category(char) in ("So", "Sk") or char in "\u200d\ufe0f\ufe0e" or 0x1F3FB <= ord(char) <= 0x1F3FF
