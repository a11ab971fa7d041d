"""Acme Payables speed figures: start/stop time and per-request latency over real HTTP.

    uv run python bench/erp_bench.py [--rounds 20]

Prints medians and 95th percentiles in milliseconds. Figures, not assertions: the machine is shared.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from taskcrew.mock_erp import ChaosConfig, ErpServer, ErpSettings


def timed(action: Callable[[], object], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def csrf(page: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    if match is None:
        raise SystemExit("no CSRF token on the page")
    return match.group(1)


def report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"{name:<34} median {statistics.median(samples):7.1f} ms   p95 {p95:7.1f} ms   (n={len(samples)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    rounds = parser.parse_args().rounds
    settings = ErpSettings()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        starts, stops = [], []
        for n in range(rounds):
            server = ErpServer(folder / f"s{n}.sqlite3", settings=settings, chaos=ChaosConfig.off())
            starts += timed(server.start, 1)
            httpx.get(server.url + "/healthz")
            stops += timed(server.stop, 1)
        report("start (new database, seeded)", starts)
        report("stop", stops)

        with ErpServer(folder / "load.sqlite3", settings=settings, chaos=ChaosConfig.off()) as erp:
            client = httpx.Client(base_url=erp.url)
            token = csrf(client.get("/login").text)
            client.post("/login", data={"username": "demo", "password": "demo123", "csrf_token": token})
            report("GET /bills (logged in)", timed(lambda: client.get("/bills"), rounds * 5))
            report("GET /bills?status=unpaid&due_before", timed(
                lambda: client.get("/bills", params={"status": "unpaid", "due_before": "2026-10-10"}), rounds * 5
            ))  # fmt: skip
            report("GET /_debug/state", timed(lambda: client.get("/_debug/state"), rounds * 5))
            form_token = csrf(client.get("/bills/new").text)
            counter = iter(range(1_000_000))

            def save() -> None:
                n = next(counter)
                response = client.post("/bills/new", data={
                    "csrf_token": form_token, "vendor_id": "1", "invoice_number": f"B-{n}", "amount": f"{100 + n}.00",
                    "currency": "USD", "invoice_date": "2026-09-12", "due_date": "2026-10-12",
                })  # fmt: skip
                assert response.status_code == 303, response.status_code

            report("POST /bills/new (valid save)", timed(save, rounds * 5))
            client.close()


if __name__ == "__main__":
    main()
