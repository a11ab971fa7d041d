"""Keep what a model sees per call bounded, however long a step runs.

The executor's history grows with every tool call; what we send does not: the task prompt, the
last few exchanges, and only the newest tool results in full. Older tool results shrink to one
line, and exchanges older than that collapse into one short list of what was done.
"""

from __future__ import annotations

import json
from typing import Any

ONE_LINE = 160
SUMMARY_LINES = 10


def message_chars(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        total += len(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            total += len(json.dumps(call, default=str))
    return total


def one_line(text: str, limit: int = ONE_LINE) -> str:
    """The gist of a tool result: its first line, plus the second when the first says little."""
    lines = [line.strip(" -") for line in text.splitlines() if line.strip(" -")]
    if not lines:
        return "(empty)"
    gist = lines[0]
    if gist.startswith("ERROR"):  # say why: the first error / policy / page message line, if any
        why = next((ln for ln in lines[1:] if ln.startswith(("Error", "Policy", "Messages shown"))), "")
        gist = f"{gist} {why}".strip()
    elif len(gist) < 40 and len(lines) > 1:
        gist = f"{gist} {lines[1]}"
    return gist if len(gist) <= limit else gist[: limit - 1] + "…"


def _call_summary(message: dict[str, Any]) -> str:
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append(f"{fn.get('name', '?')}({one_line(str(fn.get('arguments', '')), 100)})")
    return ", ".join(calls) or one_line(str(message.get("content") or ""))


def _split_exchanges(body: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group messages so an assistant tool-call message stays with its tool results."""
    groups: list[list[dict[str, Any]]] = []
    for message in body:
        if message.get("role") == "tool" and groups:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def compact_messages(
    messages: list[dict[str, Any]], *, keep_full: int = 1, keep: int = 8
) -> tuple[list[dict[str, Any]], int]:
    """Return (messages to send, how many were shortened or folded)."""
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is None:
        return messages, 0
    head, body = messages[: first_user + 1], messages[first_user + 1 :]
    groups = _split_exchanges(body)
    compacted = 0
    dropped, kept = groups[:-keep] if len(groups) > keep else [], groups[-keep:]
    out = [dict(m) for m in head]
    if dropped:
        lines = []
        for group in dropped:
            result = next((m for m in group[1:] if m.get("role") == "tool"), None)
            outcome = f" → {one_line(str(result.get('content') or ''))}" if result else ""
            lines.append(f"- {_call_summary(group[0])}{outcome}")
            compacted += len(group)
        omitted = len(lines) - SUMMARY_LINES
        if omitted > 0:
            lines = [f"- ({omitted} earlier actions not shown)", *lines[-SUMMARY_LINES:]]
        out.append(
            {
                "role": "user",
                "content": "Earlier actions in this step (compacted, oldest first):\n" + "\n".join(lines),
            }
        )
    tool_positions = [
        (gi, mi) for gi, group in enumerate(kept) for mi, m in enumerate(group) if m.get("role") == "tool"
    ]
    full = set(tool_positions[-keep_full:]) if keep_full > 0 else set()
    for gi, group in enumerate(kept):
        for mi, message in enumerate(group):
            message = dict(message)
            if message.get("role") == "tool" and (gi, mi) not in full:
                content = str(message.get("content") or "")
                short = one_line(content) + " [older result compacted]"
                if len(short) < len(content):
                    message["content"] = short
                    compacted += 1
            out.append(message)
    return out, compacted
