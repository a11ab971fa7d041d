"""`taskcrew demo --console`: the job waits in the console's inbox until a person approves it there.
The real CLI as a subprocess (a real `taskcrew worker`, ERP, Chromium for the worker) at a terminal
(its stdin a pseudo-terminal); the console driven by a person's browser (real Chromium through
Playwright): log in with the printed token, open the approval the demo names, approve; the job ends
verified, and the console stays open for the person to read the outcome and the report until
Ctrl-C, which ends the demo with the job's exit code."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_demo import DemoUser, Output, demo_user, stop  # noqa: F401  (the fixture: a user's home, folders, temp)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAITING = re.compile(r"Waiting for you:\s*open (?P<url>http://\S+)/approvals/(?P<id>\S+) and decide")
TOKEN = re.compile(r"Console: (?P<url>http://\S+)\s+log in with the token: (?P<token>\S+)")
STAYS = re.compile(
    r"Finished: (?P<outcome>\S+)\. The job in the console: (?P<url>http://\S+/jobs/(?P<id>\S+)) — "
    r"the console stays open until you press Ctrl-C\."
)


@contextlib.contextmanager
def demo_at_a_terminal(user: DemoUser, runs: Path, *flags: str) -> Iterator[tuple[Any, Output]]:
    """The real `taskcrew demo --console [flags]` with a pseudo-terminal as its stdin (a person at a
    terminal: its console stays open after the job, until Ctrl-C); stopped and the terminal closed
    after the block."""
    command = [sys.executable, "-m", "taskcrew.cli", "demo", "--console", "--no-chaos", *flags]
    terminal, stdin = pty.openpty()
    process = subprocess.Popen(
        [*command, "--runs-dir", str(runs)],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=user.env,
    )
    os.close(stdin)
    try:
        yield process, Output(process)
    finally:
        stop(process)
        os.close(terminal)


@pytest.mark.timeout(600)
def test_demo_console_waits_in_the_inbox_until_approved_there(
    tmp_path: Path,
    demo_user: DemoUser,  # noqa: F811
    console_chromium: Any,
) -> None:
    with demo_at_a_terminal(demo_user, tmp_path / "runs") as (process, output):
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
        # the job ends; the demo says so in one line and the console stays open: its job page shows
        # the outcome and leads to the run and its report
        stays = output.wait_for(STAYS, 300)
        assert stays["outcome"] == "done" and stays["url"].startswith(login["url"] + "/jobs/")
        page.goto(stays["url"])
        assert page.locator("#job-status").inner_text() == "finished: done"
        page.locator("a[href^='/runs/']").first.click()
        assert "INV-2057" in page.locator("section.report").inner_text()
        context.close()
        assert process.poll() is None  # until Ctrl-C
        process.send_signal(signal.SIGINT)
        assert process.wait(120) == 0  # ended by the person, not interrupted: the job's exit code
    out = output.finish(30)
    assert "scripted stand-in models — not AI" in out
    assert "done:" in out and "not AI" in out.split("done:")[-1]
    assert out.index("done:") < out.index("Finished: done.")  # the outcome, then where it is shown
    assert "Console stopped." in out.split("Finished: done.")[-1]
    [report] = (tmp_path / "runs").glob("*/report.md")
    text = report.read_text(encoding="utf-8")
    assert "INV-2057" in text
    approvals = text.split("## Approvals", 1)[1].split("\n## ", 1)[0]  # who approved, in the console
    assert "→ **approved** by operator (logged in to the console)" in approvals, approvals
    demo_user.assert_nothing_left()


@pytest.mark.timeout(600)
def test_demo_console_auto_approve_is_said_as_auto_approve_not_a_person(
    tmp_path: Path,
    demo_user: DemoUser,  # noqa: F811
) -> None:
    """`--console --auto-approve` from a script: the worker approves under the job's --auto-approve
    (signed so, nobody asked) and the report says so. Before, the demo logged in to its console with
    the start-up token and clicked approve, and the report said "approved by operator (logged in to
    the console)": a person's approval nobody gave."""
    command = [sys.executable, "-m", "taskcrew.cli", "demo", "--console", "--auto-approve", "--no-chaos"]
    done = subprocess.run(
        [*command, "--runs-dir", str(tmp_path / "runs")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=demo_user.env,
        timeout=540,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Waiting for you" not in done.stdout
    [report] = (tmp_path / "runs").glob("*/report.md")
    approvals = report.read_text(encoding="utf-8").split("## Approvals", 1)[1].split("\n## ", 1)[0]
    assert "--auto-approve (submitted by demo; nobody was asked)" in approvals, approvals
    assert "logged in to the console" not in approvals
    demo_user.assert_nothing_left()
