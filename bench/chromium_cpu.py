"""CPU that Chromium (and Playwright's driver) spend on a launch and on each browser context.

    uv run python bench/chromium_cpu.py [--contexts 4] [--repeats 3]

Launches the Chromium taskcrew would use, opens ``--contexts`` contexts (a page each: set a small
form, click it, take a screenshot, as a run's first look does) and keeps them open, then adds up
the CPU time of every process under this one (Linux ``/proc``). Twice per repeat: with taskcrew's
launch switches (``tools/browser/features.py``) and with Playwright's own ``--disable-features``
left as it is. Prints figures (median of the repeats), asserts nothing: the machine may be busy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from taskcrew.tools.browser import BrowserConfig
from taskcrew.tools.browser.runtime import plan_launch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # proc_tree

PAGE = "<h1>Bills</h1>" + "<label>Amount <input name=a></label><button>Save</button>" * 20


def _cpu(pids: Iterable[int]) -> tuple[float, int]:
    """Seconds of CPU of ``pids`` and how many of them are renderers."""
    tick = os.sysconf("SC_CLK_TCK")
    total, renderers = 0.0, 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / tick
        renderers += b"--type=renderer" in cmdline
    return total, renderers


def measure(contexts: int, ours: bool) -> tuple[float, int]:
    from playwright.sync_api import sync_playwright
    from proc_tree import descendants

    plan = plan_launch(BrowserConfig(), playwright_build=False)
    options = plan.launch_options()
    if not ours:  # Playwright's switch as it ships: nothing ignored, no switch of ours
        options["ignore_default_args"] = []
        options["args"] = [a for a in plan.args if not a.startswith("--disable-features=")]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**options)
        for _ in range(contexts):
            page = browser.new_context().new_page()
            page.set_content(PAGE)
            page.click("input")
            page.screenshot()
        time.sleep(1.0)  # let the last context's processes finish starting
        seconds, renderers = _cpu(descendants(os.getpid()))
        browser.close()
    return seconds, renderers


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--contexts", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for ours, label in ((True, "taskcrew's switches"), (False, "Playwright's alone")):
        runs = [measure(args.contexts, ours) for _ in range(args.repeats)]
        seconds = statistics.median(r[0] for r in runs)
        print(
            f"{label:22} launch + {args.contexts} contexts: {seconds:5.2f} s CPU "
            f"(median of {args.repeats}), {runs[0][1]} renderers"
        )


if __name__ == "__main__":
    main()
