"""A small local server that speaks OpenAI's /v1/chat/completions with tool calls.

The answers come from a ScriptedLLM (the only fake in the suite); everything between the crew and
this server is the real provider path: crewAI's OpenAI client, JSON over HTTP, usage accounting.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

from taskcrew.crew.scripted import ScriptedLLM

_ROLE = re.compile(r"You are ([^.\n]+)\.")


class FakeOpenAIServer:
    def __init__(self, scripted: ScriptedLLM, *, fail_first: int = 0) -> None:
        self.scripted = scripted
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first = fail_first  # answer the first N requests with HTTP 429
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
        match = _ROLE.search(system)
        agent = SimpleNamespace(role=match.group(1) if match else "direct")
        reply = self.scripted.call(messages, tools=body.get("tools"), from_agent=agent)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(reply, list):
            prose = [str(call.pop("prose")) for call in reply if isinstance(call, dict) and "prose" in call]
            message["content"] = prose[0] if prose else None  # text beside the calls, as real APIs send it
            message["tool_calls"] = reply
            finish = "tool_calls"
        else:
            message["content"] = str(reply)
            finish = "stop"
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
        completion_tokens = len(json.dumps(message)) // 4 + 1
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1_790_000_000,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    if server.fail_first > 0:
                        server.fail_first -= 1
                        self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}})
                        return
                    if not self.path.endswith("/chat/completions"):
                        self._send(404, {"error": {"message": f"no route {self.path}"}})
                        return
                    try:
                        payload = server.answer(body)
                    except AssertionError as exc:
                        self._send(500, {"error": {"message": str(exc)}})
                        return
                self._send(200, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


_REFUSED_KEY = json.dumps(
    {
        "error": {
            "message": "Incorrect API key provided: sk-fake-***.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
).encode()


class MisbehavingServer:
    """An endpoint that never answers a chat completion the way it should (the only fake here is
    the model's server; the client side is the real provider path). ``mode``:

    405           HTTP 405 with an empty body (a web server that is not an API)
    html404       HTTP 404 with an HTML page
    not_json      HTTP 200 whose body is not JSON
    unauthorized  HTTP 401 with OpenAI's error body for a key it refuses
    endless       HTTP 200 whose body never ends (a byte every 0.2 s: no read timeout trips)
    close         the socket closed without an answer
    hang          no answer at all until the server is closed
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.headers: list[dict[str, str]] = []
        self.released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __enter__(self) -> MisbehavingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.headers.append(dict(self.headers))
                server.requests += 1
                mode = server.mode
                if mode == "close":
                    self.connection.shutdown(2)
                    self.connection.close()
                    return
                if mode == "hang":
                    server.released.wait()
                    return
                status, kind, body = {
                    "405": (405, None, b""),
                    "html404": (
                        404,
                        "text/html",
                        b"<html><body><h1>Not Found</h1><p>nginx</p></body></html>",
                    ),
                    "not_json": (200, "application/json", b"Welcome to our website!"),
                    "unauthorized": (401, "application/json", _REFUSED_KEY),
                    "endless": (200, "application/json", b""),
                }[mode]
                self.send_response(status)
                if kind:
                    self.send_header("Content-Type", kind)
                if mode != "endless":
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.end_headers()
                self.wfile.write(b'{"id": "x", ')
                while not server.released.wait(0.2):
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return

        return Handler
