"""Acme Payables speed figures: start/stop time and per-request latency over real HTTP.

    uv run python bench/erp_bench.py [--rounds 20] [--clients 500] [--chaos]

Prints medians and 95th percentiles in milliseconds. Figures, not assertions: the machine is shared.
``--clients N`` then runs N concurrent clients, each its own connection doing a whole login + new-bill
flow (with --chaos: the default save faults, answered by logging in again / retrying as the crew does),
and prints failed flows, p50/p95 flow latency and the kernel's ListenOverflows during the burst.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import threading
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
    parser.add_argument("--clients", type=int, default=0, help="concurrent login+save flows (e.g. 500)")
    parser.add_argument("--chaos", action="store_true", help="with the default save faults on")
    args = parser.parse_args()
    rounds = args.rounds
    if args.clients:
        with tempfile.TemporaryDirectory() as tmp:
            burst(Path(tmp), args.clients, args.chaos)
        return
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


def listen_overflows() -> int | None:
    """TcpExt ListenOverflows from /proc (Linux): connections the kernel dropped on a full backlog."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=False))
            return int(table.get("ListenOverflows", 0))
    return None


def flow(url: str, n: int, chaos: bool) -> None:
    """One user: log in, open the form, save a bill; with chaos, log in afresh and retry like the crew."""
    status = 0
    for _attempt in range(4 if chaos else 1):
        with httpx.Client(base_url=url, timeout=60, follow_redirects=False) as client:
            token = _token(client.get("/login").text)
            client.post("/login", data={"username": "demo", "password": "demo123", "csrf_token": token})
            form = client.get("/bills/new", follow_redirects=True)
            response = client.post("/bills/new", data={
                "csrf_token": _token(form.text), "vendor_id": "1", "invoice_number": f"C-{n}",
                "amount": f"{100 + n}.00", "currency": "USD", "invoice_date": "2026-09-12", "due_date": "2026-10-12",
            })  # fmt: skip
            status = response.status_code
            if status == 303 and "/login" not in response.headers.get("location", ""):
                return
    raise RuntimeError(f"save answered {status}")


def _token(page: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    if match is None:
        raise RuntimeError("no CSRF token on the page")
    return match.group(1)


def burst(folder: Path, clients: int, chaos: bool) -> None:
    from concurrent.futures import ThreadPoolExecutor

    config = ChaosConfig() if chaos else ChaosConfig.off()
    with ErpServer(folder / "burst.sqlite3", settings=ErpSettings(), chaos=config) as erp:
        barrier = threading.Barrier(clients)

        def one(n: int) -> float | str:
            barrier.wait()  # every client connects at once
            started = time.perf_counter()
            try:
                flow(erp.url, n, chaos)
            except Exception as exc:
                return f"{type(exc).__name__}: {exc}"
            return (time.perf_counter() - started) * 1000

        before = listen_overflows()
        with ThreadPoolExecutor(max_workers=clients) as pool:
            results = list(pool.map(one, range(clients)))
        after = listen_overflows()
        bills = len(erp.state().bills)
    times = [r for r in results if isinstance(r, float)]
    errors = [r for r in results if isinstance(r, str)]
    overflow = "n/a" if before is None or after is None else str(after - before)
    print(f"{clients} concurrent login+save flows (chaos {'on' if chaos else 'off'}): {len(errors)} failed, "
          f"ListenOverflows +{overflow}, bills in the ERP {bills}")  # fmt: skip
    if times:
        report("  flow latency", times)
    for error in sorted(set(errors))[:5]:
        print(f"  failure: {error} (x{errors.count(error)})")


if __name__ == "__main__":
    main()
