"""Races between a person's decision and a password reset or a cancel.

Each test pauses one party at the worst point (an Event inside a patched call, never a sleep) and
lets the other act, then checks what the worker obeys, what the signed audit log takes back and what
the decider was told:

- F1: a two-person approval completed while the first approver's password is reset (his token was
  stolen), or while the final decider's own is, or reset after it is complete and before the send:
  the worker does not obey it (``Authority.approvers_refusal``), records why, and asks again;
- F7: an approval given while a cancel is on its way (the cancel read it still pending), or after
  the cancel's signed entry and before its change to the job database: it is void for the cancelled
  run (``Authority.void_decisions``) and its decider is not told that the job resumes when it does not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity, credentials
from taskcrew.console.auth import add_user
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import ApprovalRequest, FieldValue

WAIT = 30  # seconds: only a bound on a hang, never a synchronisation
ERP_URL = "http://127.0.0.1:8800"
BILL = f"{ERP_URL}/bills/new"


def _request(amount: str = "8000.00") -> ApprovalRequest:
    fields = {"csrf_token": "tok-1", "vendor_id": "3", "invoice_number": "INV-9001", "amount": amount}
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=BILL,
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )


def _sent(amount: str = "8000.00") -> list[tuple[str, str]]:
    return [(f.name, f.value) for f in _request(amount).fields]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:
    """A job store, an approvals folder and a users file (ana, bob, carol) of this test's own."""
    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield {"jobs": jobs, "users": users}
    jobs.close()


def _parked(jobs: Jobs, amount: str = "8000.00") -> tuple[str, str]:
    """ana's job, parked on its bill (8000.00 needs two people)."""
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(_request(amount))
    jobs.mark(job.id, "waiting", only_if=("running",))
    return job.id, parked.value.approval_id


def _who(name: str, proof: str, users: Path) -> Identity:
    """``name`` logged in now (her credential as the users file holds it now)."""
    return Identity(name=name, proof=proof, credential=credentials(users)[name])  # type: ignore[arg-type]


def _reset(users: Path, name: str) -> None:
    """The operator's `console add-user NAME` again: a new password."""
    add_user(users, name, f"{name}-new-password-after-theft")


