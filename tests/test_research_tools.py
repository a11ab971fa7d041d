"""The research tools at the CrewAI edge: texts from data, arguments validated, outputs bounded."""

from __future__ import annotations

import pytest

from taskcrew.tools.research.crew_tools import (
    PythonArgs,
    PythonTool,
    WebFetchArgs,
    WebFetchTool,
    WebSearchTool,
    tool_text,
)
from taskcrew.tools.research.python_sandbox import PythonSandbox, SandboxLimits
from taskcrew.tools.research.search import DdgsBackend, IntranetSearchBackend, MinIntervalLimiter
from taskcrew.tools.research.web import UNTRUSTED_BEGIN, UNTRUSTED_END, FetchLimits, HostAllowList, WebFetcher


@pytest.fixture(scope="module")
def python_tool() -> PythonTool:
    return PythonTool(PythonSandbox(SandboxLimits(timeout_s=2, max_output_chars=300, max_value_chars=200)))


def test_descriptions_come_from_the_data_file_with_placeholders_filled(python_tool: PythonTool) -> None:
    assert python_tool.name == "python"
    assert "Time limit 2 s, memory 256 MB, output 300 characters" in python_tool.description
    assert "Decimal" in python_tool.description and "{" not in python_tool.description
    assert tool_text("web_fetch", window_chars=10).name == "web_fetch"


def test_python_tool_returns_the_value_and_refuses_escapes(python_tool: PythonTool) -> None:
    assert python_tool.run(code="sum(i * i for i in range(1, 21))") == "value: 2870"
    refused = python_tool.run(code="__import__('os').system('id')")
    assert refused.startswith("ERROR: line 1: '__import__' is not allowed")


def test_python_tool_output_is_bounded(python_tool: PythonTool) -> None:
    text = python_tool.run(code="for i in range(10_000):\n    print('row', i)\n'x' * 5000")
    assert len(text) < 300 + 200 + 500
    assert "output truncated" in text and "more chars" in text


def test_python_tool_times_out_cleanly(python_tool: PythonTool) -> None:
    assert python_tool.run(code="while True:\n    pass").startswith("ERROR: timed out after 2 s")


def test_argument_schemas_describe_and_bound_the_inputs() -> None:
    schema = WebFetchArgs.model_json_schema()
    assert schema["required"] == ["url"] and "description" in schema["properties"]["start"]
    with pytest.raises(ValueError):
        PythonArgs(code="")
    with pytest.raises(ValueError):
        WebFetchArgs(url="http://x", start=-1)


def test_search_and_fetch_tools_on_the_intranet(intranet_url: str) -> None:
    search = WebSearchTool(IntranetSearchBackend(intranet_url))
    assert "the company intranet" in search.description
    listing = search.run(query="Initech payment terms", max_results=3)
    assert f"{intranet_url}/news/2026-09-02-initech-payment-terms-net-15" in listing
    assert UNTRUSTED_BEGIN in listing

    fetch = WebFetchTool(WebFetcher(HostAllowList([intranet_url]), limits=FetchLimits(max_text_chars=600)))
    page = fetch.run(url=f"{intranet_url}/news/2026-09-02-initech-payment-terms-net-15")
    assert page.startswith(f"URL: {intranet_url}/news/2026-09-02-initech-payment-terms-net-15\n")
    assert "Title: Initech moves to Net 15 payment terms from September 2026" in page
    assert "(Net 15)" in page and page.rstrip().endswith(UNTRUSTED_END)
    assert "call again with start=600" in page
    more = fetch.run(url=f"{intranet_url}/news/2026-09-02-initech-payment-terms-net-15", start=600)
    assert "characters 600-" in more


def test_fetch_tool_refusals_are_text_not_exceptions(intranet_url: str) -> None:
    fetch = WebFetchTool(WebFetcher(HostAllowList([intranet_url])))
    assert fetch.run(url="https://evil.example/").startswith("ERROR: blocked by policy: host 'evil.example'")
    assert fetch.run(url="file:///etc/passwd").startswith("ERROR: only http and https")


def test_web_search_tool_offline_is_an_error_text(closed_port: int) -> None:
    tool = WebSearchTool(DdgsBackend(limiter=MinIntervalLimiter(0), proxy=f"http://127.0.0.1:{closed_port}"))
    assert "the public web" in tool.description
    assert tool.run(query="acme").startswith("ERROR: web search is unavailable")
