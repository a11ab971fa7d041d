"""The HTTP server around ErpApp: ``ErpServer`` for tests and the crew, ``serve_forever`` for the CLI."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from taskcrew.background import warn
from taskcrew.mock_erp.app import ErpApp
from taskcrew.mock_erp.db import open_database
from taskcrew.mock_erp.errors import ErpError
from taskcrew.mock_erp.models import DebugState
from taskcrew.mock_erp.seed import SeedData, load_seed
from taskcrew.mock_erp.settings import ChaosConfig, ErpSettings
from taskcrew.mock_erp.web import Request, Response

log = logging.getLogger("taskcrew.mock_erp")

MAX_BODY = 1_000_000
LISTEN_BACKLOG = 1024  # connections the kernel queues while every handler thread is busy
MAX_HANDLER_THREADS = 64  # connections served at once; the rest wait in the backlog
HANDLER_THREAD_NAME = "acme-erp-handler"


class ErpStartError(ErpError):
    pass


class _Handler(BaseHTTPRequestHandler):
    server: _HttpServer
    server_version = "AcmePayables/1.0"
    sys_version = ""
    timeout = 30  # an idle connection is dropped after this many seconds

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length_text = self.headers.get("Content-Length", "0") or "0"
        length = int(length_text) if length_text.isdigit() else -1
        if length < 0 or length > MAX_BODY:
            self._send(Response(status=413, body=b"Request body too large or malformed.\n"))
            return
        body = self.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in self.headers.items()}
        request = Request.parse(self.command, self.path, headers, body)
        try:
            response = self.server.app.handle(request)
        except Exception:
            log.exception("error while handling %s %s", self.command, self.path)
            response = Response(status=500, body=b"Internal server error.\n", content_type="text/plain")
        self._send(response)

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _HttpServer(ThreadingHTTPServer):
    """Tracks open connections so ``close`` can end idle keep-alive/preconnect sockets and join
    every handler thread (no leaked threads or sockets)."""

    daemon_threads = False
    block_on_close = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], app: ErpApp) -> None:
        self.app = app
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_HANDLER_THREADS)
        self._closing = threading.Event()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Bounded threads: wait for a free handler; meanwhile new connections queue in the backlog.
        while not self._slots.acquire(timeout=0.1):
            if self._closing.is_set():
                self.shutdown_request(request)
                return
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            with self._open_lock:
                self._open.discard(request)
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        threading.current_thread().name = HANDLER_THREAD_NAME  # countable apart from other threads
        super().process_request_thread(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            held = request in self._open
            self._open.discard(request)
        super().shutdown_request(request)
        if held:
            self._slots.release()

    def shutdown(self) -> None:
        self._closing.set()
        super().shutdown()

    def handle_error(self, request: Any, client_address: Any) -> None:
        warn(
            f"the demo ERP (connection from {client_address[0] if client_address else '?'})",
            sys.exc_info()[1],
        )

    def close(self) -> None:
        with self._open_lock:
            still_open = list(self._open)
        for sock in still_open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.server_close()  # joins the handler threads


class ErpServer:
    """Acme Payables on a real HTTP server, in a background thread.

    >>> with ErpServer(tmp_path / "erp.sqlite3", chaos=ChaosConfig.off()) as erp:
    ...     httpx.get(erp.url + "/login")
    """

    def __init__(
        self,
        db_path: Path | None = None,
        *,
        settings: ErpSettings | None = None,
        chaos: ChaosConfig | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        reset: bool = False,
        seed_data: SeedData | None = None,
    ) -> None:
        if db_path is None:
            from taskcrew.config import Paths

            db_path = Paths.from_env().erp_db
        self.db_path = db_path
        self.settings = settings or ErpSettings.from_env()
        self._chaos = chaos or ChaosConfig()
        self._host = host
        self._port = port
        self._reset = reset
        self._seed = seed_data or load_seed()
        self._server: _HttpServer | None = None
        self._thread: threading.Thread | None = None
        self._app: ErpApp | None = None

    @property
    def app(self) -> ErpApp:
        if self._app is None:
            raise RuntimeError("the ERP server is not started; call start() first")
        return self._app

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the ERP server is not started; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def start(self) -> ErpServer:
        if self._server is not None:
            return self
        conn = open_database(self.db_path, self._seed, reset=self._reset)
        app = ErpApp(conn, self._seed, self.settings, self._chaos)
        try:
            server = _HttpServer((self._host, self._port), app)
        except OSError as exc:
            conn.close()
            raise ErpStartError(
                f"cannot listen on {self._host}:{self._port} ({exc.strerror or exc}); "
                "choose another port (0 picks a free one)."
            ) from exc
        self._app, self._server = app, server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.025}, name="acme-erp", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread, app = self._server, self._thread, self._app
        if server is None or thread is None or app is None:
            return
        server.shutdown()
        thread.join()
        server.close()
        app.close()
        self._server = self._thread = self._app = None

    def __enter__(self) -> ErpServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # In-process shortcuts for tests and the crew (the same data as the /_debug endpoints).
    def state(self) -> DebugState:
        return self.app.state()

    def reset(self, chaos: ChaosConfig | None = None) -> None:
        self.app.reset(chaos)

    def set_chaos(self, chaos: ChaosConfig) -> None:
        self.app.set_chaos(chaos)


def serve_forever(
    host: str = "127.0.0.1",
    port: int = 8800,
    db_path: Path | None = None,
    chaos: bool | ChaosConfig = True,
    seed: int = 0,
    reset: bool = False,
    settings: ErpSettings | None = None,
    out: Callable[[str], None] = print,
) -> None:
    """Run the ERP in the foreground until Ctrl-C or SIGTERM."""
    config = chaos if isinstance(chaos, ChaosConfig) else ChaosConfig(enabled=chaos, seed=seed)
    server = ErpServer(db_path, settings=settings, chaos=config, host=host, port=port, reset=reset)
    server.start()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_signal) if in_main else None
    faults = _describe(config)
    out(f"Acme Payables on {server.url}  (database {server.db_path})")
    out(f"Log in as '{server.settings.username}' (password from ACME_ERP_PASSWORD, demo123 unless set).")
    out(f"Chaos: {faults}. Ground truth: {server.url}/_debug/state. Ctrl-C to stop.")
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        server.stop()
        out("Acme Payables stopped.")


def _describe(config: ChaosConfig) -> str:
    if not config.enabled:
        return "off"
    parts = [f"seed {config.seed}", "save faults " + (", ".join(config.save_faults) or "none")]
    if config.latency_ms:
        parts.append(f"latency {config.latency_ms} ms")
    if config.error_rate:
        parts.append(f"random 5xx rate {config.error_rate:g}")
    if config.modal:
        parts.append("notice overlay")
    if config.shuffle_fields:
        parts.append("shuffled form fields")
    return "on (" + "; ".join(parts) + ")"
