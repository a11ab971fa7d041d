"""A first approval is taken back by a cancel, as a decision is.

A payment the risk rules give to two people is completed by a second person on a pending approval
that carries the first one's signed cosign. Retrying a cancelled job reuses the approval when the new
leg reaches the same payment, still pending — and before, with the first approval on it:

- a leg that passed its last check just before a cancel landed parked the approval on the cancelled
  job; bob's first approval of it was accepted (not told of the cancel), the retry reused it, and
  carol completed it as "bob+carol": the worker sent the 8,000.00 payment on one live yes;
- without a race: bob first-approved, dave cancelled (the approval expired, the cosign on it); a
  database writer set it back to pending; after the retry carol completed it the same way.

Now a first approval counts only when its signed ``approve_first`` entry follows the job's last
cancel, and none is given while a cancel stands (``Authority._firsts_standing``). Interleavings are
forced with events, never sleeps; the job store is real SQLite, the audit log real and signed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from test_adversarial_races import BILL, _request, _sent, env  # noqa: F401  (env: the store and users)

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity, credentials
from taskcrew.console.auth import add_user
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import Approval
from taskcrew.jobs.store import A


class _Office:
    def __init__(self, jobs: Jobs, users: Path) -> None:
        self.jobs, self.users = jobs, users

    def who(self, name: str, proof: str = "token") -> Identity:
        return Identity(name=name, proof=proof, credential=credentials(self.users)[name])  # type: ignore[arg-type]

    def authority(self) -> Authority:
        return Authority(self.jobs, users_file=self.users)

    def submit(self) -> str:
        job = self.jobs.submit(
            "Enter the Northwind invoice",
            submitted_by="ana",
            submitted_proof="token",
            submitted_credential=credentials(self.users)["ana"],
        )
        self.run_leg(job.id, "w1")
        return job.id

    def run_leg(self, job_id: str, worker: str) -> JobHuman:
        self.jobs.mark(job_id, "running", only_if=("queued",), worker=worker, leg=self.jobs.leg(job_id))
        human = JobHuman(self.jobs, job_id, authority=self.authority())
        human.gate.holder = (worker, self.jobs.leg(job_id))  # bound to its leg, as LegRunner binds it
        return human

    def retried_leg_reaches(self, job_id: str, approval_id: str) -> JobHuman:
        """ana retries the job; its new leg reaches the same payment: the same approval, pending."""
        self.authority().act_on_job(job_id, "retry", self.who("ana"))
        human = self.run_leg(job_id, "w2")
        with pytest.raises(Parked) as again:
            human.approve(_request())
        assert again.value.approval_id == approval_id
        return human


@pytest.fixture
def office(env: dict[str, Any]) -> _Office:  # noqa: F811
    add_user(env["users"], "dave", "dave-secret-1")
    return _Office(env["jobs"], env["users"])


def _completed_on_one_yes(office: _Office, approval_id: str, leg: JobHuman) -> None:
    """carol's approval is the first that counts, not the second: nothing may be sent yet."""
    assert office.authority().view(office.jobs.approval(approval_id)).first_approvers == []
    carol = office.authority().decide(approval_id, "approve", office.who("carol", "console"))
    assert carol.status == "first_approval", carol.message
    assert office.jobs.approval(approval_id).status == "pending"
    assert leg.gate.send_check("POST", BILL, _sent()) is not None  # the payment does not leave


