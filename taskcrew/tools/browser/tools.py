"""CrewAI tools: browser_observe and browser_act (and a read-only act for the verifier).

Thin ``BaseTool`` subclasses: validate arguments with the pydantic ``args_schema``, call the plain
logic in ``ops``, return the bounded, redacted text. Importing this module imports crewai.
"""

from __future__ import annotations

from typing import Any

from crewai.tools import BaseTool
from pydantic import ConfigDict, Field

from taskcrew.tools.base import MAX_TEXT
from taskcrew.tools.browser import ops
from taskcrew.tools.browser.ops import BrowserActArgs, BrowserObserveArgs
from taskcrew.tools.browser.session import BrowserSession


class _BrowserTool(BaseTool):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    session: BrowserSession = Field(exclude=True)
    max_chars: int = MAX_TEXT


class BrowserObserveTool(_BrowserTool):
    name: str = "browser_observe"
    description: str = ops.tool_texts().browser_observe.description
    args_schema: type[BrowserObserveArgs] = BrowserObserveArgs

    def _run(self, **kwargs: Any) -> str:
        return ops.observe(self.session).to_text(limit=self.max_chars)


class BrowserActTool(_BrowserTool):
    name: str = "browser_act"
    description: str = ops.tool_texts().browser_act.description
    args_schema: type[BrowserActArgs] = BrowserActArgs

    def _run(self, **kwargs: Any) -> str:
        args = BrowserActArgs.model_validate(kwargs)
        return ops.act(self.session, args).to_text(limit=self.max_chars)


def make_browser_tools(session: BrowserSession, *, read_only: bool = False) -> list[BaseTool]:
    """The browser tools for one agent. ``read_only`` (the verifier) needs a read-only session."""
    if read_only and not session.policy.read_only:
        raise ValueError(
            "read-only browser tools need a session whose policy is read-only "
            "(e.g. BrowserSession(policy=policy.read_only_copy(), ...))"
        )
    act = BrowserActTool(session=session)
    if read_only:
        act.description = ops.tool_texts().browser_act_read_only.description
    return [BrowserObserveTool(session=session), act]
