"""A job's record is signed by the store on every write and checked on every read: someone who can
write the job database cannot make a job say it was done (or what it answered, or where its run
is), copy another job's or an earlier leg's record in, or get a forged record signed by a later
write. Every surface reads through the store: `jobs list`/`show`, the console's jobs and job pages.
The same holds for the record of each submission a job sent (its intent): an edited one is a send
whose answer nobody knows, so a payment cannot be sent twice by marking the first "not applied";
and for a run's checkpoint, which a resumed leg builds on."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fixtures_console import ConsoleEnv, shot
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import StoreCheckpoints, StoreIntents
from taskcrew.jobs.store import VOID, InvalidChange
from taskcrew.tools.intents import IntentLog, SendOutcome

runner = CliRunner()
PAY = "http://127.0.0.1:8800/bills/BILL-0005/pay"


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Jobs]:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    store = Jobs.open(url)
    yield store
    store.close()


def _raw(jobs: Jobs, job_id: str) -> dict[str, Any]:
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        (doc,) = db.execute("SELECT doc FROM taskcrew_jobs WHERE id = ?", (job_id,)).fetchone()
    return dict(json.loads(doc))


def _write(jobs: Jobs, job_id: str, doc: dict[str, Any], *, leg: int | None = None) -> None:
    """What someone with write access to the job database does."""
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        db.execute(
            "UPDATE taskcrew_jobs SET doc = ?, status = ? WHERE id = ?",
            (json.dumps(doc), doc["status"], job_id),
        )
        if leg is not None:
            db.execute("UPDATE taskcrew_jobs SET leg = ? WHERE id = ?", (leg, job_id))


def _edit(jobs: Jobs, job_id: str, change: Callable[[dict[str, Any]], Any]) -> None:
    doc = _raw(jobs, job_id)
    change(doc)
    _write(jobs, job_id, doc)


def _finished(jobs: Jobs, outcome: str = "failed", task: str = "enter the Northwind bill") -> str:
    job = jobs.submit(task, submitted_by="ana", options=JobOptions(), enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(
        job.id, outcome, "the ERP refused the bill", leg=0, answer="nothing entered", run_dir="/runs/r1"
    )
    return job.id


def test_an_outcome_written_into_the_database_is_not_shown_as_the_jobs(jobs: Jobs) -> None:
    job_id = _finished(jobs)
    _edit(jobs, job_id, lambda d: d.update(outcome="done", reason="entered", answer="paid 1,284.50"))
    for seen in (jobs.get(job_id), jobs.list()[0]):
        assert seen.record_trust == "forged" and seen.status == "finished"
        assert (seen.outcome, seen.answer, seen.run_dir) == ("unsigned", "", None)
        assert "cannot vouch" in seen.reason and "'finished done'" in seen.reason
    listed = runner.invoke(app, ["jobs", "list"])
    assert listed.exit_code == 0 and f"{job_id}  finished unsigned" in listed.output
    assert "changed or added in the job database" in listed.output
    shown = runner.invoke(app, ["jobs", "show", job_id])
    assert shown.exit_code == 0 and '"outcome": "unsigned"' in shown.output
    assert "paid 1,284.50" not in shown.output and "note: not signed" in shown.output
    as_json = json.loads(runner.invoke(app, ["jobs", "list", "--json"]).output)
    assert as_json[0]["outcome"] == "unsigned" and as_json[0]["record_trust"] == "forged"


@pytest.mark.parametrize("field", ["status", "task", "submitted_by", "worker", "attempts", "finished_at"])
def test_any_edited_field_voids_the_record(jobs: Jobs, field: str) -> None:
    job_id = _finished(jobs)
    value = {"status": "cancelled", "task": "pay everyone", "submitted_by": "bob", "worker": "w9"}
    _edit(jobs, job_id, lambda d: d.update({field: value.get(field, 7 if field == "attempts" else None)}))
    assert jobs.get(job_id).record_trust == "forged"


def test_another_jobs_record_or_an_earlier_legs_does_not_check_out(jobs: Jobs) -> None:
    done, other = _finished(jobs, "done"), _finished(jobs, "failed", task="enter the Globex bill")
    copied = _raw(jobs, done)
    _write(jobs, other, copied)  # job `done`'s signed record in job `other`'s row
    seen = jobs.get(other)
    assert seen.id == other and seen.record_trust == "forged" and seen.outcome == "unsigned"
    # an earlier leg's signed "done" put back after the job was retried onto leg 1
    earlier = _raw(jobs, done)
    jobs.retry(done, by="ana")
    _write(jobs, done, earlier)
    assert jobs.get(done).record_trust == "forged"
    _write(jobs, done, earlier, leg=0)  # the whole row rolled back, leg included: the old record again
    assert jobs.get(done).record_trust == "signed"  # (a roll-back of a whole row is not detected)


def test_a_forged_record_stays_forged_whoever_writes_it_next(jobs: Jobs) -> None:
    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    _edit(jobs, job.id, lambda d: d["options"].update(auto_approve=True))
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.heartbeat(job.id, "w1")
    ended = jobs.finish(job.id, "done", "entered", leg=0)
    assert ended is not None and ended.record_trust == "forged"
    assert _raw(jobs, job.id)["record_sig"] == VOID
    assert jobs.get(job.id).outcome == "unsigned"
    with pytest.raises(InvalidChange, match="submit the task again"):  # no worker would run it (s43)
        jobs.retry(job.id, by="ana")
    assert jobs.get(job.id).record_trust == "forged"
    # dropping the marker does not make it a record from before signing: its submission is edited
    _edit(jobs, job.id, lambda d: d.update(record_sig=None))
    assert jobs.get(job.id).record_trust == "forged"


def test_a_record_without_its_signature_is_never_signed_by_a_later_write_nor_run(jobs: Jobs) -> None:
    """A record with no signature (``legacy``: written before records were signed, or a signature
    removed) cannot be told from an edited one. Before, its next write signed it: a cancelled job
    (how an approver takes her approval back) unsigned and set running with a dead worker was taken
    over by a live worker's watch loop, signed, and resumed on the approval the cancel took back."""
    from datetime import timedelta

    from taskcrew.approvals.audit import AuditLog
    from taskcrew.jobs.models import utcnow
    from taskcrew.jobs.runner import LegRunner
    from taskcrew.jobs.worker import WorkerSettings, watch

    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    # as an earlier version wrote it (or a signature removed, to pass off words of one's own)
    _edit(jobs, job.id, lambda d: d.pop("record_sig") and d.update(reason="approved by bob; sending now"))
    seen = jobs.get(job.id)
    assert seen.record_trust == "legacy" and "approved by bob" not in seen.reason
    assert "before job records were signed" in runner.invoke(app, ["jobs", "list"]).output
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    assert jobs.get(job.id).record_trust == "legacy" and _raw(jobs, job.id).get("record_sig") is None
    old = _finished(jobs, "done")
    _edit(jobs, old, lambda d: d.pop("record_sig"))
    seen = jobs.get(old)  # an ending nobody signed is not shown as one, whoever wrote it
    assert (seen.record_trust, seen.outcome) == ("legacy", "unsigned")
    assert "before job records were signed" in runner.invoke(app, ["jobs", "list"]).output

    cancelled = jobs.submit("pay Hooli's bill", submitted_by="ana", enqueue=False)
    jobs.cancel(cancelled.id, by="bob")
    stale = (utcnow() - timedelta(hours=1)).isoformat()
    revive = {"status": "running", "worker": "w-dead", "cancelled_by": None, "finished_at": None}
    _edit(jobs, cancelled.id, lambda d: d.pop("record_sig") and d.update(**revive, heartbeat_at=stale))
    watch(jobs, WorkerSettings(url=jobs.url, worker_id="w-live"))  # takes the orphan over
    taken = jobs.get(cancelled.id)
    assert taken.status == "queued" and taken.record_trust == "legacy"  # not signed by the take-over
    leg = jobs.leg(cancelled.id)
    assert LegRunner(jobs, None, "w-live").run_leg(cancelled.id, leg) == "failed"  # not run
    refused = jobs.get(cancelled.id)
    assert refused.status == "failed" and refused.attempts == taken.attempts
    entries = AuditLog(jobs.keys.path.parent / "audit.jsonl", jobs.keys).entries()
    [entry] = [e for e in entries if e.target == cancelled.id and e.action == "forged_job_refused"]
    assert entry.payload["record_trust"] == "legacy"


