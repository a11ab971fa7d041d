"""End to end: a real worker process (DBOS, scripted models, real Chromium) parks the headline run
on its approval; a person approves it in the console in real Chromium; the run resumes and the bill
appears in the real ERP. A second job is rejected from the page and ends ``rejected``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import ConsoleEnv, flash, follow, shot

from taskcrew.approvals.signing import approvals_dir
from taskcrew.eval.models import load_cases
from taskcrew.jobs import Job, JobOptions
from taskcrew.mock_erp import ErpServer, fetch_state

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SCRIPTED = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")


def _wait(console_env: ConsoleEnv, job_id: str, statuses: tuple[str, ...], timeout: float = 150) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = console_env.jobs.get(job_id)
        if job.status in statuses:
            return job
        time.sleep(0.3)
    raise AssertionError(
        f"job {job_id} stayed {console_env.jobs.get(job_id).status}: {console_env.jobs.get(job_id).reason}"
    )


@pytest.mark.timeout(360)
def test_approve_in_the_console_resumes_the_parked_run_and_reject_ends_it(
    console_env: ConsoleEnv, erp: ErpServer, eval_knowledge_seed: Path, tmp_path: Path, console_chromium: Any
) -> None:
    cases = {c.id: c for c in load_cases()}
    systems = {erp.url.split("//")[1]: "Acme Payables"}  # as the worker's workplace names it
    console_env.settings = console_env.settings.model_copy(update={"systems": systems})
    console_env.restart()
    home = tmp_path / "worker-home"
    shutil.copytree(eval_knowledge_seed, home / "knowledge")
    headline = console_env.jobs.submit(cases["northwind-headline"].task, submitted_by="ana", options=SCRIPTED)
    vandelay = console_env.jobs.submit(cases["reject-approval"].task, submitted_by="ana", options=SCRIPTED)
    worker_env = {**os.environ, "TASKCREW_HOME": str(home), "ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}
    worker_env["TASKCREW_APPROVALS_DIR"] = str(approvals_dir())  # the console's and the worker's one key
    command = [
        sys.executable,
        "-m",
        "taskcrew.cli",
        "worker",
        "--db",
        console_env.jobs_url,
        "--erp-url",
        erp.url,
    ]
    command += ["--intranet-url", "", "--no-chaos", "--runs-dir", str(console_env.runs), "--concurrency", "1"]
    command += ["--stop-with-parent"]  # a test process killed takes it along
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(
        command, env=worker_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        for job in (headline, vandelay):
            got = _wait(console_env, job.id, ("waiting", "failed", "finished"))
            assert got.status == "waiting", got.reason
        assert not [b for b in fetch_state(erp.url).bills if b.invoice_number == "INV-2057"]
        bob = console_env.page_as("bob")
        [approval] = console_env.jobs.approvals("pending", job_id=headline.id)
        bob.goto(f"{console_env.url}/approvals/{approval.id}")
        fields = bob.locator("#fields").inner_text()
        assert "INV-2057" in fields and "1284.50" in fields
        shot(bob, "approval-real-run")
        # the real worker's gate read the ERP's vendor list when it asked: Northwind is known there
        assert approval.request is not None and "Northwind Traders" in (approval.request.known_vendors or [])
        assert "new vendor" not in bob.locator("#risk-flags").inner_text()
        assert "in Acme Payables" in bob.locator("#action").inner_text()
        amount_row = bob.locator("#fields tr", has_text="amount").inner_text()
        assert "Northwind Traders.eml" in amount_row  # the run's provenance, per field
        follow(bob, bob.get_by_role("button", name="Approve"))
        assert "approved" in flash(bob)
        [other] = console_env.jobs.approvals("pending", job_id=vandelay.id)
        bob.goto(f"{console_env.url}/approvals/{other.id}")
        bob.get_by_label("Message or reason").fill("not this one")
        follow(bob, bob.get_by_role("button", name="Reject"))
        done = _wait(console_env, headline.id, ("finished", "failed"))
        assert (done.status, done.outcome) == ("finished", "done"), done.reason
        bills = [b for b in fetch_state(erp.url).bills if b.invoice_number == "INV-2057"]
        assert len(bills) == 1 and bills[0].amount == "1284.50"
        ended = _wait(console_env, vandelay.id, ("finished", "failed"))
        assert (ended.status, ended.outcome) == ("finished", "rejected"), ended.reason
        assert not [b for b in fetch_state(erp.url).bills if b.invoice_number == "VI-3390"]
        bob.goto(f"{console_env.url}/jobs/{headline.id}")
        assert "finished: done" in bob.locator("#job-status").inner_text()
        assert "verified" in bob.locator("#run-timeline").inner_text()
    finally:
        worker.terminate()
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
        log.close()
        print((tmp_path / "worker.log").read_text()[-3000:])
