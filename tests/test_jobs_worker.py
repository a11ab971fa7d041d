"""Workers end to end: real worker processes (DBOS on SQLite), real Chromium and ERP (chaos on);
only the models are scripted. Waits poll the job store for states, never fixed sleeps."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from fixtures_jobs import HEADLINE, SCRIPTED, Workers

from taskcrew.eval.models import load_cases
from taskcrew.jobs import ApprovalDecision, JobOptions
from taskcrew.jobs.history import most_running_at_once

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]


# Two worker start-ups, a run to the approval and a resumed run: its own waits allow 150 s for each
# half, so the file's 300 s cap cut it short on a machine at load 20 (145 s alone at load 13).
@pytest.mark.timeout(480)
def test_a_parked_approval_resumes_on_another_worker_and_submits_the_approved_payload(
    workers: Workers,
) -> None:
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(**SCRIPTED))
    first = workers.start("worker-a")
    workers.wait_for("the job to park", workers.job_in(job, "waiting", "finished", "failed"))
    parked = workers.jobs.get(job.id)
    assert parked.status == "waiting"
    # The run folder is known while the job waits (set when it was created): the plan is in it.
    assert parked.run_dir and '"kind": "plan"' in (Path(parked.run_dir) / "trace.jsonl").read_text()
    workers.kill(first, signal.SIGTERM)  # no worker at all while it waits
    [approval] = workers.jobs.approvals("pending")
    assert approval.request is not None and approval.job_id == job.id
    sent = {f.name: f.value for f in approval.request.fields}
    assert (sent["invoice_number"], sent["amount"], sent["due_date"]) == ("INV-2057", "1284.50", "2026-10-12")
    assert workers.bills() == []  # nothing was sent before the approval
    where = {s.name: s.source for s in approval.sources}
    assert "Invoice from Northwind Traders.eml" in where["invoice_number"] and "step 1" in where["amount"]
    assert approval.screenshot and Path(approval.screenshot).read_bytes().startswith(b"\x89PNG")
    workers.jobs.decide(approval.id, ApprovalDecision.approve(), decided_by="bob")
    workers.start("worker-b")
    workers.wait_for("the job to end", workers.job_in(job, "finished", "failed"))
    done = workers.jobs.get(job.id)
    assert (done.status, done.outcome, done.worker) == ("finished", "done", "worker-b"), done.reason
    assert len(workers.bills()) == 1
    assert workers.jobs.approval(approval.id).decided_by == "bob"


def test_a_worker_killed_after_the_intent_was_recorded_is_taken_over_without_a_duplicate(
    workers: Workers,
) -> None:
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    first = workers.start("worker-a")
    workers.wait_for("the intent to be recorded", lambda: workers.jobs.intents(job.id))
    workers.kill(first)  # SIGKILL, worker and its Chromium
    assert workers.jobs.get(job.id).status == "running"
    workers.start("worker-b")  # another worker sees the stale heartbeat and takes the job over
    done = workers.end_as_a_person_would(job, timeout=150)
    assert (done.status, done.outcome) in {("finished", "done"), ("finished", "nothing_to_do")}, done.reason
    assert done.worker == "worker-b" and done.attempts >= 2
    assert len(workers.bills()) == 1


def test_a_job_killed_right_after_the_save_resumes_to_done_and_says_what_it_saved(workers: Workers) -> None:
    # issue 23: the resumed leg saw the bill already there; its outcome and answer must come from the
    # job's intent log (what was sent and what the ERP answered), not from what that leg happened to see
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    first = workers.start("worker-a")
    workers.wait_for("the bill to be saved", workers.bills, timeout=200)
    workers.kill(first)  # SIGKILL just after the save
    workers.start("worker-b")
    workers.wait_for("the job to end", workers.job_in(job, "finished", "failed"), timeout=200)
    done = workers.jobs.get(job.id)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
    assert done.answer.startswith("1 change(s) saved: POST ") and "/bills/new" in done.answer, done.answer
    assert len(workers.bills()) == 1


def test_the_erp_session_limit_holds_across_worker_processes(workers: Workers) -> None:
    """3 worker processes that could run 2 jobs each (6 at once), a limit of 2 ERP sessions: the most
    jobs ever running at the same moment is 2 (DBOS's global queue concurrency), and all finish."""
    report = next(c for c in load_cases() if c.id == "unpaid-before-date-report").task
    options = JobOptions(read_only=True, **SCRIPTED)
    ids = [workers.jobs.submit(report, submitted_by="ana", options=options).id for _ in range(5)]
    for wid in ("w1", "w2", "w3"):
        workers.start(wid, sessions=2, concurrency=2)
    workers.wait_for(
        "every job to end",
        lambda: all(workers.jobs.get(j).status in ("finished", "failed") for j in ids),
        timeout=280,
    )
    for jid in ids:
        job = workers.jobs.get(jid)
        assert (job.status, job.outcome) == ("finished", "done"), job.reason
    assert most_running_at_once(workers.jobs, ids) == 2
