"""What a model writes around its tool calls, kept for the model.

Real models write text beside their tool calls ("The first invoice says 1,284.50; now the second.").
crewAI's executor keeps only the calls, so that working memory would be lost. ``ProseCapture`` reads
the text off the provider's HTTP response (crewAI's interceptor hook), ``ProseMemory`` remembers it by
tool-call id and puts it back into the assistant message the next time the history is sent.

Small models also write a tool call as text in their answer instead of calling the tool:
``tool_call_in_text`` turns such an answer into the real call.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import OrderedDict
from typing import Any

import httpx
from crewai.llms.hooks.base import BaseInterceptor

KEEP = 500  # remembered texts (oldest forgotten first)
_FENCE = re.compile(r"```(?:json|tool_call|tool)?\s*(.*?)```", re.DOTALL)
_ids = itertools.count(1)


class ProseCapture(BaseInterceptor[httpx.Request, httpx.Response]):
    """On the wire to an OpenAI-compatible server: reads the assistant text of each completion that
    also carries tool calls, and sends each tool's relaxed parameters (only the truly required
    fields required; crewAI's OpenAI client forces strict mode, which makes every field required).
    """

    def __init__(self) -> None:
        self.by_call_id: dict[str, str] = {}
        self.parameters: dict[str, dict[str, Any]] = {}  # tool name → parameters to send
        self._lock = threading.Lock()

    def on_outbound(self, message: httpx.Request) -> httpx.Request:
        if not self.parameters or "json" not in message.headers.get("content-type", ""):
            return message
        try:
            body = json.loads(message.content)
        except ValueError:
            return message
        changed = False
        for tool in body.get("tools") or []:
            fn = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(fn, dict) and fn.get("name") in self.parameters:
                fn["parameters"], fn["strict"] = self.parameters[fn["name"]], False
                changed = True
        if not changed:
            return message
        headers = {k: v for k, v in message.headers.items() if k.lower() != "content-length"}
        return httpx.Request(
            message.method,
            message.url,
            headers=headers,
            content=json.dumps(body).encode(),
            extensions=message.extensions,
        )

    def on_inbound(self, message: httpx.Response) -> httpx.Response:
        if "json" not in message.headers.get("content-type", ""):
            return message
        try:
            message.read()
            data = json.loads(message.content)
            reply = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError, httpx.HTTPError):
            return message
        text = str(reply.get("content") or "").strip()
        calls = reply.get("tool_calls") or []
        if text and calls:
            with self._lock:
                for call in calls:
                    if isinstance(call, dict) and call.get("id"):
                        self.by_call_id[str(call["id"])] = text
                while len(self.by_call_id) > KEEP:
                    self.by_call_id.pop(next(iter(self.by_call_id)))
        return message

    async def aon_outbound(self, message: httpx.Request) -> httpx.Request:
        return self.on_outbound(message)

    async def aon_inbound(self, message: httpx.Response) -> httpx.Response:
        await message.aread()
        return self.on_inbound(message)


def _call_id(call: Any) -> str | None:
    value = call.get("id") if isinstance(call, dict) else getattr(call, "id", None)
    return str(value) if value else None


class ProseMemory:
    """Tool-call id → the text the model wrote beside that call."""

    def __init__(self) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.capture: ProseCapture | None = None

    def take(self, result: Any) -> Any:
        """Remember the text beside the calls in ``result`` (a scripted call may carry it as "prose")."""
        if not isinstance(result, list):
            return result
        texts: dict[str, str] = {}
        for call in result:
            call_id = _call_id(call)
            if call_id is None:
                continue
            if isinstance(call, dict) and call.get("prose"):
                texts[call_id] = str(call.pop("prose"))
            elif self.capture is not None and call_id in self.capture.by_call_id:
                texts[call_id] = self.capture.by_call_id[call_id]
        with self._lock:
            self._texts.update(texts)
            while len(self._texts) > KEEP:
                self._texts.popitem(last=False)
        return result

    def said(self, result: Any) -> str:
        """The text remembered beside the calls in ``result`` ("" if none)."""
        if not isinstance(result, list):
            return ""
        with self._lock:
            return next((self._texts[i] for i in map(_call_id, result) if i and i in self._texts), "")

    def restore(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The history with each remembered text back in its assistant message."""
        out = []
        for message in messages:
            if (
                message.get("role") == "assistant"
                and message.get("tool_calls")
                and not message.get("content")
            ):
                ids = [i for i in (_call_id(c) for c in message["tool_calls"]) if i]
                with self._lock:
                    text = next((self._texts[i] for i in ids if i in self._texts), None)
                if text:
                    message = {**message, "content": text}
            out.append(message)
        return out


def _tool_names(tools: list[Any]) -> set[str]:
    names = set()
    for tool in tools:
        if isinstance(tool, dict):
            names.add(str(tool.get("function", tool).get("name", "")))
        else:
            names.add(str(getattr(tool, "name", "")))
    return names


def _objects(text: str) -> list[Any]:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] or [text]
    found = []
    for candidate in candidates:
        candidate = candidate.strip()
        start, end = candidate.find("{"), candidate.rfind("}")
        if start == -1 or end <= start:
            continue
        try:
            found.append(json.loads(candidate[start : end + 1]))
        except ValueError:
            continue
    return found


def tool_call_in_text(text: str, tools: list[Any]) -> list[dict[str, Any]] | None:
    """The tool call(s) a model wrote as text, e.g. ``{"name": "read_file", "arguments": {...}}``."""
    names = _tool_names(tools)
    calls = []
    for obj in _objects(text):
        items = obj.get("tool_calls") if isinstance(obj, dict) and "tool_calls" in obj else [obj]
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            inner = item.get("function")
            fn: dict[str, Any] = inner if isinstance(inner, dict) else item
            name = fn.get("name") or fn.get("tool")
            if name not in names:
                continue
            args: Any = next((fn[k] for k in ("arguments", "args", "parameters", "input") if k in fn), {})
            calls.append(
                {
                    "id": f"text_call_{next(_ids)}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
            )
    return calls or None
