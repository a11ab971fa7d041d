"""The backstop behind the network guard: a local proxy that Chromium is launched with.

Every request the guard routes is fetched by Playwright itself and fulfilled into the page, so it
never touches the browser's own network stack. Whatever the browser would still send on its own —
speculation-rules prefetch and prerender, the first request of a window the browser opened by itself
(Shift/Ctrl-click), WebRTC over TCP, anything a future Chromium adds — goes to this proxy, which
refuses it and writes it down. Only a CONNECT tunnel (how Chromium opens a WebSocket through a proxy)
to a host:port that an open session's policy allows is let through.
"""

from __future__ import annotations

import contextlib
import select
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from taskcrew.background import QuietServer

Admit = Callable[[str], bool]
"""A check on a URL (ws://host:port/): True when a session's policy allows that host."""


@dataclass
class Refused:
    method: str
    target: str


@dataclass
class _State:
    admits: dict[int, Admit] = field(default_factory=dict)
    refused: list[Refused] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def admitted(self, url: str) -> bool:
        with self.lock:
            checks = list(self.admits.values())
        return any(check(url) for check in checks)


class _Server(QuietServer, socketserver.ThreadingTCPServer):
    background_name = "the browser's gatekeeper proxy"
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: _State) -> None:
        self.state = state
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server
    timeout = 30

    def handle(self) -> None:
        raw = self.rfile.readline(8192)
        if raw in (b"\r\n", b"\n"):  # an empty line before the request line is allowed (RFC 9112)
            raw = self.rfile.readline(8192)
        if not raw:
            return  # a connection opened ahead of need (Chromium preconnects) and closed unused: nothing sent
        line = raw.decode("latin-1").strip()
        while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
            pass  # headers are not needed
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0] if " " in rest else rest
        state = self.server.state
        if method.upper() == "CONNECT" and state.admitted(f"ws://{target}/"):
            self._tunnel(target)
            return
        with state.lock:
            state.refused.append(Refused(method.upper() or "?", target))
        with contextlib.suppress(OSError):
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def _tunnel(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        self.wfile.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        self.wfile.flush()
        client = self.connection
        buffered = self.rfile.peek(0) if hasattr(self.rfile, "peek") else b""
        with upstream:
            if buffered:
                upstream.sendall(self.rfile.read(len(buffered)))
            sockets = [client, upstream]
            while True:
                readable, _, broken = select.select(sockets, [], sockets, 60)
                if broken or not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)


class Gatekeeper:
    """Owned by the browser runtime; sessions admit their policy's hosts for WebSocket tunnels."""

    def __init__(self) -> None:
        self._state = _State()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        if self._server is None:
            self._server = _Server(self._state)
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="taskcrew-gatekeeper", daemon=True
            )
            self._thread.start()
        return self._server.server_address[1]

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the gatekeeper is not started")
        return self._server.server_address[1]

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def admit(self, key: int, check: Admit) -> None:
        with self._state.lock:
            self._state.admits[key] = check

    def release(self, key: int) -> None:
        with self._state.lock:
            self._state.admits.pop(key, None)

    def refused_since(self, mark: int) -> list[Refused]:
        with self._state.lock:
            return list(self._state.refused[mark:])

    @property
    def refused_count(self) -> int:
        with self._state.lock:
            return len(self._state.refused)
