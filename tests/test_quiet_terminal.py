"""Errors on background threads never reach the clerk's terminal: they go to the run's trace as
warnings. The headline runs under a real PTY (a terminal, as a person sees it); the scripted solver
answers over real HTTP."""

from __future__ import annotations

import os
import pty
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from taskcrew.background import warnings_to
from taskcrew.eval.models import load_cases
from taskcrew.eval.solvers import scripted_models
from taskcrew.tools.browser.gatekeeper import Gatekeeper


def test_a_proxy_connection_that_fails_is_a_warning_not_a_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    gatekeeper = Gatekeeper()
    port = gatekeeper.start()
    heard: list[str] = []
    arrived = threading.Event()

    def sink(text: str) -> None:
        heard.append(text)
        arrived.set()

    upstream = socket.create_server(("127.0.0.1", 0))
    try:
        with warnings_to(sink), socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(f"CONNECT 127.0.0.1:{upstream.getsockname()[1]} HTTP/1.1\r\n".encode())
            # the proxy reads the request line and waits for its headers: the reset breaks that read
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # reset: the proxy's next read of it fails
            assert arrived.wait(20), "no warning arrived"
    finally:
        gatekeeper.close()
        upstream.close()
    assert "gatekeeper proxy" in heard[0] and "ConnectionResetError" in heard[0]
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_the_headline_under_a_real_terminal_shows_no_traceback(tmp_path: Path) -> None:
    case = next(c for c in load_cases() if c.id == "northwind-headline")
    models = scripted_models(case)
    with FakeOpenAIServer(models("solver")) as worker, FakeOpenAIServer(models("auditor")) as verifier:
        command = [sys.executable, "-m", "taskcrew.cli", "run", case.task]
        command += [
            "--model",
            f"worker@{worker.base_url}",
            "--verifier-model",
            f"verifier@{verifier.base_url}",
        ]
        command += ["--erp-url", "http://127.0.0.1:0", "--intranet-url", "", "--auto-approve"]
        env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "COLUMNS": "120"}
        screen, code = _in_a_terminal(command, env, timeout=360)
    assert code == 0, screen[-3000:]
    assert "Done, and independently verified" in screen or "done" in screen
    assert "Traceback" not in screen, screen


def _in_a_terminal(command: list[str], env: dict[str, str], timeout: float) -> tuple[str, int]:
    """Run ``command`` with a PTY as its terminal; everything it showed, and its exit code."""
    main, child = pty.openpty()
    proc = subprocess.Popen(command, stdin=child, stdout=child, stderr=child, env=env, start_new_session=True)
    os.close(child)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    data = os.read(main, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return out.decode("utf-8", "replace"), code
