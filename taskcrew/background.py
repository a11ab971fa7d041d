"""Errors on background threads (the gatekeeper proxy, the demo ERP, the intranet, any helper thread)
never reach the person's terminal: each becomes a warning in the trace of the run that is going on
(``warnings_to``), and a debug line in the log otherwise.

    class _Server(QuietServer, socketserver.ThreadingTCPServer): background_name = "gatekeeper proxy"
    with warnings_to(lambda text: tracer.emit(...)):   # for the length of a run
        ...
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("taskcrew.background")
MAX_PER_SINK = 50  # a run's trace holds at most this many; the rest are counted in the log

Sink = Callable[[str], None]
_sinks: list[Sink] = []
_lock = threading.Lock()
_hooked = False


def warn(where: str, exc: BaseException | None = None) -> None:
    """Tell the current run(s) that something failed on a background thread (one line, no traceback)."""
    text = f"{where}: {type(exc).__name__}: {exc}" if exc is not None else where
    log.debug("background error in %s", where, exc_info=exc)
    with _lock:
        sinks = list(_sinks)
    for sink in sinks:
        try:
            sink(text)
        except Exception:  # a sink that fails must not bring the thread's error back to the terminal
            log.debug("a warning sink failed", exc_info=True)


@contextmanager
def warnings_to(sink: Sink) -> Iterator[None]:
    """Send background warnings to ``sink`` (at most MAX_PER_SINK of them) while the block runs."""
    install_thread_hook()
    count = 0

    def bounded(text: str) -> None:
        nonlocal count
        count += 1
        if count <= MAX_PER_SINK:
            sink(text)

    with _lock:
        _sinks.append(bounded)
    try:
        yield
    finally:
        with _lock:
            _sinks.remove(bounded)


def install_thread_hook() -> None:
    """An uncaught exception in any thread becomes a warning instead of a printed traceback."""
    global _hooked
    with _lock:
        if _hooked:
            return
        _hooked = True

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        warn(f"background thread {name}", args.exc_value)

    threading.excepthook = hook


class QuietServer:
    """Mix into a socketserver server: a failed connection is a warning, not a traceback on stderr."""

    background_name = "a local server"

    def handle_error(self, request: Any, client_address: Any) -> None:
        warn(
            f"{self.background_name} (connection from {client_address[0] if client_address else '?'})",
            sys.exc_info()[1],
        )