def test_a_row_added_to_the_database_is_forged(jobs: Jobs) -> None:
    real = _raw(jobs, _finished(jobs, "done"))
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        added = {**real, "id": "job-added", "record_sig": None, "submitted_by": "carol"}
        db.execute(
            "INSERT INTO taskcrew_jobs (id, status, submitted_at, parent_id, leg, doc) VALUES (?, ?, ?, ?, ?, ?)",
            ("job-added", "finished", real["submitted_at"], None, 0, json.dumps(added)),
        )
    seen = jobs.get("job-added")
    assert seen.record_trust == "forged" and seen.outcome == "unsigned"


@pytest.mark.browser
def test_the_console_shows_a_forged_done_as_unsigned(console_env: ConsoleEnv) -> None:
    jobs = console_env.jobs
    job_id = _finished(jobs)
    _edit(jobs, job_id, lambda d: d.update(outcome="done", reason="entered and verified"))
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/jobs")
    shot(page, "jobs-unsigned")
    row = page.locator("tr", has_text=job_id)
    assert "unsigned" in row.inner_text() and "not signed" in row.inner_text()
    assert not re.search(r"\bdone\b", row.inner_text())
    assert "unsigned" in (row.locator(".badge").get_attribute("class") or "")  # red, not a green "finished"
    page.goto(f"{console_env.url}/jobs/{job_id}")
    shot(page, "job-unsigned")
    assert page.locator("#job-status").inner_text() == "finished: unsigned"
    assert "not signed" in page.locator("#job-note").inner_text()
    assert "cannot vouch" in page.locator("#job-reason").inner_text()
    assert page.get_by_role("link", name="r1").count() == 0


