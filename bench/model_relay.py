"""A local OpenAI-compatible endpoint answered by someone reading each request (a person, or a helper
playing the model): the measurement "with a model in the loop" of docs/real-models.md.

    uv run python bench/model_relay.py serve --queue /tmp/relay --port 8990
    taskcrew run "..." --model worker@http://127.0.0.1:8990/v1 --verifier-model checker@http://127.0.0.1:8990/v1

Each POST /v1/chat/completions is written to ``<queue>/NNNN.req.md`` (model, every message, the tool
schemas — shown in full the first time a tool set appears, later as "same as request N") and the
request blocks until ``<queue>/NNNN.ans.json`` exists. The answer is the assistant message:

    {"content": "text or null", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.pdf"}}]}

(``tool_calls`` may be left out; ``arguments`` may be an object or a JSON string). It is returned
with ids, ``finish_reason`` and usage counts (o200k tokens of the request's message text, offline,
else characters / 4). ``<queue>/NNNN.raw.json`` keeps the request as sent.

    uv run python bench/model_relay.py answer --queue /tmp/relay 7 --text "..." --call read_file '{"path": "a.pdf"}'

writes an answer file (``--call`` may repeat). Set TASKCREW_MODEL_TIMEOUT high (e.g. 1800) and
TASKCREW_MODEL_RETRIES=0 for the run: a reader is slower than a model.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _count_tokens(text: str) -> int:
    try:
        import bpe_openai  # the offline o200k tokenizer taskcrew counts prompts with

        return len(bpe_openai.get_encoding("o200k_base").encode(text, disallowed_special=()))
    except Exception:  # no tokenizer at hand: a rough count is enough for usage figures
        return len(text) // 4 + 1


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def render_request(number: int, body: dict[str, Any], tools_seen: dict[str, int]) -> str:
    lines = [f"# request {number} · model {body.get('model')}", ""]
    for i, message in enumerate(body.get("messages", [])):
        role = message.get("role")
        head = f"## [{i}] {role}"
        if message.get("tool_call_id"):
            head += f" (result of {message['tool_call_id']})"
        lines += [head, _text(message.get("content"))]
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            lines.append(f"-> tool call {call.get('id')}: {fn.get('name')}({fn.get('arguments')})")
        lines.append("")
    tools = body.get("tools") or []
    if tools:
        key = hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).hexdigest()
        names = ", ".join(t.get("function", {}).get("name", "?") for t in tools)
        if key in tools_seen:
            lines.append(f"## tools: {names} (schemas same as request {tools_seen[key]})")
        else:
            tools_seen[key] = number
            lines.append("## tools")
            for tool in tools:
                fn = tool.get("function", {})
                lines.append(f"### {fn.get('name')}: {fn.get('description')}")
                lines.append(json.dumps(fn.get("parameters"), ensure_ascii=False))
    extra = {k: v for k, v in body.items() if k not in ("messages", "tools", "model")}
    if extra:
        lines += ["", f"## options {json.dumps(extra, ensure_ascii=False)}"]
    return "\n".join(lines) + "\n"


def to_message(answer: dict[str, Any], number: int) -> tuple[dict[str, Any], str]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    calls = answer.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"]
                    if isinstance(c["arguments"], str)
                    else json.dumps(c["arguments"]),
                },
            }
            for i, c in enumerate(calls)
        ]
        return message, "tool_calls"
    return message, "stop"


class Relay:
    def __init__(self, queue: Path, port: int, poll_s: float = 0.3) -> None:
        self.queue = queue
        self.poll_s = poll_s
        self.queue.mkdir(parents=True, exist_ok=True)
        self.count = len(list(self.queue.glob("*.req.md")))
        self.tools_seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.httpd.daemon_threads = True

    def take_number(self, body: dict[str, Any]) -> int:
        with self._lock:
            self.count += 1
            number = self.count
            (self.queue / f"{number:04d}.raw.json").write_text(json.dumps(body, indent=1, ensure_ascii=False))
            text = render_request(number, body, self.tools_seen)
            (self.queue / f"{number:04d}.req.md").write_text(text)
        print(f"request {number} ({body.get('model')}, {len(text)} chars) waiting", flush=True)
        return number

    def wait_answer(self, number: int) -> dict[str, Any]:
        path = self.queue / f"{number:04d}.ans.json"
        while True:
            if path.exists():
                try:
                    return dict(json.loads(path.read_text()))
                except json.JSONDecodeError:
                    pass  # still being written
            time.sleep(self.poll_s)

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        number = self.take_number(body)
        started = time.monotonic()
        message, finish = to_message(self.wait_answer(number), number)
        prompt = sum(_count_tokens(_text(m.get("content"))) for m in body.get("messages", []))
        completion = _count_tokens(json.dumps(message, ensure_ascii=False))
        print(f"request {number} answered after {time.monotonic() - started:.0f}s ({finish})", flush=True)
        return {
            "id": f"chatcmpl-relay-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "relay"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if body.get("stream"):
                    self._send(400, {"error": {"message": "the relay does not stream"}})
                    return
                self._send(200, relay.complete(body))

            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    self._send(200, {"object": "list", "data": []})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="answer /v1/chat/completions from answer files")
    serve.add_argument("--queue", type=Path, required=True)
    serve.add_argument("--port", type=int, default=8990)
    answer = sub.add_parser("answer", help="write the answer to request N")
    answer.add_argument("--queue", type=Path, required=True)
    answer.add_argument("number", type=int)
    answer.add_argument("--text", default=None)
    answer.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON_ARGS"))
    args = parser.parse_args(argv)
    if args.command == "serve":
        relay = Relay(args.queue, args.port)
        print(f"relay on http://127.0.0.1:{args.port}/v1, queue {args.queue}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            relay.httpd.serve_forever()
        return 0
    calls = []
    for name, raw in args.call:
        try:
            calls.append({"name": name, "arguments": json.loads(raw)})
        except json.JSONDecodeError as exc:
            print(
                f"--call {name}: arguments are not JSON ({exc}); quote them as one JSON object",
                file=sys.stderr,
            )
            return 2
    target = args.queue / f"{args.number:04d}.ans.json"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"content": args.text, "tool_calls": calls}, ensure_ascii=False))
    tmp.rename(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
