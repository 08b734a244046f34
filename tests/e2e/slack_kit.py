"""A raw Slack export as Slack writes it, generated: channels.json, users.json and a folder of day
files per channel, with what real exports hold (threads whose replies land on later days, a thread
broadcast, bots, joins, emoji-only and thanks-with-emoji replies, links, mentions and escapes, an
announcement, a channel with an empty day file and a channel with no folder at all)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

USERS = [
    {"id": "U01SORA", "name": "sora.kim", "real_name": "Kim Sora", "profile": {"display_name": "sora"}},
    {"id": "U02JUN", "name": "jun", "real_name": "Lee Jun", "profile": {"display_name": "", "real_name": "Lee Jun"}},
    {"id": "U03MINA", "name": "mina", "profile": {"display_name": "mina (TA)"}},
    {"id": "B0DEPLOY", "name": "deploybot", "is_bot": True, "profile": {"display_name": "deploybot"}},
]
CHANNELS = [{"id": f"C0{i}", "name": name} for i, name in
            enumerate(["python-help", "ml-qa", "general", "random", "announcements", "social"])]


def message(ts: str, user: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"type": "message", "user": user, "text": text, "ts": ts, **fields}


def reply(ts: str, parent: str, user: str, text: str, **fields: Any) -> dict[str, Any]:
    return message(ts, user, text, thread_ts=parent, parent_user_id="U01SORA", **fields)


CSV_Q = "1709540000.000100"
PIN_Q = "1709550000.000200"
LONELY_Q = "1709560000.000300"
PE_Q = "1709540000.000400"
GENERAL_Q = "1709540000.000500"
BROADCAST = reply("1709630000.000900", CSV_Q, "U03MINA", "Also `help(csv)` in a REPL prints the same page.",
                  subtype="thread_broadcast")
DAYS: dict[str, list[dict[str, Any]]] = {
    "python-help/2024-03-04.json": [
        message("1709539000.000001", "U02JUN", "<@U02JUN> has joined the channel", subtype="channel_join"),
        message(CSV_Q, "U01SORA", "How do I read <https://docs.python.org/3/library/csv.html|the csv docs> offline, "
                "<@U03MINA>? Asking in <#C02|general> too &amp; &lt;nothing&gt; came up", reply_count=5,
                reactions=[{"name": "eyes", "count": 2}]),
        reply("1709540100.000101", CSV_Q, "U02JUN", "Run `python -m pydoc -b` and open the csv module page."),
        reply("1709540200.000102", CSV_Q, "U01SORA", ":+1:"),
    ],
    "python-help/2024-03-05.json": [
        BROADCAST, BROADCAST,
        reply("1709630100.000901", CSV_Q, "B0DEPLOY", "Build #412 passed", bot_id="B0DEPLOY"),
        message(PIN_Q, "U02JUN", "How do I pin a dependency so CI installs the same version? cc <!here>"),
        message(LONELY_Q, "U01SORA", "anyone around?"),
        reply("1709560100.000301", LONELY_Q, "U02JUN", ":wave:"),
        reply("1709560200.000302", LONELY_Q, "U03MINA", "👍"),
    ],
    "python-help/2024-03-06.json": [
        reply("1709700000.000201", PIN_Q, "U03MINA", "`pip install pkg==1.2`, then `pip freeze > requirements.txt` "
              "and commit it; CI runs `pip install -r requirements.txt`."),
        reply("1709700100.000202", PIN_Q, "U02JUN", "감사합니다 :pray:"),
    ],
    "ml-qa/2024-03-04.json": [
        message(PE_Q, "U01SORA", "transformer에서 positional encoding은 왜 필요한가요?"),
        reply("1709540500.000401", PE_Q, "U03MINA", "self-attention은 순서와 무관하게 계산되어서 위치 정보가 없습니다. "
              "그래서 임베딩에 위치 정보를 더해 줍니다."),
        reply("1709540600.000402", PE_Q, "U01SORA", ":pray: 감사합니다"),
        message("1709541000.000403", "U02JUN", "[공지] 논문 스터디원 모집합니다"),
    ],
    "general/2024-03-04.json": [
        message("1709539500.000010", "B0DEPLOY", "Deploy finished", subtype="bot_message", bot_id="B0DEPLOY"),
        message(GENERAL_Q, "U02JUN", "Where do I find last week's slides?"),
        reply("1709541500.000501", GENERAL_Q, "U03MINA", "In the course drive: <https://drive.example/slides>"),
    ],
    "random/2024-03-04.json": [],
    "social/2024-03-04.json": [
        message("1709539000.000020", "U03MINA", "<@U03MINA> has joined the channel", subtype="channel_join"),
        message("1709539100.000021", "B0DEPLOY", "Weekly digest", bot_id="B0DEPLOY"),
    ],
}
#: The threads a judge should see, by channel; everything else is filtered and counted (`social`
#: holds a join and a bot's post alone: a channel with nothing to grade).
KEPT = {"python-help": [CSV_Q, PIN_Q], "ml-qa": [PE_Q], "general": [GENERAL_Q]}


def write_export(root: Path) -> Path:
    """The export, unzipped at `root`."""
    root.mkdir(parents=True)
    (root / "users.json").write_text(json.dumps(USERS), encoding="utf-8")
    (root / "channels.json").write_text(json.dumps(CHANNELS), encoding="utf-8")
    for name, messages in DAYS.items():
        path = root / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(messages, ensure_ascii=False, indent=1), encoding="utf-8")
    return root
