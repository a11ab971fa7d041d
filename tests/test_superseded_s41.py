"""A cancel of an earlier leg does not make a later leg's honest ending read ``superseded``.

bob cancelled a job on leg 0 and retried it; its leg 1 failed honestly (the ERP was down). The row
read ``superseded`` ("the job database was set back"): ``SignedLog.superseding`` took the leg-0
cancel as a later end of any row that did not finish. A cancel counts against a row only when it is
of the row's leg or a later one: a cancel of an earlier leg was undone by the retry that made it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_foreground import BOB

from taskcrew.approvals.authority import Authority
from taskcrew.jobs import JobOptions, Jobs


@pytest.fixture
def jobs(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Jobs:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    return Jobs.open()


def _cancelled_and_retried(jobs: Jobs) -> tuple[str, int]:
    authority = Authority(jobs)
    job = jobs.submit(
        "Pay BILL-0002", submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    authority.act_on_job(job.id, "cancel", BOB)  # bob stops it on leg 0
    authority.act_on_job(job.id, "retry", BOB)  # ... and runs it again
    leg = jobs.leg(job.id)
    jobs.mark(job.id, "running", only_if=("queued",), leg=leg, worker="w2")
    return job.id, leg


def test_a_retried_job_that_failed_on_its_new_leg_stays_signed_and_can_be_retried(jobs: Jobs) -> None:
    job_id, leg = _cancelled_and_retried(jobs)
    assert leg >= 1
    jobs.mark(job_id, "failed", only_if=("running",), leg=leg, reason="the ERP was down")
    failed = jobs.get(job_id)
    assert (failed.status, failed.record_trust) == ("failed", "signed"), failed.reason  # before: superseded
    assert failed.reason == "the ERP was down"
    Authority(jobs).act_on_job(job_id, "retry", BOB)  # the ERP is back
    assert jobs.get(job_id).status == "queued"


def test_a_failed_row_set_back_over_a_cancel_of_its_own_leg_still_reads_superseded(jobs: Jobs) -> None:
    """The real rollback the rule is for: the new leg failed, bob cancelled it (on that leg), and the
    job database was set back to the failed row."""
    job_id, leg = _cancelled_and_retried(jobs)
    jobs.mark(job_id, "failed", only_if=("running",), leg=leg, reason="the ERP was down")
    failed_doc = _doc(jobs, job_id)
    Authority(jobs).act_on_job(job_id, "cancel", BOB)
    assert jobs.get(job_id).status == "cancelled"
    _set_doc(jobs, job_id, failed_doc)  # someone with write access to the job database
    rolled = jobs.get(job_id)
    assert (rolled.status, rolled.record_trust) == ("failed", "superseded"), rolled.reason
    assert "The job database was set back" in rolled.reason, rolled.reason


def _doc(jobs: Jobs, job_id: str) -> tuple[str, str, int]:
    import sqlalchemy as sa

    with jobs.engine.begin() as conn:
        row = conn.execute(
            sa.text("SELECT doc, status, leg FROM taskcrew_jobs WHERE id = :id"), {"id": job_id}
        ).one()
    return str(row[0]), str(row[1]), int(row[2])


def _set_doc(jobs: Jobs, job_id: str, doc: tuple[str, str, int]) -> None:
    import sqlalchemy as sa

    with jobs.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE taskcrew_jobs SET doc = :doc, status = :status, leg = :leg WHERE id = :id"),
            {"doc": doc[0], "status": doc[1], "leg": doc[2], "id": job_id},
        )
