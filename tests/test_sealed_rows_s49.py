"""A row of the job database is acted on only when its request seal checks out (``seals.parked``:
``Jobs.parked_here``, ``Authority.parked_here``).

A writer of the job database without the approvals key could

1. move a pending approval's ``expires_at`` into the past: the next reader that listed approvals
   (the console, ``approvals list``, the worker) expired it and the store signed its job's ending
   ``rejected`` ("expired unanswered at 2000-01-01 …") with signed ``approval_expired``/``finished``
   lines; or insert a pending row past its deadline in any waiting job, with the same result;
2. insert a pending row under the key a run was about to ask: ``Jobs.park`` returned it, so the run
   parked on a row nobody can approve, its genuine request never reached an approver, and the signed
   audit log said the worker asked for a row it never parked.

Now such a row is shown with its problem and acted on by nobody: not expired, not parked on, not
waited on. A real deadline that passes still ends the job ``rejected``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from test_adversarial_approvals_4 import BOB, _request, env  # noqa: F401  (the fixture: jobs, authority)

from taskcrew.approvals.authority import Authority
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import Job
from taskcrew.jobs.worker import resume_decided

PAST = "2000-01-01T00:00:00Z"


@pytest.fixture
def running(env: tuple[Jobs, Authority]) -> Iterator[tuple[Jobs, Authority, Job]]:  # noqa: F811
    jobs, authority = env
    job = jobs.submit("Enter INV-1", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    yield jobs, authority, job


def _park(jobs: Jobs, job: Job, expires_in: timedelta | None = None) -> str:
    """The run asks for ``_request()`` and parks; the job is waiting. The approval's id."""
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id, expires_in=expires_in).approve(_request())
    jobs.mark(job.id, "waiting", only_if=("running",))
    return parked.value.approval_id


def _edit(jobs: Jobs, approval_id: str, **fields: Any) -> None:
    """A database writer (no key) changes fields of an approval's stored document."""
    with jobs.engine.begin() as conn:
        (doc,) = conn.execute(
            sa.text("select doc from taskcrew_approvals where id=:i"), {"i": approval_id}
        ).one()
        conn.execute(
            sa.text("update taskcrew_approvals set doc=:d where id=:i"),
            {"d": json.dumps({**json.loads(doc), **fields}), "i": approval_id},
        )


def _insert(jobs: Jobs, job_id: str, key: str, approval_id: str, **fields: Any) -> None:
    """A database writer (no key) adds a pending approval row to ``job_id``."""
    doc = {"id": approval_id, "job_id": job_id, "kind": "approval", "status": "pending", "key": key,
           "created_at": "2026-01-01T00:00:00Z", "question": "approve?", **fields}  # fmt: skip
    with jobs.engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into taskcrew_approvals (id, job_id, status, key, doc) values (:i, :j, 'pending', :k, :d)"
            ),
            {"i": approval_id, "j": job_id, "k": key, "d": json.dumps(doc)},
        )


def _untouched(jobs: Jobs, authority: Authority, job: Job, approval_id: str) -> None:
    """Nothing acted on ``approval_id``: it is still pending, listed with its problem, its job still
    waits, and no signed line says it expired or that the job ended."""
    listed = {v.approval.id: v for v in authority.pending()}  # an honest reader: runs ``expire_due``
    assert approval_id in listed
    assert (
        listed[approval_id].problem is not None
        and "not the one the worker parked" in listed[approval_id].problem
    )
    assert jobs.approval(approval_id).status == "pending"
    after = jobs.get(job.id)
    assert (after.status, after.outcome, after.record_trust) == ("waiting", None, "signed")
    kinds = [e.kind for e in jobs.events(job.id)]
    assert "approval_expired" not in kinds and "finished" not in kinds


# ---- 1: a deadline moved in the job database expires nothing -------------------------------------
@pytest.mark.parametrize("deadline", [None, timedelta(hours=1)], ids=["no-deadline", "deadline-ahead"])
def test_a_deadline_moved_into_the_past_expires_nothing(
    running: tuple[Jobs, Authority, Job], deadline: timedelta | None
) -> None:
    jobs, authority, job = running
    approval_id = _park(jobs, job, deadline)
    _edit(jobs, approval_id, expires_at=PAST)
    assert jobs.expire_due() == []
    _untouched(jobs, authority, job, approval_id)


def test_a_due_approval_whose_deadline_was_moved_is_not_expired_by_the_moved_one(
    running: tuple[Jobs, Authority, Job],
) -> None:
    """Its real deadline passed, but the row as stored is not the one parked (its deadline moved to
    2000): nothing signs an ending that quotes the forged date. A person may still reject it."""
    jobs, authority, job = running
    approval_id = _park(jobs, job, timedelta(seconds=-1))  # due at once, by the database's clock
    _edit(jobs, approval_id, expires_at=PAST)
    _untouched(jobs, authority, job, approval_id)
    assert not any("2000-01-01" in e.detail for e in jobs.events(job.id))
    result = authority.decide(approval_id, "reject", BOB)  # stopping is always allowed
    assert result.status == "decided", result.message
    assert jobs.approval(approval_id).status == "rejected"