def _start(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(work())
        except BaseException as exc:  # the test reads it
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def _result(thread: threading.Thread, out: list[Any]) -> Any:
    thread.join(WAIT)
    assert not thread.is_alive(), "the paused party hung"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def _paused(target: Any, name: str) -> tuple[threading.Event, threading.Event]:
    """Patch ``target.name`` (an instance's method) to stop on entry until let go: (entered, go)."""
    real = getattr(target, name)
    entered, go = threading.Event(), threading.Event()

    def paused(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        assert go.wait(WAIT), "never let go"
        return real(*args, **kwargs)

    setattr(target, name, paused)
    return entered, go


def _worker(jobs: Jobs, job_id: str, users: Path) -> JobHuman:
    """A leg of the job, on a worker of its own (its own authority, reading the users file now)."""
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1", leg=jobs.leg(job_id))
    return JobHuman(jobs, job_id, authority=Authority(jobs, users_file=users))


def _asks_again(human: JobHuman, approval_id: str) -> None:
    """The worker does not obey ``approval_id``: it parks the bill for a person again, and sends nothing."""
    assert human.gate.send_check("POST", BILL, _sent()) is not None
    with pytest.raises(Parked) as parked:
        human.approve(_request())
    assert parked.value.approval_id != approval_id


def _not_counted(authority: Authority, approval_id: str) -> list[str]:
    return [
        str(e.payload.get("reason"))
        for e in authority.audit.entries("decision_no_longer_counts")
        if e.target == approval_id
    ]


# --- F1: a two-person approval and a password reset ---------------------------------------------


def test_a_reset_of_the_first_approver_landing_while_the_second_approval_is_written_voids_it(
    env: dict[str, Any],
) -> None:
    """bob's (stolen) token gives the first approval; carol's decision counts it, and the operator
    resets bob's password before her decision is written: the decision names "bob+carol", but the
    worker obeys it only while bob's first approval still counts, so 8000.00 is not sent on carol's
    word alone. carol is told so, and the worker records why and asks again."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    assert authority.decide(approval_id, "approve", _who("bob", "token", users)).status == "first_approval"
    carol = _who("carol", "console", users)

    entered, go = _paused(jobs, "decide")  # carol's decision: past every check, before its write
    thread, out = _start(lambda: authority.decide(approval_id, "approve", carol))
    assert entered.wait(WAIT)
    _reset(users, "bob")
    go.set()
    told = _result(thread, out)
    del jobs.decide  # the real method again

    assert told.status == "decided" and jobs.approval(approval_id).decided_by == "bob+carol"
    worker = _worker(jobs, job_id, users)
    _asks_again(worker, approval_id)
    assert any("first approval of bob" in why for why in _not_counted(worker.authority, approval_id))
    assert "does not count" in told.message and "bob" in told.message and "asks again" in told.message


def test_a_reset_of_the_final_deciders_own_password_while_her_decision_is_written_voids_it(
    env: dict[str, Any],
) -> None:
    """The same window for the final decider: carol's (stolen) session passes its identity check,
    then the operator resets carol's password before her decision is written: what that login
    approved does not count."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    assert authority.decide(approval_id, "approve", _who("bob", "token", users)).status == "first_approval"
    carol = _who("carol", "console", users)

    entered, go = _paused(jobs, "decide")
    thread, out = _start(lambda: authority.decide(approval_id, "approve", carol))
    assert entered.wait(WAIT)
    _reset(users, "carol")
    go.set()
    told = _result(thread, out)
    del jobs.decide

    assert told.status == "decided"
    worker = _worker(jobs, job_id, users)
    _asks_again(worker, approval_id)
    assert any("carol" in why for why in _not_counted(worker.authority, approval_id))
    assert "does not count" in told.message


def test_a_reset_after_a_complete_approval_and_before_the_send_voids_it(env: dict[str, Any]) -> None:
    """bob and carol approve; the worker reads the decision and is about to send; carol's password
    is reset now (her session was stolen): the last check before the bytes leave refuses, and the
    resumed run asks again. A reset voids what the logins from before it approved, until it is sent."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    authority.decide(approval_id, "approve", _who("bob", "token", users))
    told = authority.decide(approval_id, "approve", _who("carol", "console", users))
    assert told.message.endswith("approved; the job resumes.")

    worker = _worker(jobs, job_id, users)
    assert worker.approve(_request()).approved  # obeyed: nobody was reset yet
    _reset(users, "carol")
    assert worker.gate.send_check("POST", BILL, _sent()) is not None  # the last moment before it acts
    assert _not_counted(worker.authority, approval_id)


def test_a_rejection_given_by_a_login_reset_meanwhile_still_stands(env: dict[str, Any]) -> None:
    """Stopping is always allowed: a rejection stands whatever happened to its decider's password."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    assert authority.decide(approval_id, "reject", _who("carol", "console", users)).status == "decided"
    _reset(users, "carol")
    decision = _worker(jobs, job_id, users).approve(_request())
    assert not decision.approved


def test_without_a_reset_the_sequential_approvals_are_obeyed_as_before(env: dict[str, Any]) -> None:
    """Control: one person for a small bill, two for a large one, nobody reset: sent."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs, amount="120.00")
    authority = Authority(jobs, users_file=users)
    assert authority.decide(approval_id, "approve", _who("carol", "console", users)).status == "decided"
    assert jobs.approval(approval_id).decision.credential is not None  # type: ignore[union-attr]
    worker = _worker(jobs, job_id, users)
    assert worker.approve(_request("120.00")).approved
    assert worker.gate.send_check("POST", BILL, _sent("120.00")) is None


# --- F7: an approval and a cancel -----------------------------------------------------------------


def test_an_approval_given_while_a_cancel_is_on_its_way_is_void_for_the_cancelled_run(
    env: dict[str, Any],
) -> None:
    """ana's cancel reads the job's approvals (carol's still pending) and is paused before its signed
    entry; carol completes the approval; the cancel lands. The cancel takes back what was decided
    until it landed: carol's approval is void, and a retry of the job asks again."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    authority.decide(approval_id, "approve", _who("bob", "token", users))
    ana, carol = _who("ana", "token", users), _who("carol", "console", users)

    read, go = threading.Event(), threading.Event()
    real_append = authority.audit.append

    def append(who: str, action: str, *rest: Any) -> Any:  # the cancel has read the approvals
        if action == "cancel":
            read.set()
            assert go.wait(WAIT), "never let go"
        return real_append(who, action, *rest)

    authority.audit.append = append  # type: ignore[method-assign]
    thread, out = _start(lambda: authority.act_on_job(job_id, "cancel", ana))
    assert read.wait(WAIT)
    told = Authority(jobs, users_file=users).decide(approval_id, "approve", carol)
    assert told.status == "decided"  # given before the cancel landed: the job did resume then
    go.set()
    assert _result(thread, out).status == "cancelled"
    del authority.audit.append

    fresh = Authority(jobs, users_file=users)
    assert jobs.approval(approval_id).status == "approved"
    assert approval_id in fresh.void_decisions(job_id)
    fresh.act_on_job(job_id, "retry", ana)
    _asks_again(_worker(jobs, job_id, users), approval_id)


def test_an_approval_given_after_the_cancel_is_signed_is_void_and_its_decider_is_told(
    env: dict[str, Any],
) -> None:
    """The cancel's signed entry is written and its change to the job database is paused; carol
    approves (still pending there): she is told the job was cancelled (bob's first approval went
    with the cancel, so hers would be a first one given while it stands: refused), not that the job
    resumes; the job ends cancelled and nothing of it acts on the approval."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    authority.decide(approval_id, "approve", _who("bob", "token", users))
    ana, carol = _who("ana", "token", users), _who("carol", "console", users)

    entered, go = _paused(jobs, "cancel")  # after the cancel's entry, before the job database changes
    thread, out = _start(lambda: authority.act_on_job(job_id, "cancel", ana))
    assert entered.wait(WAIT)
    told = Authority(jobs, users_file=users).decide(approval_id, "approve", carol)
    go.set()
    assert _result(thread, out).status == "cancelled"
    del jobs.cancel

    assert jobs.get(job_id).status == "cancelled"
    # bob's first approval was taken back by the cancel's entry (``_firsts_standing``): carol's would
    # be a first approval given while the cancel stands, refused as such — never "the job resumes"
    assert told.status == "refused"
    assert "resumes" not in told.message.replace("does not resume", "")
    assert "cancelled by ana" in told.message
    assert jobs.approval(approval_id).status != "approved"


def test_an_approval_after_the_cancel_landed_is_refused_as_cancelled(env: dict[str, Any]) -> None:
    """Sequential: the job is cancelled, then carol tries to approve: refused, and told why (the job
    was cancelled), not that the approval expired and its job ends rejected."""
    jobs, users = env["jobs"], env["users"]
    job_id, approval_id = _parked(jobs)
    authority = Authority(jobs, users_file=users)
    authority.act_on_job(job_id, "cancel", _who("ana", "token", users))
    told = authority.decide(approval_id, "approve", _who("carol", "console", users))
    assert told.status == "refused" and "cancelled by ana" in told.message
    assert "rejected" not in told.message


def test_an_answer_given_by_a_login_reset_since_is_not_handed_to_the_run(env: dict[str, Any]) -> None:
    """An answer to a question is a person's word to the run (what it should do next): it rests on
    her login as an approval does. bob's stolen token answers; his password is reset before the
    worker takes the answer: the run does not get it, and the question is asked again."""
    jobs, users = env["jobs"], env["users"]
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).ask("Which bank account?")
    jobs.mark(job.id, "waiting", only_if=("running",))
    authority = Authority(jobs, users_file=users)
    told = authority.decide(parked.value.approval_id, "answer", _who("bob", "token", users), "use DE99 0000")
    assert told.status == "decided"
    _reset(users, "bob")
    worker = _worker(jobs, job.id, users)
    with pytest.raises(Parked):  # asked again, never "use DE99 0000"
        worker.ask("Which bank account?")
    assert _not_counted(worker.authority, parked.value.approval_id)
