"""Latency figures for the research tools: ``uv run python -m taskcrew.tools.research.bench``.

Prints medians and 90th percentiles (ms) for: the sandbox (rejected in the parent, a trivial run, a
small computation, the bare interpreter start for comparison), the intranet search, and web_fetch of
an intranet page. Uses the real intranet on a free loopback port; nothing leaves the machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from taskcrew.intranet.server import IntranetServer, Site
from taskcrew.tools.research.python_sandbox import PythonRun, PythonSandbox
from taskcrew.tools.research.search import IntranetSearchBackend
from taskcrew.tools.research.web import HostAllowList, WebFetcher


def _timed(fn: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _line(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"{label:<52} median {statistics.median(ordered):8.1f} ms   p90 {p90:8.1f} ms   (n={len(ordered)})"


def main(repeats: int = 20) -> None:
    sandbox = PythonSandbox()
    print(
        _line(
            "sandbox: rejected in the parent (import os)", _timed(lambda: sandbox.run("import os"), repeats)
        )
    )
    print(_line("sandbox: trivial run (1 + 1), end to end", _timed(lambda: sandbox.run("1 + 1"), repeats)))
    startups: list[float] = []

    def trivial() -> None:
        data = sandbox.run("1 + 1").data
        if isinstance(data, PythonRun) and data.startup_ms is not None:
            startups.append(data.startup_ms)

    _timed(trivial, repeats)
    print(_line("sandbox: child start until ready (of the above)", startups))
    squares = "sum(i * i for i in range(1, 21))"
    print(_line("sandbox: sum of squares 1..20", _timed(lambda: sandbox.run(squares), repeats)))
    loop = "s = 0\nfor i in range(1_000_000):\n    s += i * i\ns"
    print(_line("sandbox: 1e6-iteration loop", _timed(lambda: sandbox.run(loop), max(3, repeats // 4))))
    bare = [sys.executable, "-I", "-S", "-B", "-c", "pass"]
    print(
        _line(
            "reference: bare `python -I -S -B -c pass`",
            _timed(lambda: subprocess.run(bare, check=True), repeats),
        )
    )
    heavy = "statistics.mean([1, 2]) + float(Decimal('1.5') + Fraction(1, 2)) + (date(2026, 10, 2) - date(2026, 1, 1)).days"
    print(
        _line(
            "sandbox: using statistics, Decimal, Fraction, date", _timed(lambda: sandbox.run(heavy), repeats)
        )
    )

    with IntranetServer(Site.load()) as server:
        search = IntranetSearchBackend(server.base_url)
        print(
            _line(
                "intranet search over HTTP", _timed(lambda: search.search("vendor price increase"), repeats)
            )
        )
        with WebFetcher(HostAllowList([server.base_url])) as fetcher:
            url = server.base_url + "/news/2026-09-02-initech-payment-terms-net-15"
            print(_line("web_fetch: first call (imports trafilatura)", _timed(lambda: fetcher.fetch(url), 1)))
            print(_line("web_fetch: intranet page, warm", _timed(lambda: fetcher.fetch(url), repeats)))
        search.close()


if __name__ == "__main__":
    main()
