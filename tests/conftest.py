"""Shared test set-up: an isolated home, quiet crewai, and no network beyond loopback.

Only the LLM is ever faked. Everything else (Chromium, the ERP over HTTP, SQLite, Chroma) is real.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import tempfile
from pathlib import Path

import pytest

# Before anything imports crewai / chromadb / onnxruntime.
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="taskcrew-test-home-"))
os.environ["TASKCREW_HOME"] = str(_SESSION_HOME)
os.environ["TASKCREW_RUNS"] = str(_SESSION_HOME / "runs")
os.environ["CREWAI_TESTING"] = "true"
for _k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TASKCREW_MODEL", "TASKCREW_VERIFIER_MODEL"):
    os.environ.pop(_k, None)

from taskcrew.config import quiet_crewai_env  # noqa: E402

quiet_crewai_env(_SESSION_HOME / "crewai")


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
    else:
        return isinstance(address, (str, bytes))  # AF_UNIX path
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


class NetworkBlocked(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any socket opened by this process to a non-loopback address fails the test."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            raise NetworkBlocked(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        if not _is_loopback(address):
            raise NetworkBlocked(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh TASKCREW_HOME for one test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("TASKCREW_HOME", str(home))
    monkeypatch.setenv("TASKCREW_RUNS", str(home / "runs"))
    return home


# Each area keeps its shared fixtures in its own module; they are re-exported here.
from fixtures_browser import *  # noqa: E402, F403
from fixtures_console import *  # noqa: E402, F403
from fixtures_documents import *  # noqa: E402, F403
from fixtures_erp import *  # noqa: E402, F403
from fixtures_eval import *  # noqa: E402, F403
from fixtures_jobs import *  # noqa: E402, F403
from fixtures_knowledge import *  # noqa: E402, F403
from fixtures_research import *  # noqa: E402, F403
from fixtures_routines import *  # noqa: E402, F403


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files with the most end-to-end (``slow``) tests run first, so the two processes do not
    end on one long file while the other idles (xdist hands out whole files in this order, see
    ``--no-loadscope-reorder`` in pyproject); the order within a file is kept."""

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    slow: dict[str, int] = {}
    for item in items:
        slow[file_of(item)] = slow.get(file_of(item), 0) + bool(item.get_closest_marker("slow"))
    order = {name: i for i, name in enumerate(slow)}
    items.sort(key=lambda item: (-slow[file_of(item)], order[file_of(item)]))
