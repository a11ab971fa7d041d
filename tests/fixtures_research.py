"""pytest fixtures for the research area (imported by conftest.py).

* ``intranet_url``: the real intranet site on a free loopback port (one per session; read-only).
* ``web_site``: a second local HTTP server with scripted routes (redirects, big bodies, slow answers,
  saved pages under ``/saved/<file>``) for web_fetch tests.
* ``closed_port``: a loopback port with nothing listening (an "offline" proxy or server).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskcrew.intranet.server import IntranetServer, Site

__all__ = [
    "SAVED_PAGES",
    "Reply",
    "ScriptedSite",
    "closed_port",
    "intranet_server",
    "intranet_url",
    "web_site",
]

SAVED_PAGES = Path(__file__).with_name("pages_saved")


@pytest.fixture(scope="session")
def intranet_server() -> Iterator[IntranetServer]:
    with IntranetServer(Site.load()) as server:
        yield server


@pytest.fixture(scope="session")
def intranet_url(intranet_server: IntranetServer) -> str:
    return intranet_server.base_url


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay_s: float = 0.0


@dataclass
class ScriptedSite:
    """A local web server whose routes the test sets: ``site.route("/a", Reply(...))``."""

    base_url: str
    routes: dict[str, Callable[[], Reply]]
    hits: list[str]

    def route(self, path: str, reply: Reply) -> str:
        self.routes[path] = lambda: reply
        return self.base_url + path

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.route(path, Reply(status=status, headers={"Location": location}))


def _scripted_handler(
    routes: dict[str, Callable[[], Reply]], hits: list[str]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            path = self.path.split("?")[0]
            if path.startswith("/saved/"):
                file = SAVED_PAGES / path.removeprefix("/saved/")
                reply = Reply(body=file.read_bytes(), headers={"Content-Type": "text/html"})
            elif path in routes:
                reply = routes[path]()
            else:
                reply = Reply(status=404, body=b"<html><body><h1>Not here</h1></body></html>")
            if reply.delay_s:
                time.sleep(reply.delay_s)
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            # The client may stop reading early (size cap, timeout): expected.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(reply.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def web_site() -> Iterator[ScriptedSite]:
    routes: dict[str, Callable[[], Reply]] = {}
    hits: list[str] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _scripted_handler(routes, hits))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield ScriptedSite(base_url=f"http://127.0.0.1:{httpd.server_address[1]}", routes=routes, hits=hits)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
