import socket

import pytest

from taskcrew.tools.base import ToolResult

from conftest import NetworkBlocked


def test_tool_result_text_is_bounded() -> None:
    assert ToolResult.success({"a": 1}).to_text().startswith("{")
    assert ToolResult.failure("HTTP 503").to_text() == "ERROR: HTTP 503"
    long = ToolResult.success("x" * 10_000).to_text(limit=500)
    assert len(long) <= 500 and "truncated" in long


def test_network_guard_blocks_non_loopback() -> None:
    s = socket.socket()
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("203.0.113.5", 80))
    finally:
        s.close()
