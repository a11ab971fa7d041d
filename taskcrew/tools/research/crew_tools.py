"""The research tools at the CrewAI edge: thin ``BaseTool``s over the plain logic.

Each tool is built with its dependency (a search backend, a web fetcher, a python sandbox) and turns
the ``ToolResult`` into bounded text. Texts the model reads live in ``tools.yaml``.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from crewai.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr

from taskcrew.tools.base import MAX_TEXT
from taskcrew.tools.research.python_sandbox import PythonSandbox
from taskcrew.tools.research.sandbox_policy import preloaded_names
from taskcrew.tools.research.search import SearchBackend
from taskcrew.tools.research.web import WebFetcher

TEXTS_FILE = Path(__file__).with_name("tools.yaml")


class ToolText(BaseModel):
    name: str
    description: str


def tool_text(key: str, **values: object) -> ToolText:
    """The name and description of one tool from ``tools.yaml``, placeholders filled."""
    raw = yaml.safe_load(TEXTS_FILE.read_text(encoding="utf-8"))[key]
    text = ToolText.model_validate(raw)
    return text.model_copy(update={"description": text.description.format(**values)})


class WebSearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=300, description="what to search for, in plain words")
    max_results: int = Field(default=6, ge=1, le=10, description="how many results to return")


class WebFetchArgs(BaseModel):
    url: str = Field(min_length=1, max_length=2000, description="the http(s) URL of the page to read")
    start: int = Field(default=0, ge=0, description="character offset to read from (for long pages)")


class PythonArgs(BaseModel):
    code: str = Field(
        min_length=1, max_length=20_000, description="Python code; the last line's value is returned"
    )


class WebSearchTool(BaseTool):
    name: str = "web_search"
    description: str = ""
    args_schema: type[BaseModel] = WebSearchArgs
    _backend: SearchBackend = PrivateAttr()

    def __init__(self, backend: SearchBackend, backend_label: str | None = None) -> None:
        label = backend_label or ("the company intranet" if backend.name == "intranet" else "the public web")
        text = tool_text("web_search", backend_label=label)
        super().__init__(name=text.name, description=text.description)
        self._backend = backend

    def _run(self, query: str, max_results: int = 6) -> str:
        return self._backend.search(query, max_results).to_text(MAX_TEXT)


class WebFetchTool(BaseTool):
    name: str = "web_fetch"
    description: str = ""
    args_schema: type[BaseModel] = WebFetchArgs
    _fetcher: WebFetcher = PrivateAttr()

    def __init__(self, fetcher: WebFetcher) -> None:
        text = tool_text("web_fetch", window_chars=fetcher.limits.max_text_chars)
        super().__init__(name=text.name, description=text.description)
        self._fetcher = fetcher

    def _run(self, url: str, start: int = 0) -> str:
        return self._fetcher.fetch(url, start=start).to_text(self._fetcher.limits.max_text_chars + 1500)


class PythonTool(BaseTool):
    name: str = "python"
    description: str = ""
    args_schema: type[BaseModel] = PythonArgs
    _sandbox: PythonSandbox = PrivateAttr()

    def __init__(self, sandbox: PythonSandbox) -> None:
        limits = sandbox.limits
        text = tool_text(
            "python",
            preloaded=", ".join(preloaded_names()),
            timeout_s=f"{limits.timeout_s:g}",
            memory_mb=limits.memory_mb,
            max_output_chars=limits.max_output_chars,
        )
        super().__init__(name=text.name, description=text.description)
        self._sandbox = sandbox

    def _run(self, code: str) -> str:
        limit = self._sandbox.limits.max_output_chars + self._sandbox.limits.max_value_chars + 500
        return self._sandbox.run(code).to_text(limit)
