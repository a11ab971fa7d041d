"""What a cancel, a retry or a rejection takes back is read from the signed audit log, not the job database.

A red team (auth5) had a payment sent after the cancel or the rejection that should have stopped it,
by someone who can write the job database but not the signing key:

- a cancel's ``kept`` list (answers already handed to the run, spared from its take-back) was read
  from the job database's unsigned ``used`` flag: set on a decided approval, the cancel took it back
  no more;
- a retry's void list was read from the job database's rows: the approval's row moved out of the job
  for the moment of the retry, the retry voided nothing, and the started-over run paid on it;
- a rejection did not stand against a row set back to its earlier signed version (pending, a first
  approval on it) plus a retry: the run parked on that row again, the first approval given before
  the rejection still counted, and one more person completed it while the signed ``reject`` stayed
  in the log unread.

Now (``Authority``): what a cancel spares is what the log shows used (``answer_handed``, ``send``), a
retry that starts the run over takes back every decision and first approval signed before it by the
log's order, and a signed rejection is final whatever the row says (``recorded_refusal``: decided,
obeyed and parked on by no surface). Controls keep the honest flows as they were. The job store is
real SQLite, the audit log real and signed; the people act through the authority, as every surface does.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from test_adversarial_races import BILL, _request, _sent, env  # noqa: F401  (env: the store and users)
from test_adversarial_races_3 import _Office, office  # noqa: F401  (office: ana, bob, carol, dave)

from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import Approval
from taskcrew.jobs.runner import StoreCheckpoints
from taskcrew.jobs.store import A, J, Jobs
from taskcrew.tools.human import ApprovalDecision

SMALL, LARGE = "450.00", "8000.00"  # one approver; two people


@pytest.fixture
def desk(office: _Office) -> _Office:  # noqa: F811  (test_adversarial_races_3's office: ana, bob, carol, dave)
    return office


def _parked(desk: _Office, amount: str) -> tuple[str, str]:
    """ana's job, its leg parked on the bill of ``amount``; the job waits."""
    job_id = desk.submit()
    with pytest.raises(Parked) as parked:
        JobHuman(desk.jobs, job_id, authority=desk.authority()).approve(_request(amount))
    desk.jobs.mark(job_id, "waiting", only_if=("running",))
    return job_id, parked.value.approval_id


def _row(desk: _Office, approval_id: str) -> str:
    """The approval's document as the job database holds it now (what a writer can keep and put back)."""
    with desk.jobs.engine.begin() as conn:
        return str(conn.execute(sa.select(A.c.doc).where(A.c.id == approval_id)).scalar_one())


def _write(desk: _Office, approval_id: str, **columns: Any) -> None:
    """A job-database writer: the approval row's columns (``doc``, ``status``, ``job_id``), nothing signed."""
    with desk.jobs.engine.begin() as conn:
        conn.execute(A.update().where(A.c.id == approval_id).values(**columns))


def _mark_used(desk: _Office, approval_id: str) -> None:
    approval = Approval.model_validate_json(_row(desk, approval_id))
    approval.used = True  # in no seal
    _write(desk, approval_id, doc=approval.model_dump_json())


def _retried_with_the_row_away(desk: _Office, job_id: str, approval_id: str) -> None:
    """ana retries the job while a writer has the approval's row in another job; then it is put back."""
    _write(desk, approval_id, job_id="elsewhere")
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    _write(desk, approval_id, job_id=job_id)


def _asks_again(leg: JobHuman, amount: str, not_on: str) -> str:
    """The leg obeys nothing: the payment does not leave, and it parks for a person on a new approval."""
    assert leg.gate.send_check("POST", BILL, _sent(amount)) is not None
    with pytest.raises(Parked) as parked:
        leg.approve(_request(amount))
    assert parked.value.approval_id != not_on
    return parked.value.approval_id


def _two_approve(desk: _Office, approval_id: str) -> None:
    authority = desk.authority()
    assert authority.decide(approval_id, "approve", desk.who("bob")).status == "first_approval"
    assert authority.decide(approval_id, "approve", desk.who("carol", "console")).status == "decided"
    assert desk.jobs.approval(approval_id).decided_by == "bob+carol"


