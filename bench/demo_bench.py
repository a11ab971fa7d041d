"""How long `taskcrew demo` takes, end to end, as a newcomer runs it.

    uv run python bench/demo_bench.py [--repeats 2] [--console]

Runs the real CLI (`taskcrew demo --auto-approve`, and with --console `taskcrew demo --console
--auto-approve`) in a fresh TASKCREW_HOME, so the first run includes seeding the demo's knowledge
store and later ones copy it. Prints wall seconds and the exit code per run; nothing is asserted
(the machine may be busy). Target: under 180 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str], home: Path) -> tuple[float, int]:
    env = {**os.environ, "TASKCREW_HOME": str(home)}
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "taskcrew.cli",
            "demo",
            "--auto-approve",
            "--runs-dir",
            str(home / "runs"),
            *args,
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return time.monotonic() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--console", action="store_true", help="also time --console (a worker, the inbox)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="demo-bench-") as tmp:
        home = Path(tmp)
        modes = [("terminal", [])] + ([("console", ["--console"])] if opts.console else [])
        print(f"{'mode':<10} {'run':>4} {'seconds':>8} {'exit':>5}")
        for name, extra in modes:
            for index in range(1, opts.repeats + 1):
                seconds, code = run(extra, home)
                print(f"{name:<10} {index:>4} {seconds:>8.1f} {code:>5}", flush=True)
        print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
