"""How fast the CLI's fast paths start: `taskcrew --help` (goal: median <= 0.3 s on a quiet machine),
a recipe's own help, and `--help` with the recipe index rebuilt (the first call after a recipe file
changed). Each figure is the wall time of a fresh process.

    uv run python bench/cli_bench.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "taskcrew.cli", *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "TASKCREW_HOME": home}
        cache = Path(home) / "cache" / "recipes-index.json"
        _time(["--help"], env)  # warm the OS file cache and the recipe index
        rows = {
            "taskcrew --help": [_time(["--help"], env) for _ in range(repeats)],
            "taskcrew enter-invoice --help": [
                _time(["enter-invoice", "--help"], env) for _ in range(repeats)
            ],
        }
        cold = []
        for _ in range(max(3, repeats // 3)):
            cache.unlink(missing_ok=True)
            cold.append(_time(["--help"], env))
        rows["taskcrew --help, index rebuilt"] = cold
    load = os.getloadavg()[0]
    print(f"CLI start-up, {repeats} runs each (load average {load:.1f} on {os.cpu_count()} cores)")
    print(f"{'command':<34} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, times in rows.items():
        print(f"{name:<34} {statistics.median(times):>9.3f} {min(times):>7.3f} {max(times):>7.3f}")
    print("goal: `taskcrew --help` median <= 0.300 s on a quiet machine")


if __name__ == "__main__":
    main()