# --- finding 1: what a cancel spares, what a retry voids -------------------------------------------


def test_a_used_flag_written_in_the_job_database_spares_nothing_from_a_cancel(desk: _Office) -> None:
    """bob approves, a writer marks the approval used, bob cancels (he saw it was a fraud), and ana
    retries with the row out of the job: the cancel took it back all the same, and the new run asks."""
    job_id, aid = _parked(desk, SMALL)
    assert desk.authority().decide(aid, "approve", desk.who("bob")).status == "decided"
    _mark_used(desk, aid)
    desk.authority().act_on_job(job_id, "cancel", desk.who("bob"))
    authority = desk.authority()
    cancel = authority.standing_cancel(job_id)
    assert cancel is not None and cancel.payload["kept"] == [] and cancel.payload["void"] == [aid]
    assert aid in authority.void_decisions(job_id)  # before any retry: the cancel's own take-back
    _retried_with_the_row_away(desk, job_id, aid)
    _asks_again(desk.run_leg(job_id, "w2"), SMALL, aid)


def test_a_cancel_spares_only_what_the_signed_log_shows_used(desk: _Office) -> None:
    """A cancel entry that names an approval kept (as one signed from the job database's ``used``
    flag did) spares it only where the log shows it handed or sent before the cancel."""
    job_id, aid = _parked(desk, SMALL)
    authority = desk.authority()
    assert authority.decide(aid, "approve", desk.who("bob")).status == "decided"
    authority.audit.append("bob", "cancel", job_id, {"void": [], "kept": [aid], "leg": desk.jobs.leg(job_id)})
    assert aid in authority.void_decisions(job_id)


def test_a_row_moved_out_of_the_job_for_the_retry_keeps_nothing_of_the_finished_run(
    desk: _Office,
) -> None:
    """bob and carol approve the 8,000.00 payment; the run ends without sending it; ana retries it
    (a new run: it asks again) while a writer has the row in another job: it is voided all the same."""
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.finish(job_id, "incomplete", "step budget", leg=desk.jobs.leg(job_id)) is not None
    _retried_with_the_row_away(desk, job_id, aid)
    authority = desk.authority()
    retrying = [e for e in authority.audit.signed("retrying") if e.target == job_id][-1]
    assert retrying.payload["void"] == [aid] and retrying.payload["takes_back"] == "all"
    assert aid in authority.void_decisions(job_id)
    _asks_again(desk.run_leg(job_id, "w2"), LARGE, aid)


# --- finding 2: a rejection stands -------------------------------------------------------------------


def _rejected_after_a_first_approval(desk: _Office) -> tuple[str, str, str]:
    """bob first-approves ana's 8,000.00 payment (the row kept by a writer then), dave rejects it,
    the resumed run gets the rejection and ends rejected. Returns the job, the approval, the kept row."""
    job_id, aid = _parked(desk, LARGE)
    authority = desk.authority()
    assert authority.decide(aid, "approve", desk.who("bob")).status == "first_approval"
    kept = _row(desk, aid)  # signed: pending, bob's first approval on it
    assert authority.decide(aid, "reject", desk.who("dave", "console"), "this is a fraud").status == "decided"
    leg = desk.run_leg(job_id, "w1b")
    assert leg.approve(_request()).outcome == "reject"
    assert desk.jobs.finish(job_id, "rejected", "rejected by dave", leg=desk.jobs.leg(job_id)) is not None
    return job_id, aid, kept


def test_a_rejection_stands_against_a_row_set_back_to_pending_and_a_retry(desk: _Office) -> None:
    job_id, aid, kept = _rejected_after_a_first_approval(desk)
    _write(desk, aid, doc=kept, status="pending")  # the writer sets the row back
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    leg = desk.run_leg(job_id, "w2")
    fresh = _asks_again(leg, LARGE, aid)  # the new run parks on an approval of its own, not the set-back row
    desk.jobs.mark(job_id, "waiting", only_if=("running",))

    authority = desk.authority()
    carol = authority.decide(aid, "approve", desk.who("carol", "console"))  # the set-back row
    assert carol.status == "refused" and "rejected by dave" in carol.message, carol.message
    assert desk.jobs.approval(aid).status == "pending"
    assert "rejected by dave" in (authority.view(desk.jobs.approval(aid)).problem or "")
    # bob's first approval is on the old row only: the new run's approval needs two people again
    assert authority.decide(fresh, "approve", desk.who("carol", "console")).status == "first_approval"
    assert leg.gate.send_check("POST", BILL, _sent()) is not None


