"""Run the adversarial suite and count: cases, blocked, got through (must be 0), crashed.

    uv run python bench/security_bench.py [-k EXPR]

The suite is tests/test_adversarial_*.py (see docs/security.md): every case is an attack through
real Chromium, the real ERP, attacker pages on an allowed host and a canary server, most at the
browser level and the headline ones as whole runs through the Flow with hostile scripted models,
plus the multi-user attacks on the approval authority (tests/test_adversarial_approvals.py: a second
employee, rows forged in the job database, a submitter who claims another name).
A case that passes was blocked; one whose check failed got through; one that raised anything else
crashed. Prints figures only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default=None, help="only the cases matching this pytest -k expression")
    args = parser.parse_args()
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_adversarial_*.py"))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
        if args.k:
            cmd += ["-k", args.k]
        started = time.monotonic()
        subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        if not report.is_file():
            print("the suite did not run (no junit report); run it with pytest to see why")
            return 2
        outcomes: Counter[str] = Counter()
        by_area: dict[str, Counter[str]] = {}
        through: list[str] = []
        crashed: list[str] = []
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
            failure, error = case.find("failure"), case.find("error")
            if case.find("skipped") is not None:
                outcome = "skipped"
            elif failure is not None and "AssertionError" in (
                failure.get("message", "") + (failure.text or "")
            ):
                outcome, _ = "got through", through.append(name)
            elif failure is not None or error is not None:
                outcome, _ = "crashed", crashed.append(name)
            else:
                outcome = "blocked"
            outcomes[outcome] += 1
            area = name.split("::")[1].split("[")[0]
            by_area.setdefault(area, Counter())[outcome] += 1
    total = sum(outcomes.values())
    print(f"adversarial suite: {len(files)} modules, {seconds:.0f} s")
    print(f"{'attack':<62} {'cases':>5} {'blocked':>7} {'through':>7} {'crashed':>7}")
    for area, counts in sorted(by_area.items()):
        print(
            f"{area[:62]:<62} {sum(counts.values()):>5} {counts['blocked']:>7} "
            f"{counts['got through']:>7} {counts['crashed']:>7}"
        )
    print(
        f"\ncases {total}, blocked {outcomes['blocked']}, got through {outcomes['got through']}, "
        f"crashed {outcomes['crashed']}, skipped {outcomes['skipped']}"
    )
    for name in through:
        print(f"  GOT THROUGH: {name}")
    for name in crashed:
        print(f"  CRASHED: {name}")
    return 0 if not through and not crashed else 1


if __name__ == "__main__":
    raise SystemExit(main())
