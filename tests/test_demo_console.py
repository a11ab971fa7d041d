"""`taskcrew demo --console`: the job waits in the console's inbox until a person approves it there.
The real CLI as a subprocess (a real `taskcrew worker`, ERP, Chromium for the worker); the console
driven by a person's browser (real Chromium through Playwright): log in with the printed token,
open the approval the demo names, approve; the demo then ends verified."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAITING = re.compile(r"Waiting for you:\s*open (?P<url>http://\S+)/approvals/(?P<id>\S+) and decide")
TOKEN = re.compile(r"Console: (?P<url>http://\S+)\s+log in with the token: (?P<token>\S+)")


class Output:
    """The demo's stdout as it comes, read on a thread; ``wait_for`` waits on a condition, not a clock."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.text = ""
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._changed:
                self.text += line
                self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        with self._changed:
            found = self._changed.wait_for(lambda: pattern.search(self.text), timeout)
        assert found, f"not printed within {timeout:.0f} s: {pattern.pattern}\n{self.text[-3000:]}"
        return found

    def finish(self, timeout: float) -> str:
        self._thread.join(timeout)
        return self.text


@pytest.mark.timeout(600)
def test_demo_console_waits_in_the_inbox_until_approved_there(
    tmp_path: Path, eval_knowledge_seed: Path, console_chromium: Any
) -> None:
    seed = tmp_path / "home" / "demo" / "knowledge-seed"  # seeded once per home, as the demo does
    shutil.copytree(eval_knowledge_seed, seed)
    (seed / ".seeded").write_text("seeded\n")
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    env.pop("TASKCREW_MODEL", None)
    command = [sys.executable, "-m", "taskcrew.cli", "demo", "--console", "--no-chaos"]
    process = subprocess.Popen(
        [*command, "--runs-dir", str(tmp_path / "runs")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    output = Output(process)
    try:
        login = output.wait_for(TOKEN, 120)
        waiting = output.wait_for(WAITING, 300)
        assert waiting["url"] == login["url"]
        context = console_chromium.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{login['url']}/approvals")
        page.get_by_label("Token").fill(login["token"])
        page.get_by_role("button", name="Sign in").click()
        row = page.locator("#worklist tr", has_text=waiting["id"])
        assert "Northwind Traders" in row.inner_text() and "Acme Payables" in row.inner_text()
        assert process.poll() is None  # the demo waits for the person
        row.get_by_role("link", name=waiting["id"]).click()
        assert page.locator("#approval-status").inner_text() == "pending"
        assert "INV-2057" in page.locator("#key-values").inner_text()
        page.get_by_role("button", name="Approve").click()
        page.wait_for_url(re.compile(r".*/approvals$"))
        assert "approved" in page.locator(".flash").first.inner_text()
        context.close()
        assert process.wait(300) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    out = output.finish(30)
    assert "scripted stand-in models — not AI" in out
    assert "done:" in out and "not AI" in out.split("done:")[-1]
    [report] = (tmp_path / "runs").glob("*/report.md")
    text = report.read_text(encoding="utf-8")
    assert "INV-2057" in text
    approvals = text.split("## Approvals", 1)[1].split("\n## ", 1)[0]  # who approved, in the console
    assert "→ **approved** by operator (logged in to the console)" in approvals, approvals
