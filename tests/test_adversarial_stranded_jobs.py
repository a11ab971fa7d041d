"""Attack: a Ctrl-C (SIGINT) lands while a command puts a job's new leg on the queue. `taskcrew
approvals approve`, `taskcrew jobs retry` and `taskcrew submit` write the job ``queued`` in the job
database first and enqueue its DBOS workflow (``<job>.<leg>``) right after; stopped in between, the
job was left queued on a leg with no workflow: no worker ever ran it, `jobs list` said it waited for
a free worker, `jobs retry` refused it (it is queued) and only cancel-then-retry got it out, which
voids the approval the person gave.

- the workers' watch loop puts such a leg on the queue once it has been without a workflow for a
  short grace (``worker.enqueue_stranded``), and says so in its log;
- a leg the signed audit log ends is not put back: a retry of a cancelled job stopped half-way (its
  ``retry`` entry never written) ends cancelled, as the log says, and can be retried again;
- a foreground run's own leg 0 (``taskcrew run``) is never handed to a worker;
- `submit` and `jobs retry` make their queue client before they write (``Enqueuer.prepare``).

Real CLI processes and real SIGINT, real worker processes (DBOS on SQLite, Chromium, the demo ERP
over HTTP), the real signed audit log; only the models are scripted."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures_foreground import BOB
from fixtures_jobs import SCRIPTED, Workers

from taskcrew.approvals.authority import Authority
from taskcrew.jobs import JobOptions
from taskcrew.mock_erp import ChaosConfig, ErpServer, fetch_state

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

REPORT = "List the unpaid bills."
PAY = "Mark the bill SL-1190 as paid on 2026-10-02"  # BILL-0004: an approval to pay it
PICKED_UP_S = 90  # a worker's start-up, then the grace (5 s) and a watch pass, on a loaded machine


@pytest.fixture
def fleet(isolated_home: Path, tmp_path: Path, erp_factory: Callable[..., ErpServer]) -> Iterator[Workers]:
    """Workers whose CLI processes share this test's own home (its approvals key and audit log)."""
    w = Workers(tmp_path, erp_factory(ChaosConfig.off()))
    yield w
    for proc in w.procs:
        if proc.poll() is None:
            w.kill(proc, signal.SIGKILL)
    w.jobs.close()


def _workflows(workers: Workers, job_id: str) -> dict[str, str]:
    with sqlite3.connect(workers.url.removeprefix("sqlite:///")) as db:
        try:
            rows = db.execute(
                "select workflow_uuid, status from workflow_status where workflow_uuid like ?",
                (f"{job_id}.%",),
            ).fetchall()
        except sqlite3.OperationalError:  # no worker and no client made DBOS's tables yet
            return {}
    return dict(rows)