# ---- intents: the record of each submission a job sent, by which a repeat is or is not sent ---------


def _sent_once(jobs: Jobs, job_id: str) -> tuple[IntentLog, list[tuple[str, str]]]:
    """A job's payment sent once and saved (HTTP 303), as the gate records it."""
    log = IntentLog(StoreIntents(jobs, job_id), job_id, [])  # no read-back rule for this system
    fields = [("paid_on", "2026-12-01")]
    assert log.before_send("POST", PAY, fields, lambda page: None) is None
    log.after_send("POST", PAY, fields, SendOutcome(http_status=303))
    assert jobs.intents(job_id)[0].status == "sent" and jobs.intents(job_id)[0].trusted
    return log, fields


@pytest.mark.parametrize(
    "edit",
    [
        {"status": "not_applied", "seen": "refused", "result": "answered HTTP 422 — refused"},
        {"status": "not_applied", "seen": None, "result": "no answer: connect ECONNREFUSED"},
        {"status": "recorded", "result": None, "seen": None, "sig": None},
    ],
    ids=["refused", "never-arrived", "unsigned"],
)
def test_a_sent_payment_marked_not_applied_in_the_database_is_not_sent_again(
    jobs: Jobs, edit: dict[str, Any]
) -> None:
    job = jobs.submit("pay the Northwind bill", submitted_by="ana", enqueue=False)
    log, fields = _sent_once(jobs, job.id)
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        (doc,) = db.execute("SELECT doc FROM taskcrew_intents WHERE job_id = ?", (job.id,)).fetchone()
        db.execute("UPDATE taskcrew_intents SET doc = ?", (json.dumps({**json.loads(doc), **edit}),))
    held = log.before_send("POST", PAY, fields, lambda page: None)
    assert held is not None and "NOT sent again" in held and "may be in the system" in held
    [intent] = jobs.intents(job.id)
    assert intent.status == "uncertain" and not intent.trusted and "not signed" in (intent.result or "")


def test_another_jobs_intent_moved_under_this_jobs_key_is_not_its_answer(jobs: Jobs) -> None:
    """A refused attempt of another job (same payload) put in this job's row: not this job's answer."""
    mine = jobs.submit("pay the Northwind bill", submitted_by="ana", enqueue=False)
    other = jobs.submit("pay the Northwind bill again", submitted_by="ana", enqueue=False)
    log, fields = _sent_once(jobs, mine.id)
    theirs = IntentLog(StoreIntents(jobs, other.id), other.id, [])
    assert theirs.before_send("POST", PAY, fields, lambda page: None) is None
    theirs.after_send("POST", PAY, fields, SendOutcome(http_status=422))
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        (refused,) = db.execute("SELECT doc FROM taskcrew_intents WHERE job_id = ?", (other.id,)).fetchone()
        db.execute("UPDATE taskcrew_intents SET doc = ? WHERE job_id = ?", (refused, mine.id))
    held = log.before_send("POST", PAY, fields, lambda page: None)
    assert held is not None and "NOT sent again" in held


# ---- checkpoints: the run's state a resumed leg builds on (its plan, finished steps, verdicts) -------


def _checkpoint_row(jobs: Jobs, job_id: str) -> dict[str, Any]:
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        (doc,) = db.execute("SELECT doc FROM taskcrew_checkpoints WHERE job_id = ?", (job_id,)).fetchone()
    return dict(json.loads(doc))


def _put_checkpoint(jobs: Jobs, job_id: str, row: dict[str, Any]) -> None:
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        db.execute("UPDATE taskcrew_checkpoints SET doc = ? WHERE job_id = ?", (json.dumps(row), job_id))