def test_a_retry_takes_back_first_approvals_given_before_it(desk: _Office) -> None:
    """Without a rejection: bob first-approves, the run ends (still pending), ana retries; the new run
    parks on the same pending approval, and carol's approval is the first that counts, not the second."""
    job_id, aid = _parked(desk, LARGE)
    assert desk.authority().decide(aid, "approve", desk.who("bob")).status == "first_approval"
    assert desk.jobs.finish(job_id, "incomplete", "stopped", only_if=("waiting",)) is not None
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    leg = desk.run_leg(job_id, "w2")
    with pytest.raises(Parked) as again:
        leg.approve(_request())
    assert again.value.approval_id == aid  # pending, never decided: the new run asks on it
    assert desk.authority().view(desk.jobs.approval(aid)).first_approvers == []
    carol = desk.authority().decide(aid, "approve", desk.who("carol", "console"))
    assert carol.status == "first_approval", carol.message
    assert leg.gate.send_check("POST", BILL, _sent()) is not None


def test_the_worker_does_not_obey_an_approval_of_a_row_the_log_records_rejected(desk: _Office) -> None:
    """dave rejects; the row is set back to pending and decided approved by a path around the
    authority (the store's own ``decide``, as an older surface could): the worker consults the signed
    rejection, asks again, and sends nothing."""
    job_id, aid = _parked(desk, SMALL)
    kept = _row(desk, aid)
    assert desk.authority().decide(aid, "reject", desk.who("dave", "console")).status == "decided"
    _write(desk, aid, doc=kept, status="pending")
    desk.jobs.decide(aid, ApprovalDecision.approve(by="carol"), decided_by="carol")
    assert desk.jobs.approval(aid).status == "approved"
    leg = desk.run_leg(job_id, "w2")
    _asks_again(leg, SMALL, aid)
    overruled = [e for e in leg.authority.audit.signed("decision_overruled") if e.target == aid]
    assert overruled and "rejected by dave" in overruled[0].payload["reason"]


def test_a_set_back_row_is_kept_out_of_bulk_approval(desk: _Office) -> None:
    """Two identical small bills; one rejected, its row set back to pending: a bulk approval of both
    is refused whole (the set-back row cannot be trusted), and neither is approved."""
    _, first = _parked(desk, SMALL)
    _, second = _parked(desk, SMALL)
    kept = _row(desk, first)
    assert desk.authority().decide(first, "reject", desk.who("dave", "console")).status == "decided"
    _write(desk, first, doc=kept, status="pending")
    results = desk.authority().bulk_approve([first, second], desk.who("carol", "console"))
    assert [r.status for r in results] == ["refused"]
    # each item is judged by the verdict ``decide`` obeys (``approve_verdict``), said as ``decide`` says it
    assert f"{first} (Refused: this approval it was rejected by dave" in results[0].message
    assert second not in results[0].message  # the other one is fine
    assert desk.jobs.approval(first).status == "pending" and desk.jobs.approval(second).status == "pending"


# --- controls: the honest flows ----------------------------------------------------------------------


