"""The backstop behind the network guard: a local proxy that Chromium is launched with.

Every request the guard routes is fetched by Playwright itself and fulfilled into the page, so it
never touches the browser's own network stack. Whatever the browser would still send on its own —
speculation-rules prefetch and prerender, the first request of a window the browser opened by itself
(Shift/Ctrl-click), WebRTC over TCP, anything a future Chromium adds — goes to this proxy, which
refuses it and writes it down. That includes every CONNECT tunnel (how Chromium opens a WebSocket
through a proxy), to any host: a page's WebSocket is refused by the network guard, and one opened
around it (from a worker) would carry messages no approver saw.
"""

from __future__ import annotations

import contextlib
import socketserver
import threading
from dataclasses import dataclass, field

from taskcrew.background import QuietServer


@dataclass
class Refused:
    method: str
    target: str


@dataclass
class _State:
    refused: list[Refused] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
        with state.lock:
            state.refused.append(Refused(method.upper() or "?", target))
        with contextlib.suppress(OSError):
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


class Gatekeeper:
    """Owned by the browser runtime: refuses whatever reaches it, and lists it."""

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

    def refused_since(self, mark: int) -> list[Refused]:
        with self._state.lock:
            return list(self._state.refused[mark:])

    @property
    def refused_count(self) -> int:
        with self._state.lock:
            return len(self._state.refused)