@pytest.mark.parametrize("forgery", ["a verified verdict added", "another job's", "unsigned"])
def test_a_checkpoint_written_into_the_database_is_not_resumed_from(jobs: Jobs, forgery: str) -> None:
    """A resumed leg would build on it: its steps not redone, its verdict taken. The run starts over."""
    from taskcrew.crew.models import CriterionCheck, RunState, Verdict
    from taskcrew.crew.stages import restore

    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    other = jobs.submit("enter the Globex bill", submitted_by="ana", enqueue=False)
    for each in (job, other):
        jobs.mark(each.id, "running", only_if=("queued",), leg=0, worker="w1")
        state = RunState(task=each.task).model_dump(mode="json")
        assert jobs.save_checkpoint(each.id, {"stage": "plan", "state": state}, leg=0, worker="w1")
    assert jobs.checkpoint(job.id) == {
        "stage": "plan",
        "state": RunState(task=job.task).model_dump(mode="json"),
    }
    row = _checkpoint_row(jobs, job.id)
    if forgery == "a verified verdict added":
        met = CriterionCheck(
            criterion="the bill is in the ERP", met=True, source="/bills", observed="INV-2057"
        )
        verdict = Verdict(verified=True, checks=[met], reason="the bill is in the ERP").model_dump(
            mode="json"
        )
        row["state"]["state"] |= {"verdicts": [verdict], "outcome": "done"}
    elif forgery == "another job's":
        row = _checkpoint_row(jobs, other.id)
    else:
        row = row["state"]  # as a version before checkpoints were signed stored it
    _put_checkpoint(jobs, job.id, row)
    assert jobs.checkpoint(job.id) is None
    ctx = SimpleNamespace(checkpoints=StoreCheckpoints(jobs, job.id, "w1", leg=0), tracer=None)
    assert restore(ctx, RunState(task=job.task)) is False  # planned again, from the start


def test_a_history_line_added_to_the_database_says_it_is_not_signed(jobs: Jobs) -> None:
    job_id = _finished(jobs)
    forged = {"job_id": job_id, "at": "2026-12-01T10:00:00+00:00", "kind": "decided", "detail": "approved"}
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        db.execute(
            "INSERT INTO taskcrew_job_events (job_id, doc) VALUES (?, ?)",
            (job_id, json.dumps({**forged, "actor": "bob"})),
        )
    lines = jobs.events(job_id)
    assert [line.detail.startswith("[not signed]") for line in lines] == [False, False, False, True]
    shown = runner.invoke(app, ["jobs", "show", job_id]).output
    assert "decided by bob  [not signed] approved" in shown


def test_where_a_value_came_from_and_the_forms_screenshot_cannot_be_rewritten(jobs: Jobs) -> None:
    """What the approver decides from beside the payload: a source saying the new IBAN came from the
    vendor master data (it came from an e-mail), or another screenshot of the job's, written into
    the database, is not shown; the payload itself stays approvable."""
    from taskcrew.approvals.authority import Authority
    from taskcrew.jobs.models import FieldSource
    from taskcrew.tools.human import ApprovalRequest, FieldValue

    job = jobs.submit("update Vandelay's bank details", submitted_by="ana", enqueue=False)
    request = ApprovalRequest(
        kind="form_submission", method="POST", url=PAY, fields=[FieldValue(name="iban", value="DE89 3704")]
    )
    parked = jobs.park(
        job.id,
        kind="approval",
        key="k1",
        request=request,
        sources=[FieldSource(name="iban", value="DE89 3704", source="Vandelay e-mail of 2026-09-29")],
        screenshot=f"/jobs/{job.id}/form-1.png",
    )
    shown = jobs.approval(parked.id)
    assert [s.source for s in shown.sources] == ["Vandelay e-mail of 2026-09-29"] and shown.screenshot
    for edit in (
        {"sources": [{"name": "iban", "value": "DE89 3704", "source": "vendor master data"}]},
        {"screenshot": f"/jobs/{job.id}/form-0.png"},
    ):
        with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
            (doc,) = db.execute("SELECT doc FROM taskcrew_approvals WHERE id = ?", (parked.id,)).fetchone()
            db.execute("UPDATE taskcrew_approvals SET doc = ?", (json.dumps({**json.loads(doc), **edit}),))
        for seen in (jobs.approval(parked.id), jobs.approvals(job_id=job.id)[0]):
            assert (seen.sources, seen.screenshot) == ([], None)
        assert "vendor master data" not in runner.invoke(app, ["approvals", "show", parked.id]).output
    assert Authority(jobs).problem(jobs.approval(parked.id)) is None  # the payload is still the parked one


@pytest.mark.browser
def test_a_running_jobs_live_page_shows_a_forged_ending_as_unsigned(console_env: ConsoleEnv) -> None:
    jobs = console_env.jobs
    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/jobs/{job.id}")
    assert page.locator("#job-status").inner_text() == "running"
    _edit(jobs, job.id, lambda d: d.update(status="finished", outcome="done"))
    badge = page.locator("#job-status")
    badge.filter(has_text="finished: unsigned").wait_for(timeout=15_000)
    assert "unsigned" in (badge.get_attribute("class") or "")
