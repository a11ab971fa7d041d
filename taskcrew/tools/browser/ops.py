"""The browser tools' plain logic (no crewai): typed arguments in, ``ToolResult`` out.

The CrewAI tools in ``tools.py`` are thin wrappers around these two functions.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import yaml
from pydantic import BaseModel, Field

from taskcrew.tools.base import ToolResult
from taskcrew.tools.browser.models import Action
from taskcrew.tools.browser.runtime import BrowserError
from taskcrew.tools.browser.session import BrowserSession


class BrowserObserveArgs(BaseModel):
    """browser_observe takes no arguments."""


class BrowserActArgs(BaseModel):
    actions: list[Action] = Field(
        min_length=1,
        max_length=20,
        description="Actions to run in order, addressed by element numbers [n] from the latest observation.",
    )
    observation_id: int | None = Field(
        default=None,
        description="The observation the numbers come from (optional; stale numbers are refused).",
    )


class ToolText(BaseModel):
    description: str


class BrowserToolTexts(BaseModel):
    browser_observe: ToolText
    browser_act: ToolText
    browser_act_read_only: ToolText


@cache
def tool_texts() -> BrowserToolTexts:
    raw = yaml.safe_load(files("taskcrew.tools.browser").joinpath("tools.yaml").read_text(encoding="utf-8"))
    return BrowserToolTexts.model_validate(raw)


def observe(session: BrowserSession) -> ToolResult:
    try:
        return ToolResult.success(session.observe())
    except BrowserError as exc:
        return ToolResult.failure(f"the browser is not available: {exc}")


def act(session: BrowserSession, args: BrowserActArgs) -> ToolResult:
    try:
        result = session.act(args.actions, observation_id=args.observation_id)
    except BrowserError as exc:
        return ToolResult.failure(f"the browser is not available: {exc}")
    if result.ok:
        return ToolResult.success(result)
    failed = sum(1 for r in result.ran if not r.ok)
    summary = f"{failed} action(s) failed" if failed else "the actions did not complete"
    return ToolResult.failure(f"{summary}; details and the current page below", data=result)
