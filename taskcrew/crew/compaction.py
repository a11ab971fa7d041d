"""Keep what a model sees per call bounded by a token budget, however long a step runs.

The executor's history grows with every tool call; what we send does not grow past a budget:

- the task prompt (system + first user message), always;
- the whole latest turn in full: every result of the model's last tool calls, parallel ones included;
- older results in full, newest first, as long as they fit in the budget; beyond it one line each;
- browser pages: only the newest page in full, older pages by their gist (a page goes stale);
- the model's own text beside its tool calls, kept (bounded): it is its working memory;
- the oldest exchanges beyond a window folded into one short list of what was done.

A short note at the top of the history tells the model plainly what it sees and how to keep more.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

ONE_LINE = 160
SUMMARY_LINES = 8
PROSE_LIMIT = 600
DEFAULT_BUDGET = 6000
WINDOW = 10  # exchanges shown individually (in full or one line); older ones fold into a list
PAGE_TOOLS = ("browser_",)  # tools whose results are pages: only the newest is shown in full
PINNED_TOOLS = ("note",)  # the newest result of these is always shown in full (it lists the notes)

MEMORY_NOTE = (
    "[How your history is shown] Your latest tool results are shown in full; older results in full "
    "while they fit in about {budget} tokens, then as one line each; older web pages only by their "
    "gist (the newest page is the current one); your own text beside tool calls is kept. To keep a "
    "value or a quote for later, write it in your text or with the note tool; to see an old result "
    "again, call the tool again."
)


def estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


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


PAGE_GIST = 400
_GIST_LINES = (
    "Result:",
    "Error:",
    "BLOCKED",
    "REJECTED",
    "REFUSED",
    "STOP",
    "Messages shown",
    "Observation #",
)


def page_gist(text: str, limit: int = PAGE_GIST) -> str:
    """An older page in one line: how the actions went, why they failed, the messages, which page."""
    lines = [ln.strip(" -") for ln in text.splitlines() if ln.strip(" -")]
    if not lines:
        return "(empty)"
    failed = [ln for ln in lines[1:] if ln.endswith(("failed", "refused")) or ": FAILED" in ln]
    picked = [ln for prefix in _GIST_LINES for ln in lines[1:] if ln.startswith(prefix)]  # by priority
    gist = " | ".join(dict.fromkeys([lines[0], *failed[:2], *picked]))
    return gist if len(gist) <= limit else gist[: limit - 1] + "…"


def _bounded(text: str, limit: int = PROSE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _tool_name(group: list[dict[str, Any]], message: dict[str, Any]) -> str:
    if message.get("name"):
        return str(message["name"])
    call_id = message.get("tool_call_id")
    for call in group[0].get("tool_calls") or []:
        if isinstance(call, dict) and call.get("id") == call_id:
            return str(call.get("function", {}).get("name", ""))
    return ""


def _is_page(name: str) -> bool:
    return name.startswith(PAGE_TOOLS)


def _cost(message: dict[str, Any], count: Callable[[str], int]) -> int:
    text = str(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        text += json.dumps(call, default=str)
    return count(text) + 4


def compact_messages(
    messages: list[dict[str, Any]],
    *,
    budget: int = DEFAULT_BUDGET,
    count: Callable[[str], int] = estimate_tokens,
    window: int = WINDOW,
) -> tuple[list[dict[str, Any]], int]:
    """Return (messages to send, how many were shortened or folded)."""
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is None:
        return messages, 0
    head, body = [dict(m) for m in messages[: first_user + 1]], messages[first_user + 1 :]
    if not body:
        return head, 0
    groups = _split_exchanges(body)
    folded, shown = (groups[:-window], groups[-window:]) if len(groups) > window else ([], groups)
    compacted = 0
    out_groups: list[list[dict[str, Any]]] = []
    left = budget - sum(_cost(m, count) for m in head) - count(MEMORY_NOTE) - 60 * SUMMARY_LINES
    newest_page_seen = False
    pinned_seen: set[str] = set()
    for gi in range(len(shown) - 1, -1, -1):  # newest first: the budget goes to the most recent
        group = [dict(m) for m in shown[gi]]
        latest = gi == len(shown) - 1
        for message in group:
            if message.get("role") == "assistant" and message.get("content"):
                message["content"] = _bounded(str(message["content"]))
        for message in reversed(group):
            if message.get("role") != "tool":
                left -= _cost(message, count)
                continue
            content = str(message.get("content") or "")
            name = _tool_name(group, message)
            page = _is_page(name)
            keep = latest or (not (page and newest_page_seen) and _cost(message, count) <= left)
            if name in PINNED_TOOLS and name not in pinned_seen:
                keep = True
                pinned_seen.add(name)
            if page:
                newest_page_seen = True
            if not keep:
                gist = (
                    page_gist(content) + " [older page, shown by its gist]"
                    if page
                    else one_line(content) + " [older result shortened]"
                )
                if len(gist) < len(content):
                    message["content"] = gist
                    compacted += 1
            left -= _cost(message, count)
        out_groups.append(group)
    out = head  # the note goes into the task message: no second user message in a row
    note = "\n\n" + MEMORY_NOTE.format(budget=budget)
    if folded:
        lines = []
        for group in folded:
            result = next((m for m in group[1:] if m.get("role") == "tool"), None)
            outcome = f" → {one_line(str(result.get('content') or ''))}" if result else ""
            lines.append(f"- {_call_summary(group[0])}{outcome}")
            compacted += len(group)
        omitted = len(lines) - SUMMARY_LINES
        if omitted > 0:
            lines = [f"- ({omitted} earlier actions not shown)", *lines[-SUMMARY_LINES:]]
        note += "\n\nEarlier actions in this step (compacted, oldest first):\n" + "\n".join(lines)
    out[-1]["content"] = str(out[-1].get("content") or "") + note
    for group in reversed(out_groups):
        out += group
    return out, compacted
