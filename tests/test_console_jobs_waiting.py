"""A job waiting for a decision, on the console's jobs list and job page: in words, with a link to
the approval ("open it in Approvals"), no CLI command and no backticks; the page's live updates keep
that link. The CLI's `jobs list` keeps its command. Real job store, real console, real Chromium."""

from __future__ import annotations

import pytest
from console_seed import parked_job
from fixtures_console import ConsoleEnv, follow, shot
from typer.testing import CliRunner

from taskcrew.cli import app

pytestmark = pytest.mark.browser
runner = CliRunner()


def test_a_waiting_job_says_where_to_decide_it_with_a_link(console_env: ConsoleEnv) -> None:
    jobs = console_env.jobs
    job, approval = parked_job(jobs, "ana")
    jobs.mark(job.id, "waiting", only_if=("waiting",), reason=f"waiting for approval {approval.id}")
    words = f"parked: waiting for approval {approval.id}; open it in Approvals"
    page = console_env.page_as("bob")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{console_env.url}/jobs")
    row = page.locator("#jobs tr", has_text=job.id)
    assert row.locator(".note").inner_text() == words
    assert "`" not in row.inner_text() and "taskcrew approvals" not in row.inner_text()
    link = row.locator(".note").get_by_role("link", name="Approvals")
    assert link.get_attribute("href") == f"/approvals/{approval.id}"
    shot(page, "jobs-waiting-1366")

    page.goto(f"{console_env.url}/jobs/{job.id}")
    note = page.locator("#job-note")
    assert note.inner_text() == words
    page.wait_for_timeout(1500)  # the live updates have polled: the page's note and its link stand
    assert note.inner_text() == words
    shot(page, "job-waiting-1366")
    follow(page, note.get_by_role("link", name="Approvals"))
    assert page.url.endswith(f"/approvals/{approval.id}")

    listed = runner.invoke(app, ["jobs", "list", "--db", console_env.jobs_url])
    assert listed.exit_code == 0, listed.output
    assert f"parked: waiting for approval {approval.id}; `taskcrew approvals list` shows it" in " ".join(
        listed.output.split()
    )
