"""Model calls have limits: a server that accepts and never answers ends the run `error`, quickly,
with a report that names the call that stalled; bad limit values are refused up front."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.calls import CallLimits
from taskcrew.crew.modelspec import ModelConfigError


@pytest.fixture
def stalling_server() -> Iterator[tuple[str, list[float]]]:
    """Accepts every connection, reads the request, and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    accepted: list[float] = []
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append(time.monotonic())
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.mark.timeout(120)
def test_a_stalled_model_ends_the_run_with_a_report_naming_the_call(
    isolated_home: Path, stalling_server: tuple[str, list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, accepted = stalling_server
    monkeypatch.setenv("TASKCREW_MODEL_TIMEOUT", "1")
    monkeypatch.setenv("TASKCREW_MODEL_RETRIES", "1")
    started = time.monotonic()
    result = CliRunner().invoke(
        app,
        ["run", "Enter the latest Globex invoice", "--model", f"w@{url}", "--verifier-model", f"v@{url}",
         "--erp-url", "http://127.0.0.1:0", "--intranet-url", ""],
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert "stalled" in result.output and "planner's model call" in result.output, result.output
    assert "Event pairing mismatch" not in result.output and "ERROR:root" not in result.output
    assert len(accepted) % 2 == 0  # each call: the first try and one retry, no more
    assert seconds < 60
    [run_dir] = (isolated_home / "runs").iterdir()
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "stalled" in report and "TASKCREW_MODEL_TIMEOUT" in report


def test_limits_come_from_the_environment_and_bad_values_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKCREW_MODEL_CONNECT_TIMEOUT", "2.5")
    monkeypatch.setenv("TASKCREW_MODEL_TIMEOUT", "30")
    monkeypatch.setenv("TASKCREW_MODEL_RETRIES", "0")
    limits = CallLimits.from_env()
    assert (limits.connect_timeout_s, limits.timeout_s, limits.retries) == (2.5, 30, 0)
    params = limits.client_params()
    assert params["max_retries"] == 0 and params["timeout"].connect == 2.5 and params["timeout"].read == 30
    for value in ("soon", "-1", "0"):
        monkeypatch.setenv("TASKCREW_MODEL_TIMEOUT", value)
        with pytest.raises(ModelConfigError, match="TASKCREW_MODEL_TIMEOUT"):
            CallLimits.from_env()
    monkeypatch.setenv("TASKCREW_MODEL_TIMEOUT", "30")
    monkeypatch.setenv("TASKCREW_MODEL_RETRIES", "many")
    result = CliRunner().invoke(
        app,
        ["run", "Pay", "--model", "a@http://127.0.0.1:9/v1", "--verifier-model", "b@http://127.0.0.1:9/v1"],
    )
    assert result.exit_code == 2 and "TASKCREW_MODEL_RETRIES='many'" in result.output, result.output