def _cli(workers: Workers, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", *argv],
        env=workers.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _ctrl_c_when(workers: Workers, argv: list[str], ready: Callable[[], bool]) -> str:
    """Run `taskcrew ARGV` and press Ctrl-C (SIGINT) as soon as ``ready()`` (polled every 5 ms): its
    exit code and everything it printed (a Ctrl-C landing as the interpreter shuts down prints
    Python's own traceback after the command's output, so the output is kept whole)."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "taskcrew.cli", *argv],
        env=workers.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not ready() and time.monotonic() < deadline and cli.poll() is None:
        time.sleep(0.005)
    cli.send_signal(signal.SIGINT)
    out = cli.communicate(timeout=60)[0].decode(errors="replace")
    return f"exit {cli.returncode}: {out}"


def _picked_up(workers: Workers, job_id: str, leg: int) -> None:
    """A worker takes ``job_id`` up on ``leg``: its workflow exists and the job left ``queued``."""
    workers.wait_for(
        f"a worker to take job {job_id} up on leg {leg}",
        lambda: (
            f"{job_id}.{leg}" in _workflows(workers, job_id) and workers.jobs.get(job_id).status != "queued"
        ),
        PICKED_UP_S,
    )


@pytest.mark.timeout(480)  # a run to the approval, then the resumed run (each 150 s at most)
def test_an_approve_stopped_while_it_enqueues_still_resumes_the_job(fleet: Workers) -> None:
    """The run parks on paying BILL-0004; the person approves and presses Ctrl-C as the job turns
    ``queued`` (approve makes its queue client only then: the stop lands between the two writes).
    A worker resumes it on the person's decision: paid once, the approval still approved."""
    jobs = fleet.jobs
    job = jobs.submit(PAY, submitted_by="ana", options=JobOptions(**SCRIPTED))
    fleet.start("worker-a")
    fleet.wait_for("the job to park", fleet.job_in(job, "waiting", "finished", "failed"), 150)
    [approval] = jobs.approvals("pending", job_id=job.id)
    said = _ctrl_c_when(
        fleet, ["approvals", "approve", approval.id], lambda: jobs.get(job.id).status == "queued"
    )
    stranded = f"{job.id}.1" not in _workflows(fleet, job.id)
    assert jobs.approval(approval.id).status == "approved", said  # the person's decision stands
    # who approved is in the signed audit log (written before the job goes back on the queue; a
    # Ctrl-C waits for both): before, it was written last and a Ctrl-C left the job resumed without it
    from taskcrew.approvals.authority import Authority

    signed = [e for e in Authority(jobs).audit.signed("approve") if e.target == approval.id]
    assert len(signed) == 1, said
    assert "Nothing waits for approval." in _cli(fleet, "approvals", "list").stdout  # true: it was decided
    fleet.wait_for("the job to end", fleet.job_in(job, "finished", "failed"), 150)
    done = jobs.get(job.id)
    assert (done.status, done.outcome, jobs.leg(job.id)) == ("finished", "done", 1), done.reason
    assert [b.status for b in fetch_state(fleet.erp.url).bills if b.id == "BILL-0004"] == ["paid"]
    assert jobs.approval(approval.id).status == "approved"  # not voided to get the job out
    if stranded:  # the usual case: the Ctrl-C landed between the two writes
        assert "never reached the workers' queue" in fleet.log.read_text()


def test_a_retry_stopped_while_it_enqueues_still_runs_the_job(fleet: Workers) -> None:
    jobs = fleet.jobs
    job = jobs.submit(
        REPORT, submitted_by="ana", options=JobOptions(read_only=True, **SCRIPTED), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", beat=True, attempts=1)
    jobs.mark(job.id, "failed", only_if=("running",), leg=0, reason="the ERP did not answer")
    said = _ctrl_c_when(fleet, ["jobs", "retry", job.id], lambda: jobs.get(job.id).status == "queued")
    assert (jobs.get(job.id).status, jobs.leg(job.id)) == ("queued", 1), said
    fleet.start("worker-a")
    _picked_up(fleet, job.id, 1)


def test_a_submit_stopped_while_it_enqueues_still_runs_the_job(fleet: Workers) -> None:
    """No id was printed, yet the job is in the job database: it runs, as `jobs list` says it will."""
    jobs = fleet.jobs
    argv = ["submit", REPORT, "--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    said = _ctrl_c_when(fleet, argv, lambda: bool(jobs.list()))
    [job] = jobs.list()
    assert job.status == "queued", said
    assert job.id in said, said  # a Ctrl-C waits until the job's id is said: before, none was
    fleet.start("worker-a")
    _picked_up(fleet, job.id, 0)


def test_a_retry_of_a_cancelled_job_stopped_half_way_ends_cancelled_not_resurrected(fleet: Workers) -> None:
    """A Ctrl-C as `jobs retry` of a cancelled job enqueues (raised where SIGINT raises it): the job
    database says queued on leg 1, but the signed log's ``retry`` (which lets the legs after the
    cancel act again) was never written. No worker runs leg 1; the job ends cancelled, as the log
    says, and a retry then works. A foreground run's leg 0, queued with no workflow as `taskcrew run`
    leaves it for an instant, is not handed to a worker; an ordinary stranded job is."""
    jobs = fleet.jobs
    authority = Authority(jobs)
    options = JobOptions(read_only=True, **SCRIPTED)
    cancelled = jobs.submit(REPORT, submitted_by="bob", options=options, enqueue=False)
    authority.act_on_job(cancelled.id, "cancel", BOB)
    enqueue = jobs.on_enqueue

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    jobs.on_enqueue = ctrl_c
    try:
        with pytest.raises(KeyboardInterrupt):
            authority.act_on_job(cancelled.id, "retry", BOB)
        with pytest.raises(KeyboardInterrupt):  # an ordinary submit, stopped as it enqueued too
            jobs.submit(REPORT, submitted_by="ana", options=options)
    finally:
        jobs.on_enqueue = enqueue
    [plain] = [job for job in jobs.list() if job.submitted_by == "ana"]
    foreground = jobs.submit(
        REPORT, submitted_by="bob", options=options.model_copy(update={"foreground": True}), enqueue=False
    )
    assert (jobs.get(cancelled.id).status, jobs.leg(cancelled.id)) == ("queued", 1)
    assert jobs.get(plain.id).status == "queued"

    fleet.start("worker-a")
    _picked_up(fleet, plain.id, 0)
    fleet.wait_for(
        "the half-retried job to end cancelled",
        lambda: jobs.get(cancelled.id).status == "cancelled",
        PICKED_UP_S,
    )
    assert f"{cancelled.id}.1" not in _workflows(fleet, cancelled.id)  # leg 1 never ran
    assert "signed audit log" in jobs.get(cancelled.id).reason
    fleet.wait_for(
        "the stranded job to end", lambda: jobs.get(plain.id).status in ("finished", "failed"), 150
    )
    assert (jobs.get(foreground.id).status, _workflows(fleet, foreground.id)) == ("queued", {})

    again = _cli(fleet, "jobs", "retry", cancelled.id)
    assert again.returncode == 0, again.stderr
    _picked_up(fleet, cancelled.id, jobs.leg(cancelled.id))


def test_a_job_left_waiting_with_its_approval_decided_or_expired_is_moved_on(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision is written, then its job resumed; an expired approval is marked, then its job ended.
    A process killed in between left a job `waiting` with nothing pending, which nothing moved: the
    watch loop resumes the first and ends the second rejected, as the stopped process would have; the
    first's decision, which the signed audit log lacks, is signed into it first, naming who decided."""
    from datetime import datetime, timedelta

    from taskcrew.approvals.authority import Authority
    from taskcrew.jobs import Jobs
    from taskcrew.jobs.human import JobHuman, Parked
    from taskcrew.jobs.worker import resume_decided
    from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue

    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    request = ApprovalRequest(
        kind="form_submission", method="POST", url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name="invoice_number", value="INV-1"), FieldValue(name="amount", value="120.00")],
    )  # fmt: skip

    def waiting(expires_in: timedelta = timedelta(days=1)) -> tuple[str, str]:
        job = jobs.submit("Enter INV-1", submitted_by="ana", submitted_proof="token", enqueue=False)
        jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked) as parked:
            JobHuman(jobs, job.id, expires_in=expires_in).approve(request)
        jobs.mark(job.id, "waiting", only_if=("running",))
        return job.id, parked.value.approval_id

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    decided, approval = waiting()
    with pytest.raises(KeyboardInterrupt):  # killed after the decision's entry, before the resume
        jobs.decide(approval, ApprovalDecision.approve(by="bob"), decided_by="bob", recorded=killed)
    expired, old = waiting(timedelta(milliseconds=1))
    with monkeypatch.context() as patch:  # killed after the approval is marked expired, before the job ends
        patch.setattr(Jobs, "finish", killed)
        time.sleep(0.05)
        with pytest.raises(KeyboardInterrupt):
            jobs.expire_due()
    asked, _ = waiting()  # still waits for a person: left alone
    assert [jobs.get(j).status for j in (decided, expired, asked)] == ["waiting"] * 3
    assert (jobs.approval(approval).status, jobs.approval(old).status) == ("approved", "expired")

    seen: dict[str, datetime] = {}
    resume_decided(jobs, seen, grace_s=0)
    assert (jobs.get(decided).status, jobs.leg(decided)) == ("queued", 1)
    # the decision's entry, missing from the signed log, is signed into it naming who decided
    logged = [e for e in Authority(jobs).audit.signed(("approve",)) if e.target == approval]
    assert [(e.who, e.payload["job_id"]) for e in logged] == [("bob", decided)]
    assert logged[0].payload["recorded_late"]
    resume_decided(jobs, seen, grace_s=0)  # once
    assert len([e for e in Authority(jobs).audit.signed(("approve",)) if e.target == approval]) == 1
    ended = jobs.get(expired)
    assert (ended.status, ended.outcome) == ("finished", "rejected") and "expired" in ended.reason, ended
    assert jobs.get(asked).status == "waiting"
    jobs.close()