def test_control_an_answer_handed_to_the_run_before_a_cancel_is_kept(desk: _Office) -> None:
    """An answer spent by a saved checkpoint (signed ``answer_handed``) is what a cancel spares."""
    job_id = desk.submit()
    with pytest.raises(Parked) as parked:
        JobHuman(desk.jobs, job_id, authority=desk.authority()).ask("Which bank account?")
    desk.jobs.mark(job_id, "waiting", only_if=("running",))
    qid = parked.value.approval_id
    assert desk.authority().decide(qid, "answer", desk.who("bob"), "use DE99 0000").status == "decided"
    leg = desk.run_leg(job_id, "w2")
    assert leg.ask("Which bank account?") == "use DE99 0000"
    StoreCheckpoints(desk.jobs, job_id, "w2", gate=leg.gate).save("plan:2", {"stage": "plan:2", "state": {}})
    desk.authority().act_on_job(job_id, "cancel", desk.who("dave", "console"))
    authority = desk.authority()
    cancel = authority.standing_cancel(job_id)
    assert cancel is not None and cancel.payload["kept"] == [qid] and cancel.payload["void"] == []
    assert qid not in authority.void_decisions(job_id)


def test_control_an_approval_sent_before_a_cancel_is_kept_and_not_sent_again(desk: _Office) -> None:
    """What left before the cancel stays recorded as used (named kept, by its signed ``send``; before,
    a cancel listed it void with the rest), and the retried run knows it was sent."""
    job_id, aid = _parked(desk, SMALL)
    assert desk.authority().decide(aid, "approve", desk.who("bob")).status == "decided"
    leg = desk.run_leg(job_id, "w2")
    assert leg.approve(_request(SMALL)).approved
    assert leg.gate.send_check("POST", BILL, _sent(SMALL)) is None  # sent, signed as it left
    desk.authority().act_on_job(job_id, "cancel", desk.who("dave", "console"))
    authority = desk.authority()
    cancel = authority.standing_cancel(job_id)
    assert cancel is not None and cancel.payload["kept"] == [aid] and cancel.payload["void"] == []
    assert aid not in authority.void_decisions(job_id)
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    again = desk.run_leg(job_id, "w3")
    assert again.gate.sent_before("POST", BILL, _sent(SMALL)) is not None  # the intent log sends it not again


def _retried_asks_again_and_two_approve_it(desk: _Office, job_id: str, aid: str) -> None:
    """ana retries: the new run parks a fresh approval (not ``aid``), two people approve it, it is sent."""
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    leg = desk.run_leg(job_id, "w2")
    fresh = _asks_again(leg, LARGE, aid)
    desk.jobs.mark(job_id, "waiting", only_if=("running",))
    _two_approve(desk, fresh)
    leg = desk.run_leg(job_id, "w3")
    assert leg.approve(_request()).approved
    assert leg.gate.send_check("POST", BILL, _sent()) is None


def test_control_a_retry_of_a_finished_run_asks_again_and_two_people_approve_it(desk: _Office) -> None:
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.finish(job_id, "incomplete", "step budget", leg=desk.jobs.leg(job_id)) is not None
    _retried_asks_again_and_two_approve_it(desk, job_id, aid)


def test_control_a_rejected_run_retried_is_asked_again_and_approved_by_two(desk: _Office) -> None:
    job_id, aid, _ = _rejected_after_a_first_approval(desk)
    _retried_asks_again_and_two_approve_it(desk, job_id, aid)
    assert desk.jobs.approval(aid).status == "rejected"  # dave's rejection of the first run's stays


def test_control_two_people_approve_and_it_is_sent(desk: _Office) -> None:
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    leg = desk.run_leg(job_id, "w2")
    assert leg.approve(_request()).approved
    assert leg.gate.send_check("POST", BILL, _sent()) is None


# --- a job's row set back to an earlier signed version before a retry --------------------------------


def _job_row(desk: _Office, job_id: str) -> dict[str, Any]:
    """The job's row as the job database holds it now (its columns: what a writer can keep and put back)."""
    with desk.jobs.engine.begin() as conn:
        row = conn.execute(sa.select(J.c.status, J.c.leg, J.c.doc).where(J.c.id == job_id)).one()
    return dict(row._mapping)


def _put_job_row(desk: _Office, job_id: str, row: dict[str, Any]) -> None:
    with desk.jobs.engine.begin() as conn:
        conn.execute(J.update().where(J.c.id == job_id).values(**row))


