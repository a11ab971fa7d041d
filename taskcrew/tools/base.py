"""The one result type every tool returns.

Tools return a typed ``ToolResult``; it becomes text only at the CrewAI edge (``to_text``).
Recoverable failures (a 503, a validation message, a blocked URL) are ``ok=False`` results the
model can react to. Programming errors raise.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

MAX_TEXT = 6000


class ToolResult(BaseModel):
    ok: bool
    data: Any = None
    error: str | None = None

    @classmethod
    def success(cls, data: Any = None) -> ToolResult:
        return cls(ok=True, data=data)

    @classmethod
    def failure(cls, error: str, data: Any = None) -> ToolResult:
        return cls(ok=False, error=error, data=data)

    def to_text(self, limit: int = MAX_TEXT) -> str:
        """Render for a model: plain text, bounded in size."""
        if self.ok:
            body = _render(self.data)
            text = body if body else "OK"
        else:
            text = f"ERROR: {self.error}"
            if self.data is not None:
                text += "\n" + _render(self.data)
        if len(text) > limit:
            text = text[: limit - 40] + f"\n… [truncated, {len(text) - limit + 40} more chars]"
        return text


def _render(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        render = getattr(data, "render", None)
        if callable(render):
            return str(render())
        return data.model_dump_json(indent=1, exclude_none=True)
    try:
        return json.dumps(data, indent=1, default=str, ensure_ascii=False)
    except TypeError:
        return str(data)
