"""bench/model_relay.py: the endpoint a person (or a helper) answers for the model-in-the-loop
measurement of docs/real-models.md. Real HTTP on localhost, real files; nothing is faked."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def relay_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("model_relay", ROOT / "bench" / "model_relay.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait_for(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def _post(url: str, body: dict[str, Any], out: list[dict[str, Any]]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        out.append(json.loads(response.read()))


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read one file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


def test_a_request_waits_for_its_answer_file_and_comes_back_as_tool_calls(
    tmp_path: Path, relay_module: ModuleType
) -> None:
    relay = relay_module.Relay(tmp_path / "q", 0, poll_s=0.05)
    threading.Thread(target=relay.httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{relay.httpd.server_address[1]}/v1/chat/completions"
    try:
        body = {
            "model": "worker-llm",
            "messages": [
                {"role": "system", "content": "You are File reader."},
                {"role": "user", "content": "Find the latest invoice."},
            ],
            "tools": TOOLS,
        }
        replies: list[dict[str, Any]] = []
        first = threading.Thread(target=_post, args=(url, body, replies))
        first.start()
        _wait_for(tmp_path / "q" / "0001.req.md")
        shown = (tmp_path / "q" / "0001.req.md").read_text()
        assert "model worker-llm" in shown and "Find the latest invoice." in shown
        assert "### read_file: Read one file." in shown  # the schema in full the first time
        assert not replies  # it blocks until the answer is written
        assert (
            relay_module.main(
                ["answer", "--queue", str(tmp_path / "q"), "1", "--call", "read_file", '{"path": "a.eml"}']
            )
            == 0
        )
        first.join(timeout=30)
        message = replies[0]["choices"][0]["message"]
        assert replies[0]["choices"][0]["finish_reason"] == "tool_calls"
        assert message["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "a.eml"}'}
        assert message["tool_calls"][0]["id"]
        assert replies[0]["usage"]["prompt_tokens"] > 0

        second = threading.Thread(target=_post, args=(url, body, replies))
        second.start()
        _wait_for(tmp_path / "q" / "0002.req.md")
        assert "schemas same as request 1" in (tmp_path / "q" / "0002.req.md").read_text()
        (tmp_path / "q" / "0002.ans.json").write_text(json.dumps({"content": '{"status": "done"}'}))
        second.join(timeout=30)
        assert replies[1]["choices"][0]["finish_reason"] == "stop"
        assert replies[1]["choices"][0]["message"]["content"] == '{"status": "done"}'
    finally:
        relay.httpd.shutdown()
        relay.httpd.server_close()


def test_answer_arguments_that_are_not_json_get_a_one_line_error(
    tmp_path: Path, relay_module: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code = relay_module.main(["answer", "--queue", str(tmp_path), "3", "--call", "read_file", "{path: a}"])
    assert code == 2
    assert "arguments are not JSON" in capsys.readouterr().err
    assert not (tmp_path / "0003.ans.json").exists()