def test_a_first_approval_of_a_cancelled_run_is_refused_and_a_retry_asks_two_people_again(
    office: _Office,
) -> None:
    job_id = office.submit()
    human = JobHuman(office.jobs, job_id, authority=office.authority())
    human.gate.holder = ("w1", office.jobs.leg(job_id))
    # the leg passed its last check; the cancel lands before it parks (forced)
    real_park, at_park, go = office.jobs.park, threading.Event(), threading.Event()

    def park(*a: Any, **k: Any) -> Any:
        at_park.set()
        assert go.wait(30)
        return real_park(*a, **k)

    office.jobs.park = park  # type: ignore[method-assign]
    parked: list[BaseException] = []

    def leg() -> None:
        try:
            human.approve(_request())
        except BaseException as exc:  # Parked is what a parking leg raises
            parked.append(exc)

    thread = threading.Thread(target=leg, daemon=True)
    thread.start()
    assert at_park.wait(30)
    office.authority().act_on_job(job_id, "cancel", office.who("dave", "console"))
    go.set()
    thread.join(30)
    del office.jobs.park
    assert isinstance(parked[0], Parked)
    approval_id = parked[0].approval_id
    assert office.jobs.get(job_id).status == "cancelled"

    first = office.authority().decide(approval_id, "approve", office.who("bob"))
    assert first.status == "refused" and "cancelled by dave" in first.message, first.message
    _completed_on_one_yes(office, approval_id, office.retried_leg_reaches(job_id, approval_id))


def test_a_first_approval_a_cancel_took_back_does_not_count_when_a_row_is_set_pending_again(
    office: _Office,
) -> None:
    job_id = office.submit()
    with pytest.raises(Parked) as parked:
        JobHuman(office.jobs, job_id, authority=office.authority()).approve(_request())
    office.jobs.mark(job_id, "waiting", only_if=("running",))
    approval_id = parked.value.approval_id
    assert office.authority().decide(approval_id, "approve", office.who("bob")).status == "first_approval"
    office.authority().act_on_job(job_id, "cancel", office.who("dave", "console"))
    assert office.jobs.approval(approval_id).status == "expired"
    with office.jobs.engine.begin() as conn:  # a database writer: expired -> pending, column and document
        approval = Approval.model_validate_json(
            conn.execute(sa.select(A.c.doc).where(A.c.id == approval_id)).scalar_one()
        )
        approval.status = "pending"
        conn.execute(
            A.update().where(A.c.id == approval_id).values(status="pending", doc=approval.model_dump_json())
        )
    _completed_on_one_yes(office, approval_id, office.retried_leg_reaches(job_id, approval_id))


def test_a_first_approval_given_after_the_retry_still_counts(office: _Office) -> None:
    """The control: cancel, retry, then bob and carol approve the retried run: it is sent."""
    job_id = office.submit()
    with pytest.raises(Parked):
        JobHuman(office.jobs, job_id, authority=office.authority()).approve(_request())
    office.jobs.mark(job_id, "waiting", only_if=("running",))
    office.authority().act_on_job(job_id, "cancel", office.who("dave", "console"))
    office.authority().act_on_job(job_id, "retry", office.who("ana"))
    leg = office.run_leg(job_id, "w2")
    with pytest.raises(Parked) as again:
        leg.approve(_request())
    fresh = again.value.approval_id
    assert office.authority().decide(fresh, "approve", office.who("bob")).status == "first_approval"
    assert office.authority().decide(fresh, "approve", office.who("carol", "console")).status == "decided"
    assert office.jobs.approval(fresh).decided_by == "bob+carol"
    assert leg.gate.send_check("POST", BILL, _sent()) is None


def test_a_first_approval_racing_a_cancel_is_refused_not_a_crash(office: _Office) -> None:
    """The cancel lands between bob's decision being judged and his first approval being stored: he
    is refused with the reason (before, the store's error escaped: a console page failed with 500)."""
    job_id = office.submit()
    with pytest.raises(Parked) as parked:
        JobHuman(office.jobs, job_id, authority=office.authority()).approve(_request())
    office.jobs.mark(job_id, "waiting", only_if=("running",))
    real = office.jobs.add_first_approval

    def cancelled_first(*a: Any, **k: Any) -> Any:
        office.authority().act_on_job(job_id, "cancel", office.who("dave", "console"))
        return real(*a, **k)

    office.jobs.add_first_approval = cancelled_first  # type: ignore[method-assign]
    told = office.authority().decide(parked.value.approval_id, "approve", office.who("bob"))
    assert told.status == "refused" and "expired" in told.message, told.message
