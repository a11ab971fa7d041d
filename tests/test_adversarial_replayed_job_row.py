"""Attack: a job row set back to an earlier signed version (someone with write access to the job database,
not the signing key, replaying the row as it was while a leg ran) gives that leg its job back by the
database alone: it reads "running, this worker, this leg", signed. A cancel or a takeover is also
recorded, signed, in the audit log (``Authority.leg_over``), and the leg's last check before a send
reads it: the leg sends nothing, whatever the row says. Real SQLite job store, real audit log and
the worker's own watch loop; no model, no browser."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.worker import leg_refusal
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.store import J
from taskcrew.jobs.worker import WorkerSettings, watch
from taskcrew.tools.human import ApprovalRequest, FieldValue

BOB = Identity(name="bob", proof="console")


@pytest.mark.parametrize("lost", ["cancelled", "taken over"])
def test_a_leg_whose_job_row_was_set_back_to_running_still_sends_nothing(
    tmp_path: Path, isolated_home: Path, lost: str
) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    jobs = Jobs.open(url)
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", enqueue=False)
    target, fields = "http://127.0.0.1:9/bills/BILL-0004/pay", [("paid_on", "2026-10-02")]
    key = authority.key_of("POST", target, fields)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=target,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        key=key,
    )
    approval = jobs.park(job.id, kind="approval", key=key, request=request)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", 0)
    assert gate.send_check("POST", target, fields) is None
    with jobs.engine.begin() as conn:  # the row as it was while leg 0 ran: signed, all of it
        saved = dict(conn.execute(sa.select(J).where(J.c.id == job.id)).mappings().one())

    if lost == "cancelled":
        authority.act_on_job(job.id, "cancel", BOB)
    else:  # w1 went silent: another worker's watch loop takes the job over
        watch(jobs, WorkerSettings(url=url, worker_id="w2", stale_after_s=0))
    assert jobs.get(job.id).status in ("cancelled", "queued")
    assert gate.leg_refusal() is not None

    with jobs.engine.begin() as conn:  # the database writer replays the earlier row
        conn.execute(J.update().where(J.c.id == job.id).values(**saved))
    back = jobs.get(job.id)
    assert (back.status, back.worker, jobs.leg(job.id)) == ("running", "w1", 0)  # it checks out
    # by the database alone leg 0 holds it again; the one leg check reads the signed log as well
    assert leg_refusal(authority, job.id, "w1", 0) is not None

    gone = gate.leg_refusal()
    assert (
        gone is not None
        and ("cancelled by bob" if lost == "cancelled" else "taken over by worker w2") in gone
    )
    refusal = gate.send_check("POST", target, fields)
    assert refusal is not None and "Nothing was sent" in refusal, refusal
    sends = [e for e in authority.audit.signed("send") if e.payload.get("job_id") == job.id]
    assert len(sends) == 1  # only the one before the job was lost
    jobs.close()


def test_a_retried_or_resumed_leg_is_not_held_back_by_what_ended_the_legs_before_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    authority.act_on_job(job.id, "cancel", BOB)
    authority.act_on_job(job.id, "retry", BOB)
    leg = jobs.leg(job.id)
    jobs.mark(job.id, "running", only_if=("queued",), leg=leg, worker="w1")
    assert authority.leg_over(job.id, 0) is not None
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", leg)
    assert leg >= 1 and gate.leg_refusal() is None
    jobs.close()
