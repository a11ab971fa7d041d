"""The job store: jobs, approvals (approve / reject / answer), expiry, fan-out, bad databases, the CLI."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.approvals.identity import os_user
from taskcrew.cli import app
from taskcrew.jobs import ApprovalDecision, ApprovalRequest, InvalidChange, Jobs, JobStoreError, UnknownJob
from taskcrew.jobs.batch import submit_each
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import utcnow
from taskcrew.tools.human import FieldValue


@pytest.fixture
def jobs(tmp_path: Path) -> Jobs:
    return Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")


def _request(amount: str = "1284.50", token: str = "abc") -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[
            FieldValue(name="csrf_token", value=token),
            FieldValue(name="invoice_number", value="INV-2057"),
            FieldValue(name="amount", value=amount),
        ],
    )


def test_submit_list_get_cancel_retry(jobs: Jobs) -> None:
    job = jobs.submit("Enter Initech's newest invoice into the ERP.", submitted_by="ana")
    assert job.status == "queued" and job.submitted_by == "ana"
    assert [j.id for j in jobs.list()] == [job.id]
    assert jobs.list("finished") == []
    with pytest.raises(UnknownJob, match="no job with id 'job-nope'"):
        jobs.get("job-nope")
    cancelled = jobs.cancel(job.id, by="bob")
    assert (cancelled.status, cancelled.cancelled_by) == ("cancelled", "bob")
    with pytest.raises(InvalidChange, match="already cancelled"):
        jobs.cancel(job.id, by="bob")
    leg = jobs.leg(job.id)
    again = jobs.retry(job.id, by="carol")
    assert again.status == "queued" and jobs.leg(job.id) == leg + 1
    with pytest.raises(InvalidChange, match="only finished, failed, cancelled or orphaned"):
        jobs.retry(job.id, by="carol")
    kinds = [(e.kind, e.actor) for e in jobs.events(job.id)]
    assert kinds == [("submitted", "ana"), ("cancelled", "bob"), ("retried", "carol")]
    with pytest.raises(InvalidChange, match="a few words"):
        jobs.submit("  ", submitted_by="ana")


def test_approval_parks_and_each_decision_is_kept_as_given(jobs: Jobs) -> None:
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job.id, expires_in=timedelta(hours=1))
    with pytest.raises(Parked) as parked:
        human.approve(_request())
    jobs.mark(
        job.id, "waiting", only_if=("running",), reason=f"waiting for approval {parked.value.approval_id}"
    )
    approval = jobs.approval(parked.value.approval_id)
    assert approval.status == "pending" and approval.request is not None
    assert approval.request.fields == _request().fields and approval.request.key == approval.key
    assert [s.name for s in approval.sources] == ["invoice_number", "amount"]  # not the page's token
    leg = jobs.leg(job.id)
    decided = jobs.decide(approval.id, ApprovalDecision.answer("use the total incl. VAT"), decided_by="bob")
    assert decided.status == "answered" and decided.decided_by == "bob"
    assert decided.decision == ApprovalDecision.answer("use the total incl. VAT")
    assert jobs.get(job.id).status == "queued" and jobs.leg(job.id) == leg + 1  # resumed
    assert jobs.get(job.id).reason == ""  # no longer "waiting for approval …"
    with pytest.raises(InvalidChange, match="already answered"):
        jobs.decide(approval.id, ApprovalDecision.approve(), decided_by="bob")
    # the resumed step gets the decision for the same payload (a new page's token does not matter) ...
    assert human.approve(_request(token="xyz")).outcome == "answer"
    # ... and a different payload is asked again
    with pytest.raises(Parked):
        human.approve(_request(amount="1000.00"))
    assert human.key(_request()) != human.key(_request(amount="1000.00"))


def test_questions_take_answers_not_approvals(jobs: Jobs) -> None:
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    jobs.mark(job.id, "waiting", only_if=("queued",))
    human = JobHuman(jobs, job.id)
    with pytest.raises(Parked) as parked:
        human.ask("Which vendor did you mean?")
    with pytest.raises(InvalidChange, match="answer it with text"):
        jobs.decide(parked.value.approval_id, ApprovalDecision.approve(), decided_by="bob")
    with pytest.raises(InvalidChange, match="needs text"):
        jobs.decide(parked.value.approval_id, ApprovalDecision.answer(" "), decided_by="bob")
    jobs.decide(parked.value.approval_id, ApprovalDecision.answer("Northwind Traders"), decided_by="bob")
    # the resumed run may word its question anew: the answer is handed over once, in order
    assert human.ask("Which vendor should I use?") == "Northwind Traders"
    with pytest.raises(Parked):
        human.ask("Which vendor should I use?")  # a second question is asked again


def test_a_cancelled_jobs_pending_approval_closes_with_it_everywhere(jobs: Jobs) -> None:
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    approval = jobs.park(job.id, kind="approval", key="k", request=_request())
    jobs.mark(job.id, "waiting", only_if=("queued",))
    jobs.cancel(job.id, by="bob")
    # before: the row's status said expired, its document (what every surface shows) still pending
    assert jobs.approval(approval.id).status == "expired"
    assert [a.status for a in jobs.approvals(job_id=job.id)] == ["expired"]
    assert jobs.approvals("pending") == []
    with pytest.raises(InvalidChange, match="already expired"):
        jobs.decide(approval.id, ApprovalDecision.approve(), decided_by="carol")


def test_an_unanswered_approval_expires_and_the_job_ends_rejected(jobs: Jobs) -> None:
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    approval = jobs.park(
        job.id, kind="approval", key="k", request=_request(), expires_in=timedelta(minutes=5)
    )
    jobs.mark(job.id, "waiting", only_if=("queued",))
    assert jobs.expire_due(utcnow()) == []
    expired = jobs.expire_due(utcnow() + timedelta(minutes=6))
    assert [a.id for a in expired] == [approval.id]
    ended = jobs.get(job.id)
    assert (ended.status, ended.outcome) == ("finished", "rejected")
    assert "expired" in ended.reason
    with pytest.raises(InvalidChange, match="already expired"):
        jobs.decide(approval.id, ApprovalDecision.approve(), decided_by="bob")


def test_for_each_fans_out_once(jobs: Jobs) -> None:
    items = ["Initech", "Globex Corp"]
    # one call is one attempt; a call retried with its key queues nothing twice (test_adversarial_batches.py)
    first = submit_each(
        jobs, "Enter {item}'s newest invoice into the ERP.", items, submitted_by="ana", key="k"
    )
    again = submit_each(
        jobs, "Enter {item}'s newest invoice into the ERP.", items, submitted_by="ana", key="k"
    )
    assert [j.id for j in first] == [j.id for j in again] and len(jobs.list()) == 2
    assert first[0].task == "Enter Initech's newest invoice into the ERP." and first[0].item == "Initech"
    assert len(jobs.list(parent_id=first[0].parent_id)) == 2
    with pytest.raises(InvalidChange, match="placeholder"):
        submit_each(jobs, "Enter the newest invoice", items, submitted_by="ana")


def test_damaged_and_unreachable_databases_are_clear_errors(tmp_path: Path) -> None:
    damaged = tmp_path / "jobs.sqlite3"
    damaged.write_bytes(b"this is not a database" * 10)
    with pytest.raises(JobStoreError, match="damaged or not an SQLite database"):
        Jobs.open(f"sqlite:///{damaged}")
    assert damaged.read_bytes().startswith(b"this is not")  # nothing overwritten
    with pytest.raises(JobStoreError, match="cannot use the job database"):
        Jobs.open("postgresql+psycopg://nobody:secret@127.0.0.1:9/jobs")


def test_cli_submit_show_and_decide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    runner = CliRunner()
    models = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    out = runner.invoke(app, ["submit", "Enter Initech's newest invoice into the ERP.", *models])
    assert out.exit_code == 0, out.output
    job_id = out.output.strip()
    listed = runner.invoke(app, ["jobs", "list"])
    assert job_id in listed.output and "queued" in listed.output and os_user() in listed.output
    unknown = runner.invoke(app, ["jobs", "show", "job-missing"])
    assert unknown.exit_code == 1 and "no job with id 'job-missing'" in unknown.output
    jobs = Jobs.open(url)
    approval = jobs.park(job_id, kind="approval", key="k", request=_request())
    jobs.mark(job_id, "waiting", only_if=("queued",))
    shown = runner.invoke(app, ["approvals", "show", approval.id])
    assert "INV-2057" in shown.output and "1284.50" in shown.output
    rejected = runner.invoke(app, ["approvals", "reject", approval.id, "--reason", "wrong amount"])
    assert rejected.exit_code == 0, rejected.output
    decided = jobs.approval(approval.id)
    assert decided.status == "rejected" and decided.decided_by == os_user()
    assert decided.decision is not None and decided.decision.outcome == "reject"
    assert decided.decision.text == "wrong amount"
    bad = tmp_path / "bad.sqlite3"
    bad.write_text("garbage" * 20)
    broken = runner.invoke(app, ["jobs", "list", "--db", f"sqlite:///{bad}"])
    assert broken.exit_code == 2 and "damaged" in broken.output


def test_a_cancelled_or_taken_over_leg_stops_at_its_next_checkpoint(jobs: Jobs) -> None:
    from taskcrew.jobs.runner import Stopped, StoreCheckpoints

    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    mine = StoreCheckpoints(jobs, job.id, "w1")
    mine.save("plan", {"stage": "plan", "state": {}})
    assert jobs.checkpoint(job.id) == {"stage": "plan", "state": {}}
    jobs.mark(job.id, "running", only_if=("running",), worker="w2")  # another worker took it over
    with pytest.raises(Stopped):
        mine.save("step:1", {"stage": "step:1", "state": {}})
    jobs.cancel(job.id, by="bob")
    with pytest.raises(Stopped):
        StoreCheckpoints(jobs, job.id, "w2").save("step:1", {"stage": "step:1", "state": {}})
    assert jobs.checkpoint(job.id) == {"stage": "plan", "state": {}}  # nothing saved after the stop


def _queued_legs(path: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return [
            r[0] for r in conn.execute("SELECT workflow_uuid FROM workflow_status WHERE status='ENQUEUED'")
        ]


def test_each_store_enqueues_into_its_own_database_even_opened_twice_or_recreated(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    url = f"sqlite:///{path}"
    first, second = Jobs.open(url), Jobs.open(url)
    a = first.submit("Enter Initech's newest invoice into the ERP.", submitted_by="ana")
    first.close()  # closing one store leaves the other working
    b = second.submit("Enter Globex's newest invoice into the ERP.", submitted_by="ana")
    assert sorted(_queued_legs(path)) == sorted([f"{a.id}.0", f"{b.id}.0"])
    second.close()
    # The database moved aside and made anew at the same path: enqueues go into the new file
    # (a client cached per URL kept writing into the deleted one, and no worker saw the job).
    for leftover in tmp_path.glob("jobs.sqlite3*"):
        leftover.rename(tmp_path / f"old-{leftover.name}")
    again = Jobs.open(url)
    c = again.submit("Enter Umbrella's newest invoice into the ERP.", submitted_by="ana")
    assert _queued_legs(path) == [f"{c.id}.0"]
    again.close()


def test_a_parked_values_source_cites_only_lines_that_show_it() -> None:
    """The approval page says where each value came from. A due date the file reader worked out
    (invoice date + Net 30) is not in the e-mail it cited for the date and the terms: that e-mail is
    not named as its source; the date, printed there in another format, is."""
    from taskcrew.jobs.human import trace

    eml = "Invoice from Northwind Traders.eml"
    report = {
        "data": {"invoice_date": "2026-09-12", "due_date": "2026-10-12", "amount": "1284.50"},
        "sources": [
            {"source": eml, "quote": "Invoice Date September 12, 2026"},
            {"source": eml, "quote": "Terms Net 30"},
            {"source": eml, "quote": "TOTAL PAYABLE 1,284.50 USD"},
        ],
    }
    checkpoint = {
        "state": {"steps_done": [{"index": 0, "role": "file_reader", "title": "Read", "report": report}]}
    }
    said = {name: trace(checkpoint, "enter it", name, value)[0] for name, value in report["data"].items()}
    assert said["invoice_date"].endswith(f"found invoice_date = 2026-09-12, citing {eml}")
    assert said["amount"].endswith(f"citing {eml}")
    assert eml not in said["due_date"] and "worked out by the step" in said["due_date"]


def test_a_leg_whose_job_was_taken_over_writes_nothing_over_the_new_leg(jobs: Jobs) -> None:
    """Worker w1's leg 0 went quiet (a loaded machine starved its heartbeat); the watch loop took
    the job over and a new leg runs it — on another worker, or on w1 again. The old leg then wakes:
    its checkpoint, its 'waiting', its 'failed' and its finished account must not land on the new
    leg's job (every write of a leg names its leg, checked in the write's own transaction)."""
    from taskcrew.jobs.runner import Stopped, StoreCheckpoints

    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    old = StoreCheckpoints(jobs, job.id, "w1", leg=0)
    old.save("plan", {"stage": "plan"})
    assert jobs.take_over(job.id, "w1") is not None and jobs.leg(job.id) == 1
    jobs.mark(job.id, "running", only_if=("queued",), leg=1, worker="w1")  # the same worker id, leg 1
    new = StoreCheckpoints(jobs, job.id, "w1", leg=1)
    new.save("step:2", {"stage": "step:2"})
    with pytest.raises(Stopped):
        old.save("step:1", {"stage": "step:1"})  # the old leg's late checkpoint
    assert jobs.checkpoint(job.id) == {"stage": "step:2"}
    assert jobs.finish(job.id, "done", "the old leg's account", leg=0) is None
    assert jobs.mark(job.id, "waiting", only_if=("running",), leg=0) is None
    assert jobs.mark(job.id, "failed", only_if=("running",), leg=0) is None
    assert jobs.get(job.id).status == "running" and jobs.leg(job.id) == 1
    assert jobs.finish(job.id, "done", "the new leg's account", leg=1) is not None
    assert jobs.get(job.id).reason == "the new leg's account"


def test_the_heartbeat_halts_a_leg_whose_job_a_newer_leg_of_the_same_worker_holds(jobs: Jobs) -> None:
    """The worker id alone does not tell two legs apart: w1's old leg 0, still in a browser step,
    must stop sending once w1's leg 1 holds the job (its heartbeat halts its model calls and its
    browser policy)."""
    from types import SimpleNamespace

    from taskcrew.approvals.authority import Authority
    from taskcrew.jobs.runner import LegHalt, LegRunner

    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    runner = LegRunner(jobs, place=None, worker_id="w1", heartbeat_s=0.01)
    stop, halt = threading.Event(), LegHalt()
    halt.policy = SimpleNamespace(halted=None)  # the leg's browser policy
    beat = threading.Thread(target=runner._beat, args=(job.id, 0, stop, halt, Authority(jobs)), daemon=True)
    beat.start()
    try:
        assert not halt.wait(0.2)  # its own leg: beating, not halted
        assert jobs.take_over(job.id, "w1") is not None
        jobs.mark(job.id, "running", only_if=("queued",), leg=1, worker="w1")
        assert halt.wait(30), "the old leg was not halted"
    finally:
        stop.set()
        beat.join(10)
    assert "leg 1" in (halt.policy.halted or "")


def test_every_write_signs_the_record_and_a_retired_key_voids_it(jobs: Jobs) -> None:
    """The baseline of tests/test_adversarial_job_records.py: what the store writes reads as written."""
    from taskcrew.approvals.signing import KeyRing

    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    assert jobs.get(job.id).record_trust == "signed"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.heartbeat(job.id, "w1")
    jobs.finish(job.id, "done", "entered and verified", leg=0, answer="BILL-7", run_dir="/runs/r1")
    done = jobs.get(job.id)
    assert (done.record_trust, done.outcome, done.answer, done.run_dir) == (
        "signed",
        "done",
        "BILL-7",
        "/runs/r1",
    )
    assert "record_trust" not in done.model_dump()  # how far the store vouches is never stored
    ring = KeyRing(jobs.keys.path)
    ring.rotate()  # a new key: earlier records still check out
    jobs.keys = KeyRing(ring.path)
    assert jobs.get(job.id).outcome == "done"
    assert jobs.retry(job.id, by="ana").record_trust == "signed"
    assert jobs.cancel(job.id, by="ana").record_trust == "signed"
    assert [j.record_trust for j in jobs.list()] == ["signed"]
    ring.rotate(retire_old=True)  # documented: voids every record, as every approval and audit entry
    jobs.remark_keys(KeyRing(ring.path))  # as `approvals rotate-key --retire-old` does (``Jobs.check_keys``)
    jobs.keys = KeyRing(ring.path)
    with pytest.raises(InvalidChange, match="submit the task again"):  # no worker would run it
        jobs.retry(job.id, by="ana")
    assert jobs.get(job.id).record_trust == "forged"  # and no write signs it again


def test_a_job_submitted_with_another_approvals_key_is_not_run_and_says_why(
    jobs: Jobs, tmp_path: Path
) -> None:
    """The CLI, the console and the workers must share one approvals folder: a CLI with another one
    is refused before it signs (``Jobs.check_keys``); a job a database writer signed with a key of
    his own is refused by the worker, which says how to fix it, and nothing of it runs."""
    from taskcrew.approvals.audit import AuditLog
    from taskcrew.approvals.signing import KeyRing
    from taskcrew.jobs.runner import LegRunner
    from taskcrew.jobs.store import WrongKeyRing

    assert jobs.keys is not None  # the fleet's ring marks the job database on first use
    cli = Jobs.open(jobs.url)
    cli.keys = KeyRing(tmp_path / "elsewhere" / "operator.key")
    with pytest.raises(WrongKeyRing, match="TASKCREW_APPROVALS_DIR"):
        cli.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    assert not (tmp_path / "elsewhere" / "operator.key").exists()  # no key made
    cli._ring_ok = cli.keys = KeyRing(tmp_path / "elsewhere" / "operator.key")  # a writer's own key
    job = cli.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    assert cli.get(job.id).record_trust == "signed"  # its own key vouches for it
    assert LegRunner(jobs, None, "w1").run_leg(job.id, 0) == "failed"
    seen = jobs.get(job.id)
    assert seen.status == "failed" and seen.attempts == 0 and seen.record_trust == "forged"
    assert "another approvals key" in seen.reason and "share one approvals folder" in seen.reason
    [entry] = [
        e for e in AuditLog(jobs.keys.path.parent / "audit.jsonl", jobs.keys).entries() if e.target == job.id
    ]
    assert (
        entry.action == "forged_job_refused"
        and entry.payload["record_sig"].split(":")[0] in cli.keys.key_ids()
    )
    cli.close()


def test_rows_written_before_a_field_was_added_to_the_model_still_check_out(jobs: Jobs) -> None:
    """The seal covers each document as it is stored, not a model's dump of it: a job, an intent and a
    history line stored without a field the model has now (as a version before that field wrote
    them) still check out, and the field reads as its default."""
    import json
    import sqlite3

    from taskcrew.jobs.models import Intent

    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    jobs.save_intent(
        Intent(
            key="k1",
            job_id=job.id,
            target="http://127.0.0.1:8800/bills/new",
            payload=_request(),
            status="sent",
            seen="saved",
            recorded_at=job.submitted_at,
        )
    )
    path = jobs.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        for kind, table, field, sig, bound in (
            ("job", "taskcrew_jobs", "item", "record_sig", {"leg": 0}),
            ("intent", "taskcrew_intents", "seen", "sig", {}),
        ):
            (doc,) = db.execute(f"SELECT doc FROM {table}").fetchone()
            older = {k: v for k, v in json.loads(doc).items() if k != field}
            db.execute(f"UPDATE {table} SET doc = ?", (json.dumps(jobs._sealed(kind, bound, older, sig)),))
    assert jobs.get(job.id).record_trust == "signed" and jobs.get(job.id).item is None
    [intent] = jobs.intents(job.id)
    assert intent.trusted and intent.seen is None and intent.status == "sent"
    assert not jobs.events(job.id)[0].detail.startswith("[not signed]")
