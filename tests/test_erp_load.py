"""The ERP serves more simultaneous clients than it has handler threads: the rest wait in a deep
listen backlog instead of being reset (bench/erp_bench.py --clients 500 measures the full flow)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.mock_erp.server import HANDLER_THREAD_NAME, LISTEN_BACKLOG, MAX_HANDLER_THREADS


@pytest.mark.timeout(60)
def test_a_burst_beyond_the_thread_limit_is_served_without_resets(tmp_path: Path) -> None:
    clients = MAX_HANDLER_THREADS * 2 + 20
    slow_pages = ChaosConfig(latency_ms=300, save_faults=[])  # every handler busy for 0.3 s
    with ErpServer(tmp_path / "erp.sqlite3", chaos=slow_pages) as erp:
        barrier = threading.Barrier(clients)
        handlers: list[int] = []

        def one(_: int) -> int:
            barrier.wait()
            with httpx.Client(timeout=60) as client:
                status = client.get(erp.url + "/login").status_code
            handlers.append(sum(t.name == HANDLER_THREAD_NAME for t in threading.enumerate()))
            return status

        with ThreadPoolExecutor(max_workers=clients) as pool:
            statuses = list(pool.map(one, range(clients)))
    assert statuses == [200] * clients
    assert LISTEN_BACKLOG >= 1024
    assert 0 < max(handlers) <= MAX_HANDLER_THREADS  # handler threads are bounded
