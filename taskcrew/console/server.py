"""Serve the console with uvicorn: on 127.0.0.1 by default; a one-time login token when no users
are configured."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable

import uvicorn

from taskcrew.console.app import build_app
from taskcrew.console.auth import load_users
from taskcrew.console.settings import ConsoleSettings, is_loopback
from taskcrew.jobs.store import Jobs


def prepare(settings: ConsoleSettings) -> tuple[ConsoleSettings, str | None]:
    """Settings with a fresh token when there are no users (the token to print), else unchanged."""
    if load_users(settings.users_file) or settings.token:
        return settings, None
    token = secrets.token_urlsafe(24)
    return settings.model_copy(update={"token": token}), token


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"Cannot listen on {host}:{port} ({exc.strerror}); choose another --port.") from exc
    sock.listen(128)
    return sock


class ConsoleServer:
    """uvicorn on a socket we bound (port 0 picks a free one); ``start`` runs it on a thread."""

    def __init__(self, settings: ConsoleSettings, jobs: Jobs | None = None) -> None:
        self.sock = bind(settings.host, settings.port)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://{settings.host}:{self.port}"
        settings = settings.model_copy(update={"port": self.port})  # the Host check needs the real port
        # proxy_headers off: a client's address is the connection's, never what its X-Forwarded-For
        # says (uvicorn trusts that header from 127.0.0.1 by default, so any local client could name
        # a new address per sign-in and escape the login throttle's per-address limits)
        config = uvicorn.Config(
            build_app(settings, jobs),
            log_level="warning",
            access_log=False,
            lifespan="on",
            proxy_headers=False,
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    def serve_forever(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self) -> ConsoleServer:
        self._thread = threading.Thread(target=self.serve_forever, name="console", daemon=True)
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the console server stopped while starting")
            threading.Event().wait(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.sock.close()


def serve(settings: ConsoleSettings, say: Callable[[str], None] = print) -> None:
    settings, token = prepare(settings)
    if not is_loopback(settings.host):
        say(f"warning: listening on {settings.host}, not loopback; put it behind HTTPS (cookies are Secure).")
    server = ConsoleServer(settings)
    say(f"taskcrew console on {server.url}  (Ctrl-C stops it)")
    if token:
        say(f"no users configured: log in with this one-time token: {token}")
    server.serve_forever()
