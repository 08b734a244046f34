"""A Slack export as Slack writes it → threads in seed 001's shape, one course per channel.

The layout (Slack's workspace export, unzipped): `channels.json` (`[{id, name, ...}]`), `users.json`
(`[{id, name, real_name, profile: {display_name, real_name}, is_bot}]`) and a folder per channel of
day files `<channel>/<YYYY-MM-DD>.json`, each a list of messages `{type, user, text, ts, thread_ts,
subtype, bot_id, reactions, edited, reply_count, files}`.

- A thread is a parent message (`thread_ts` absent or equal to its `ts`) and every message whose
  `thread_ts` is the parent's `ts`, from whichever day file holds it: replies land in the file of
  the day they were written. A message seen twice (a thread broadcast `subtype: thread_broadcast`
  copied into the channel and the thread) is kept once, by its `ts`.
- People are named from users.json (display name, else real name, else user name), else from the
  message's own `user_profile`; markup is unwrapped for the judge (`slack_markup`), the wire text
  kept under `raw_text`.
- One channel's folder of day files alone is read as an export of that channel.
- Replies whose parent is not in the export are one `reply_without_question` thread each; a
  channel listed in channels.json (or groups.json, private channels) with no folder or no
  message, and a day file holding no message, are counted (`empty channel`, `empty file`),
  never silently absent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError
from llmjury.families.qa_quality.slack_markup import unwrap
from llmjury.families.qa_quality.threads import QAPair

DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: Where an export lists its channels: public ones, and the private ones an admin's export adds.
CHANNEL_LISTS = ("channels.json", "groups.json")
WORKSPACE_FILES = (*CHANNEL_LISTS, "users.json")


@dataclass
class RawExport:
    """Each channel's threads (parents with their replies), and what held nothing."""

    threads: dict[str, list[QAPair]] = field(default_factory=dict)
    orphan_threads: dict[str, int] = field(default_factory=dict)
    empty_channels: list[str] = field(default_factory=list)
    empty_files: list[str] = field(default_factory=list)


def is_raw_export(root: Path) -> bool:
    """Slack's own layout: channels.json or users.json at the top, else day files whose first message
    has a `ts` (seed 001's processed threads have a `question` instead)."""
    if any((root / name).is_file() for name in WORKSPACE_FILES):
        return True
    for path in sorted([*root.glob("*.json"), *root.glob("*/*.json")]):
        try:
            content = read_json(path)
        except DatasetError:
            continue
        if isinstance(content, list) and content and isinstance(content[0], dict):
            return "ts" in content[0] and "question" not in content[0]
    return False


def read_raw_export(root: Path) -> RawExport:
    """Every channel of the export at `root`, its threads joined across day files."""
    users = _users(root)
    channels = _channels(root)
    folders = {p.name: p for p in root.iterdir() if p.is_dir() and any(p.glob("*.json"))}
    if not folders and not channels:  # one channel's folder of day files, named as the export
        folders = {root.name: root}
    result = RawExport()
    for name in sorted(set(channels.values()) | set(folders)):
        messages: dict[str, tuple[dict[str, Any], str]] = {}
        for path in sorted(folders[name].glob("*.json")) if name in folders else []:
            day = read_json(path)
            if not isinstance(day, list) or not all(isinstance(m, dict) for m in day):
                raise DatasetError(str(path), None, "a Slack day file is a JSON list of messages")
            if not day:
                result.empty_files.append(f"{name}/{path.name}")
            for number, message in enumerate(day):
                if "ts" not in message:
                    raise DatasetError(str(path), number, "a Slack message without 'ts'")
                messages.setdefault(str(message["ts"]), (message, path.stem))
        if not messages:
            result.empty_channels.append(name)
            continue
        threads, orphans = _threads(name, messages, users, channels)
        result.threads[name] = threads
        if orphans:
            result.orphan_threads[name] = orphans
    return result


def _threads(channel: str, messages: Mapping[str, tuple[dict[str, Any], str]], users: Mapping[str, dict[str, Any]],
             channels: Mapping[str, str]) -> tuple[list[QAPair], int]:
    """The channel's threads in time order, and how many threads lack their parent."""
    names = {user_id: user["name"] for user_id, user in users.items()}
    parents: dict[str, QAPair] = {}
    replies: dict[str, list[dict[str, Any]]] = {}
    for ts in sorted(messages, key=_order):
        message, day = messages[ts]
        text = _message(message, users, names, channels)
        thread = str(message.get("thread_ts") or ts)
        if thread == ts:
            parents[ts] = QAPair(course=channel, source_file=f"{channel}/{day}.json", generation="", date=day,
                                 question=text, answers=[])
        else:
            replies.setdefault(thread, []).append(text)
    for thread, answers in replies.items():
        if thread in parents:
            parents[thread].answers = answers
    return list(parents.values()), sum(1 for thread in replies if thread not in parents)


def _message(message: dict[str, Any], users: Mapping[str, dict[str, Any]], names: Mapping[str, str],
             channels: Mapping[str, str]) -> dict[str, Any]:
    """One message in the shape of the seed's processed files, its text unwrapped."""
    user_id = str(message.get("user") or message.get("bot_id") or "")
    profile = message.get("user_profile") or {}
    name = names.get(user_id) or profile.get("display_name") or profile.get("real_name") or profile.get("name") \
        or message.get("username") or user_id
    wire = str(message.get("text") or "")
    text = unwrap(wire, names, channels)
    is_bot = bool(message.get("bot_id") or users.get(user_id, {}).get("is_bot") or user_id == "USLACKBOT")
    shaped: dict[str, Any] = {
        "text": text, "user": user_id, "user_name": name, "timestamp": str(message["ts"]), "is_bot": is_bot,
        "metadata": {"edited": message.get("edited"), "reactions": message.get("reactions", []),
                     "reply_count": message.get("reply_count", 0)}}
    if message.get("subtype"):
        shaped["subtype"] = message["subtype"]
    if text != wire:
        shaped["raw_text"] = wire
    return shaped


def _users(root: Path) -> dict[str, dict[str, Any]]:
    """users.json by id: each person's shown name and whether it is a bot."""
    path = root / "users.json"
    if not path.is_file():
        return {}
    users = read_json(path)
    if not isinstance(users, list):
        raise DatasetError(str(path), None, "users.json is a JSON list of users")
    found = {}
    for number, user in enumerate(users):
        if not isinstance(user, dict) or "id" not in user:
            raise DatasetError(str(path), number, "a user without 'id'")
        profile = user.get("profile") or {}
        name = profile.get("display_name") or profile.get("real_name") or user.get("real_name") or user.get("name")
        found[str(user["id"])] = {"name": str(name or user["id"]), "is_bot": bool(user.get("is_bot"))}
    return found


def _channels(root: Path) -> dict[str, str]:
    """channels.json and groups.json (private channels): channel id → name (the name is its folder)."""
    found = {}
    for listing in CHANNEL_LISTS:
        path = root / listing
        if not path.is_file():
            continue
        channels = read_json(path)
        if not isinstance(channels, list):
            raise DatasetError(str(path), None, f"{listing} is a JSON list of channels")
        for number, channel in enumerate(channels):
            if not isinstance(channel, dict) or "name" not in channel:
                raise DatasetError(str(path), number, "a channel without 'name'")
            found[str(channel.get("id", channel["name"]))] = str(channel["name"])
    return found


def _order(ts: str) -> Decimal:
    try:
        return Decimal(ts)
    except InvalidOperation:
        return Decimal(0)
