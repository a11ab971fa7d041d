"""Which tools each role gets, built from the run's systems. The only place roles meet tools.

- file_reader: files (read-only, confined to the sandbox), AP helpers, knowledge, notes, ask_user
- browser_operator: the browser (behind the policy gate and the vault), AP helpers, knowledge,
  notes, ask_user
- verifier: read-only browser in a fresh context, read-only files, web_fetch and python — every
  source it opens is recorded (a computation it runs as "python"), so its verdict can only cite
  what it really looked at; and ``note`` (its own working notes, which change nothing)
- planner, reflector: no tools (their inputs are put in their prompts)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from crewai.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

from taskcrew.config import files_root
from taskcrew.crew.guard import is_failure
from taskcrew.crew.run_tools import AskUserTool, NoteTool
from taskcrew.roles import RoleName
from taskcrew.tools.files import SandboxFiles
from taskcrew.tools.reader_tools import (
    CompareValuesTool,
    ComputeDueDateTool,
    ParseAmountTool,
    file_reader_tools,
)


class System(BaseModel):
    """A web system the run may use, as the planner and verifier are told about it."""

    name: str
    url: str
    description: str = ""
    credentials: list[str] = Field(default_factory=list, description="vault names for user / password")

    def describe(self) -> str:
        text = f"- {self.name} at {self.url}"
        if self.description:
            text += f" ({self.description})"
        if len(self.credentials) == 2:
            user, password = self.credentials
            text += f"; sign in with username {{{{secret:{user}}}}} and password {{{{secret:{password}}}}}"
        return text


class SourceLog:
    """The sources (URLs, files) the verifier opened, thread-safe."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._texts: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def add(self, source: str, text: str = "") -> None:
        """``source`` was opened; ``text`` is what the verifier saw there (kept for the evidence check)."""
        if source:
            with self._lock:
                self._seen.add(source)
                if text:
                    self._texts.setdefault(source, []).append(text)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
            self._texts.clear()

    def texts(self) -> dict[str, list[str]]:
        with self._lock:
            return {k: list(v) for k, v in self._texts.items()}

    def snapshot(self) -> set[str]:
        with self._lock:
            return set(self._seen)


class RecordingTool(BaseTool):
    """Passes through to a tool and tells ``record`` what it opened."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseTool
    record: Callable[[dict[str, Any], str], None] = Field(exclude=True)

    @classmethod
    def around(cls, tool: BaseTool, record: Callable[[dict[str, Any], str], None]) -> RecordingTool:
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            inner=tool,
            record=record,
        )

    def _run(self, *args: Any, **kwargs: Any) -> str:
        text = str(self.inner.run(*args, **kwargs))
        self.record(kwargs, text)
        return text


class Toolbox:
    """Tools per role for one run. Browser sessions are started lazily, on the first browser call."""

    def __init__(
        self,
        *,
        sandbox: Path,
        human: Any,
        notes: list[str],
        systems: list[System] | None = None,
        knowledge_tools: list[BaseTool] | None = None,
        browser: Any = None,
        research_tools: list[BaseTool] | None = None,
        fetch_text: Callable[[str], str | None] | None = None,
        today: date | None = None,
    ) -> None:
        self.files = SandboxFiles(files_root(sandbox), record_reads=True)  # what the run read is sealed
        if (policy := getattr(browser, "policy", None)) is not None:  # values read by OCR get a note
            policy.flaggers.append(self.files.provenance.flag)
        self.systems = systems or []
        self.human = human
        self.notes = notes
        self.knowledge_tools = knowledge_tools or []
        self.browser = browser
        self.research_tools = research_tools or []
        self.fetch_text = fetch_text
        self.today = today or date.today()
        self.sources = SourceLog()
        self.verifier_notes: list[str] = []  # the verifier's own, kept apart from the workers' run notes

    def environment(self) -> str:
        lines = [
            f"- Today is {self.today:%A, %d %B %Y} ({self.today.isoformat()}).",
            "- Company files: the file tools see the company's shared documents folder "
            "(incoming vendor mail and documents); paths are relative to it.",
        ]
        lines += [system.describe() for system in self.systems]
        return "\n".join(lines)

    def _calculators(self) -> list[BaseTool]:
        return [ParseAmountTool(), ComputeDueDateTool(), CompareValuesTool()]

    def _run_tools(self) -> list[BaseTool]:
        return [NoteTool(notes=self.notes), AskUserTool(human=self.human)]

    def _record_file(self, kwargs: dict[str, Any], text: str) -> None:
        if (path := kwargs.get("path")) and not is_failure(text):  # a failed read opened nothing
            self.sources.add(str(path), text)

    def _record_url(self, kwargs: dict[str, Any], text: str) -> None:
        if (url := kwargs.get("url")) and not is_failure(text):
            self.sources.add(str(url), text)

    def tools_for(self, role: RoleName) -> list[BaseTool]:
        if role == "file_reader":
            return (
                file_reader_tools(self.files) + self.research_tools + self.knowledge_tools + self._run_tools()
            )
        if role == "browser_operator":
            browser = self.browser.worker_tools() if self.browser is not None else []
            return browser + self._calculators() + self.knowledge_tools + self._run_tools()
        if role == "verifier":
            reading = [RecordingTool.around(t, self._record_file) for t in file_reader_tools(self.files)]
            fetching = [
                RecordingTool.around(t, self._record_url)
                for t in self.research_tools
                if t.name == "web_fetch"
            ]
            # A computed answer is checked by computing it again: "python" is then a source it saw.
            computing = [
                RecordingTool.around(t, lambda kwargs, text: self.sources.add("python", text))
                for t in self.research_tools
                if t.name == "python"
            ]
            browser = self.browser.verifier_tools(self.sources.add) if self.browser is not None else []
            return browser + reading + fetching + computing + [NoteTool.private(self.verifier_notes)]
        return []

    def source_text(self, source: str) -> str | None:
        """Full text of a cited file or fetchable page, for the citation check (None: cannot read)."""
        if source.startswith(("http://", "https://")):
            return self.fetch_text(source) if self.fetch_text is not None else None
        try:
            return self.files.read(source).full_text()
        except Exception:
            return None

    def begin_verification(self) -> None:
        self.sources.clear()
        self.verifier_notes.clear()
        if self.browser is not None:
            self.browser.fresh_verifier()

    def visited_sources(self) -> set[str]:
        return self.sources.snapshot()

    def rejections(self) -> int:
        return self.browser.rejections() if self.browser is not None else 0

    def screenshot(self, path: Path) -> Path | None:
        return self.browser.screenshot(path) if self.browser is not None else None

    def halt(self, why: str) -> None:
        """The run is stopped: from now on nothing data-changing leaves the browser (``why`` says so)."""
        if (policy := getattr(self.browser, "policy", None)) is not None:
            policy.halted = why

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