def _approved_then_failed(desk: _Office) -> tuple[str, str, dict[str, Any]]:
    """bob and carol approve the 8,000.00 payment; the run fails (the ERP went down) before it sends
    it: the job's failed row, signed, is kept by a writer. ana retries (a failed run resumes with its
    decisions) and the new run ends without sending it (step budget): the job is finished."""
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.mark(job_id, "failed", only_if=("running",), reason="ERP down") is not None
    failed = _job_row(desk, job_id)
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    desk.run_leg(job_id, "w2")
    assert desk.jobs.finish(job_id, "incomplete", "step budget", leg=desk.jobs.leg(job_id)) is not None
    return job_id, aid, failed


def test_a_finished_job_set_back_to_its_earlier_failed_row_is_retried_as_finished(desk: _Office) -> None:
    """A writer puts the job's earlier signed failed row back (status, leg, document) and ana retries
    it: the signed log shows the job finished since its last retry, so the row reads ``superseded``
    (not the job's newest), the retry takes back what was given before it, as a retry of the
    finished job does, and the new run asks again."""
    job_id, aid, failed = _approved_then_failed(desk)
    _put_job_row(desk, job_id, failed)
    assert desk.jobs.get(job_id).status == "failed" and desk.jobs.get(job_id).record_trust == "superseded"
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    retrying = [e for e in desk.authority().audit.signed("retrying") if e.target == job_id][-1]
    assert retrying.payload["takes_back"] == "all"
    assert aid in desk.authority().void_decisions(job_id)
    _asks_again(desk.run_leg(job_id, "w3"), LARGE, aid)


def test_control_a_failed_run_retried_resumes_on_its_approvals(desk: _Office) -> None:
    """The honest case: a run that failed before it sent is retried and resumes on what was approved."""
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.mark(job_id, "failed", only_if=("running",), reason="ERP down") is not None
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    assert aid not in desk.authority().void_decisions(job_id)
    leg = desk.run_leg(job_id, "w2")
    assert leg.approve(_request(LARGE)).approved
    assert leg.gate.send_check("POST", BILL, _sent(LARGE)) is None


def test_a_finish_by_an_expiry_in_a_plain_reader_is_signed_too(desk: _Office) -> None:
    """The retried leg parks on a second approval that expires unanswered; the job ends finished in
    a process that built no authority (a ``taskcrew jobs list`` reading the store). Its finish is
    signed all the same, so the writer's earlier failed row put back keeps nothing of it."""
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.mark(job_id, "failed", only_if=("running",), reason="ERP down") is not None
    failed = _job_row(desk, job_id)
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))  # resumes on the two approvals
    desk.run_leg(job_id, "w2")
    desk.jobs.park(
        job_id, kind="approval", key="k-second", request=_request(SMALL), expires_in=timedelta(seconds=-1)
    )
    desk.jobs.mark(job_id, "waiting", only_if=("running",))
    reader = Jobs.open(desk.jobs.url, create=False, make_folder=False)
    try:
        reader.approvals()  # expires it: the job ends finished, rejected
    finally:
        reader.close()
    assert (desk.jobs.get(job_id).status, desk.jobs.get(job_id).outcome) == ("finished", "rejected")
    _put_job_row(desk, job_id, failed)
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    assert aid in desk.authority().void_decisions(job_id)


def test_a_finish_signed_before_a_retry_does_not_stand_after_it(desk: _Office) -> None:
    """A failed leg retried resumes on its approvals even when a finish of an earlier leg is in the
    log (its leg is one the retry ended since)."""
    job_id, aid = _parked(desk, LARGE)
    _two_approve(desk, aid)
    desk.run_leg(job_id, "w1b")
    assert desk.jobs.finish(job_id, "incomplete", "step budget", leg=desk.jobs.leg(job_id)) is not None
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))  # a new run: asks again
    leg = desk.run_leg(job_id, "w2")
    fresh = _asks_again(leg, LARGE, aid)
    desk.jobs.mark(job_id, "waiting", only_if=("running",))
    _two_approve(desk, fresh)
    desk.run_leg(job_id, "w3")
    assert desk.jobs.mark(job_id, "failed", only_if=("running",), reason="ERP down") is not None
    desk.authority().act_on_job(job_id, "retry", desk.who("ana"))
    assert fresh not in desk.authority().void_decisions(job_id)