def test_a_forged_row_past_its_deadline_ends_no_waiting_job(running: tuple[Jobs, Authority, Job]) -> None:
    jobs, authority, job = running
    genuine = _park(jobs, job)
    _insert(jobs, job.id, "other-key", "apr-forged00002", expires_at=PAST)
    _untouched(jobs, authority, job, "apr-forged00002")
    assert jobs.approval(genuine).status == "pending"


def test_a_real_deadline_still_ends_the_job_rejected(running: tuple[Jobs, Authority, Job]) -> None:
    jobs, authority, job = running
    approval_id = _park(jobs, job, timedelta(seconds=-1))  # due at once, by the database's clock
    assert approval_id not in {v.approval.id for v in authority.pending()}
    assert jobs.approval(approval_id).status == "expired"
    ended = jobs.get(job.id)
    assert (ended.status, ended.outcome, ended.record_trust) == ("finished", "rejected", "signed")
    assert f"the approval {approval_id} expired unanswered" in ended.reason
    events = [(e.kind, e.detail) for e in jobs.events(job.id)]
    assert ("approval_expired", approval_id) in events
    assert not any(d.startswith("[not signed]") for _, d in events)


# ---- 2: a run never parks on a row it did not park -----------------------------------------------
def test_park_does_not_reuse_a_forged_row_and_the_genuine_request_is_decided(
    running: tuple[Jobs, Authority, Job],
) -> None:
    jobs, authority, job = running
    key = JobHuman(jobs, job.id).key(_request())
    _insert(jobs, job.id, key, "apr-forged00001")
    approval_id = _park(jobs, job)
    assert approval_id != "apr-forged00001"
    assert jobs.parked_here(jobs.approval(approval_id)) and authority.parked_here(jobs.approval(approval_id))
    asked = [e.target for e in authority.audit.signed(("request",))]
    assert asked == [approval_id]  # the signed log names the row the worker parked, only that one
    listed = {v.approval.id: v.problem for v in authority.pending()}  # both shown, the forged one flagged
    assert listed[approval_id] is None and listed["apr-forged00001"] is not None

    result = authority.decide(approval_id, "approve", BOB)
    assert result.status == "decided", result.message
    assert jobs.get(job.id).status == "queued"  # the forged pending row holds nothing up
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    decision = JobHuman(jobs, job.id).approve(_request())  # the resumed run finds the genuine decision
    assert decision.outcome == "approve"
    assert jobs.approval("apr-forged00001").status == "pending"  # never acted on


def test_a_forged_row_past_its_deadline_is_neither_expired_nor_parked_on(
    running: tuple[Jobs, Authority, Job],
) -> None:
    jobs, authority, job = running
    key = JobHuman(jobs, job.id).key(_request())
    _insert(jobs, job.id, key, "apr-forged00003", expires_at=PAST)
    approval_id = _park(jobs, job)  # park lists the job's approvals first: ``expire_due`` runs
    assert approval_id != "apr-forged00003"
    assert "approval_expired" not in [e.kind for e in jobs.events(job.id)]
    _untouched(jobs, authority, job, "apr-forged00003")
    assert [e.target for e in authority.audit.signed(("request",))] == [approval_id]


def test_a_forged_pending_row_does_not_hold_up_a_decided_job(running: tuple[Jobs, Authority, Job]) -> None:
    """Added beside the approval the job waits for, a pending row nobody parked is not waited on:
    deciding the genuine one resumes the job."""
    jobs, authority, job = running
    approval_id = _park(jobs, job)
    _insert(jobs, job.id, "other-key", "apr-forged00004")
    result = authority.decide(approval_id, "approve", BOB)
    assert result.status == "decided" and "the job resumes" in result.message, result.message
    assert jobs.get(job.id).status == "queued"
    assert jobs.approval("apr-forged00004").status == "pending"


# ---- 3: the watch loop's recovery ends no job on a status set in the job database ----------------
def test_a_status_set_to_expired_in_the_database_ends_no_job(running: tuple[Jobs, Authority, Job]) -> None:
    """A genuine pending approval (its deadline an hour away) set to ``expired`` by a database writer:
    before, the watch loop's pass ended the job ``rejected`` with a signed reason quoting a deadline
    that had not come; now the job is not ended on it (it goes back on the queue to ask again)."""
    jobs, _, job = running
    approval_id = _park(jobs, job, timedelta(hours=1))
    with jobs.engine.begin() as conn:
        conn.execute(
            sa.text("update taskcrew_approvals set status='expired' where id=:i"), {"i": approval_id}
        )
    _edit(jobs, approval_id, status="expired")
    resume_decided(jobs, {}, 0)
    after = jobs.get(job.id)
    assert after.outcome is None and after.status != "finished", (after.status, after.reason)
    assert "finished" not in [e.kind for e in jobs.events(job.id)]


def test_a_pending_row_added_in_the_database_does_not_hold_up_the_watch_loop(
    running: tuple[Jobs, Authority, Job],
) -> None:
    """The genuine approval was decided (its decision written, then the process stopped): a forged
    pending row beside it does not keep the job waiting through the watch loop's pass."""
    jobs, authority, job = running
    genuine = _park(jobs, job)
    assert authority.decide(genuine, "approve", BOB).status == "decided"
    jobs.mark(job.id, "waiting", only_if=("queued",))  # as if it stopped before the job was resumed
    _insert(jobs, job.id, "other-key", "apr-forged00003")
    resume_decided(jobs, {}, 0)
    assert jobs.get(job.id).status == "queued"
