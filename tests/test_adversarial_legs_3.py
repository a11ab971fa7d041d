"""Attack: what ends a job's leg is undone, or never recorded, in the job database, and a leg acts on.
Someone with write access to the job database (not the signing key) deletes a job's record of a send,
or sets a cancelled job's row back to its signed version from before the cancel; an interrupt lands
between a cancel, retry or takeover and its signed audit entry; a batch item is made to take another
item's job id.

- a send the signed audit log records for the job is a repeat, this very leg's own earlier send
  included (``WorkerGate.sent_before``): a deleted intent row does not make it a first attempt;
- every runner asks one question before a send and at each heartbeat, bound to its leg: the job row,
  then the signed log (``approvals.worker.leg_refusal``); `taskcrew run` is its job's leg 0;
- a cancel ends every leg of the job until a later retry is done (``Authority.leg_end``): a row set
  back and taken over by a worker's own watch loop makes no leg that may act;
- a cancel, retry or takeover is signed before the job database changes (written ahead): an interrupt
  or a refusal in between can only hold more back, and what it holds back is brought in line
  (``Authority.settle``), never left wedged;
- an id already taken by another submission is an error, never that other job returned.

Real SQLite job store, real audit log and the worker's own watch loop. `taskcrew run` (its job's leg
0) runs for real: ``run_in_foreground`` in the workplace it enters (Chromium, the demo ERP over HTTP),
the person at the terminal scripted (tests/fixtures_foreground.py); only the models are scripted."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from fixtures_foreground import BOB, HOOLI, CountingProxy, Foreground, Person, after_a_beat
from test_cli_run import run_file_question

from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.authority import Authority, RecordedOnly
from taskcrew.approvals.rules import DEFAULT_RULES
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.scripted import Loop, Reply, ScriptedCall, ScriptedLLM
from taskcrew.eval import kit
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.batch import ITEM_ID, submit_each
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.runner import StoreIntents
from taskcrew.jobs.store import INT, InvalidChange, J, fingerprint
from taskcrew.jobs.worker import WorkerSettings, watch
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.intents import NOT_SENT_AGAIN, IntentLog, SendOutcome

PAY, PAID = "http://127.0.0.1:9/bills/BILL-0004/pay", [("paid_on", "2026-10-02")]
VANDELAY = kit.Bill("Vandelay Industries", "VI-3390", "2640.00", "USD", "2026-09-18", "2026-10-20")
VANDELAY_SAVED = "Acme Payables has a bill for Vandelay Industries VI-3390: 2640.00 USD, due 2026-10-20"


def _request(authority: Authority) -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=PAY,
        fields=[FieldValue(name=n, value=v) for n, v in PAID],
        key=authority.key_of("POST", PAY, PAID),
    )


def _approved(jobs: Jobs, authority: Authority) -> str:
    """A job whose payment bob approved; its id."""
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", enqueue=False)
    request = _request(authority)
    approval = jobs.park(job.id, kind="approval", key=request.key, request=request)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    return job.id


def _row(jobs: Jobs, job_id: str) -> dict[str, Any]:
    """The job's row as stored (signed): what a database writer can put back later."""
    with jobs.engine.begin() as conn:
        return dict(conn.execute(sa.select(J).where(J.c.id == job_id)).mappings().one())


def _set_back(jobs: Jobs, job_id: str, row: dict[str, Any]) -> None:
    with jobs.engine.begin() as conn:
        conn.execute(J.update().where(J.c.id == job_id).values(**row))


def _signed(authority: Authority, action: str, job_id: str) -> list[Any]:
    return [
        e for e in authority.audit.signed(action) if e.target == job_id or e.payload.get("job_id") == job_id
    ]


def test_a_leg_that_sent_a_payment_does_not_send_it_again_when_its_intent_row_is_deleted(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Wired exactly as ``LegRunner._run`` wires it: ``may_send``, the intent log with the signed
    log as its witness (``sent_before``) and ``sending`` as its last check."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = _approved(jobs, authority)
    jobs.mark(job_id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    gate = JobHuman(jobs, job_id).gate
    gate.holder = ("w1", 0)
    log = IntentLog(StoreIntents(jobs, job_id), job_id, [], witness=gate.sent_before, last_check=gate.sending)

    def send_once() -> str | None:
        if (refused := gate.may_send("POST", PAY, PAID)) is not None:
            return refused
        if (refused := log.before_send("POST", PAY, PAID, lambda page: None)) is not None:
            return refused
        log.after_send("POST", PAY, PAID, SendOutcome(http_status=303, location="/bills/BILL-0004"))
        return None

    assert gate.sent_before("POST", PAY, PAID) is None  # never sent: a first attempt
    assert send_once() is None  # the payment leaves once (recorded "send" in the signed log)
    # the same leg reaches the same payment again (a page or document told the agent to "retry")
    assert send_once() is not None  # with the row there, it is held back
    db = sqlite3.connect(str(tmp_path / "jobs.sqlite3"))
    db.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))  # the database writer
    db.commit()
    db.close()
    assert gate.sent_before("POST", PAY, PAID) is not None  # this leg's own send is a witness too
    second = send_once()
    sends = _signed(authority, "send", job_id)
    jobs.close()
    assert second is not None and len(sends) == 1, f"sent twice: {len(sends)} signed sends"
    assert "may be in the system" in second, second


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_cancelled_foreground_run_sends_nothing_after_its_job_row_is_set_back(
    tmp_path: Path, isolated_home: Path, erp: ErpServer
) -> None:
    """`taskcrew run`'s last check before a send is the one every leg asks (its leg 0): the row, then
    the signed log. `taskcrew run` pays the Hooli bill for real; while the person at the terminal is
    asked to approve it, right after a heartbeat, a colleague cancels it and a database writer puts
    the pre-cancel row back; she says yes at once, before the next heartbeat: the payment does not
    leave, and the job ends cancelled, as the signed log says."""
    seen: dict[str, Any] = {}

    def at_prompt(request: ApprovalRequest, asked: int) -> None:
        if asked > 1:
            return
        jobs = Jobs.open()
        authority = Authority(jobs)
        [job] = jobs.list()
        after_a_beat(jobs, job.id)  # the next one is two seconds away
        saved = _row(jobs, job.id)
        authority.act_on_job(job.id, "cancel", BOB)  # a colleague cancels it (signed, leg 0)
        seen["cancelled"] = jobs.get(job.id).status
        _set_back(jobs, job.id, saved)  # the database writer replays the pre-cancel row
        seen["set back"] = jobs.get(job.id).status
        seen["leg_over"] = authority.leg_over(job.id, 0)
        jobs.close()

    models = scripted_models(HOOLI)
    person = Person(at_prompt)
    with Foreground(erp.url, tmp_path, person) as place:
        place.taskcrew_run(HOOLI.task, models("solver"), models("auditor"))
    assert person.asked and person.asked[0].url.endswith("/bills/BILL-0005/pay")  # she said yes
    assert (seen["cancelled"], seen["set back"]) == ("cancelled", "running"), seen
    assert seen["leg_over"] is not None  # the signed log knows leg 0 was cancelled
    paid = [p for p in erp.state().payments if p.bill_id == "BILL-0005"]
    assert paid == [], "the cancelled foreground run's last check let the payment leave"
    jobs = Jobs.open()
    [job] = jobs.list()
    intents = jobs.intents(job.id)
    jobs.close()
    if intents:  # the intent log's last check refused it, as it was about to leave
        first = intents[0]
        assert (first.status, first.seen) == ("not_applied", "not_sent"), first
        assert "cancelled by bob" in (first.result or ""), first.result
    else:  # only when the machine stalled for a beat's length: the beat halted the run's policy first
        refused = [d for d in place.policy.decisions if d.url.endswith("/pay") and d.outcome == "blocked"]
        assert refused and "cancelled by bob" in refused[0].reason, refused
    assert job.status == "cancelled" and "signed audit log" in (job.reason or ""), job  # as the log says


class _EntersItTwice(kit.EnterBill):
    """Enters the bill; once it is saved, enters the very same bill again (as a page told it to
    "retry"): the same submission, from a fresh form."""

    again = False

    def __call__(self, call: ScriptedCall) -> Reply:
        text = call.last_tool_result
        saved = re.search(r"/bills/BILL-\d+", kit.page_url(text)) and "saved" in kit.page_text(text).lower()
        if saved and not self.again:
            self.again = True
            return kit.navigate(f"{kit.erp(call)}/bills/new")
        return super().__call__(call)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_foreground_run_does_not_send_a_submission_again_when_its_intent_row_is_deleted(
    tmp_path: Path, isolated_home: Path, erp: ErpServer
) -> None:
    """`taskcrew run`, wired as ``run_in_foreground`` wires it: each send is signed as it leaves
    (``leaving``) and the signed log is its intent log's witness. Before, a foreground run recorded
    no send anywhere but the job database: a database writer who deleted the intent row made the
    submission it had sent look never sent, and the same run sent it again.

    `taskcrew run` enters Vandelay's bill for real (through a proxy that counts what reaches the ERP),
    then enters the very same bill again (a bill's form is always there; a paid bill shows no pay
    form, so a browser cannot send the same payment twice). The person at the terminal is asked again
    (the first approval was spent); meanwhile a database writer deletes the job's intent rows, and
    she says yes: it does not leave."""
    seen: dict[str, Any] = {}

    def at_prompt(request: ApprovalRequest, asked: int) -> None:
        if asked != 2:
            return
        jobs = Jobs.open()
        [job] = jobs.list()
        with jobs.engine.begin() as conn:  # the database writer
            deleted = conn.execute(sa.delete(INT).where(INT.c.job_id == job.id))
            seen["deleted"] = deleted.rowcount
        jobs.close()

    plan = Plan(
        goal="Enter Vandelay's invoice VI-3390",
        success_criteria=[VANDELAY_SAVED],
        steps=[PlanStep(role="browser_operator", title="Enter the bill", instructions="As the title says.")],
        changes_data=True,
    )
    worker = ScriptedLLM(
        {
            "planner": [plan.model_dump_json()],
            "browser_operator": [Loop(policy=_EntersItTwice(VANDELAY))],
            "reflector": ['{"facts": []}'],
        }
    )

    def check(url: str, body: str) -> str:
        rows = kit.bill_rows(body, VANDELAY.invoice_number)
        return kit.verdict([(VANDELAY_SAVED, bool(rows), url, rows[0] if rows else "none")], "the bills list")

    verifier = ScriptedLLM({"verifier": [Loop(policy=kit.LookUpBills("", check))]})
    person = Person(at_prompt)
    proxy = CountingProxy(erp.url)
    try:
        with Foreground(proxy.url, tmp_path, person) as place:
            place.taskcrew_run("Enter Vandelay Industries' invoice VI-3390.", worker, verifier)
    finally:
        proxy.close()
    assert len(person.asked) == 2 and seen.get("deleted"), (len(person.asked), seen)  # asked again; rows gone
    told = [c.last_tool_result for c in worker.calls if NOT_SENT_AGAIN in c.last_tool_result]
    jobs = Jobs.open()
    [job] = jobs.list()
    sends = len(_signed(Authority(jobs), "send", job.id))
    jobs.close()
    saves = proxy.count("POST", "/bills/new")
    assert saves == 1 and sends == 1, f"sent twice: the ERP received {saves} saves, {sends} signed sends"
    bills = [b for b in erp.state().bills if b.invoice_number == VANDELAY.invoice_number]
    assert len(bills) == 1, bills
    assert told, "the run was not told the repeat was held back"


def test_a_foreground_job_records_how_its_submitter_is_proven(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`taskcrew run` as ana with her personal token: the job says ``token`` (with her credential),
    as `taskcrew submit` says it, not the word of an OS user; an OS user is recorded as one. Two real
    `taskcrew run`s (a file question; the models scripted)."""
    from taskcrew.approvals.identity import TokenStore, os_user
    from taskcrew.console.auth import add_user

    users = tmp_path / "users.yaml"
    for name in ("ana", "bob"):
        add_user(users, name, f"{name}-secret-1")
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("ana", users))
    run_file_question()  # at ana's terminal, with her token
    monkeypatch.delenv("TASKCREW_TOKEN")
    run_file_question()  # at a terminal with no token: the operating-system user
    jobs = Jobs.open()
    said = {j.submitted_by: (j.submitted_proof, j.submitted_credential) for j in jobs.list()}
    jobs.close()
    assert said["ana"][0] == "token" and said["ana"][1], said
    assert said[os_user()] == ("os_user", None), said


@pytest.mark.parametrize("interrupted", [False, True])
def test_a_retry_interrupted_before_its_last_audit_entry_resumes_on_no_earlier_approval(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, interrupted: bool
) -> None:
    """What a retry of a finished job takes back (``void``) is signed before the job database
    changes (``retrying``): a Ctrl-C as the retry's last entry is written leaves the job queued on a
    new leg that asks again, never one that sends on the previous run's approval."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = _approved(jobs, authority)
    jobs.mark(job_id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    jobs.finish(job_id, "done", "paid", leg=0)  # the first run ended; its approval was for it
    assert jobs.get(job_id).status == "finished"

    if interrupted:
        real = AuditLog.append

        def append(self: AuditLog, who: str, action: str, target: str, payload: Any = None) -> Any:
            if action == "retry":
                raise KeyboardInterrupt  # Ctrl-C / SIGTERM lands as the retry's entry is written
            return real(self, who, action, target, payload)

        monkeypatch.setattr(AuditLog, "append", append)
        with pytest.raises(KeyboardInterrupt):
            authority.act_on_job(job_id, "retry", BOB)
        monkeypatch.setattr(AuditLog, "append", real)
    else:
        authority.act_on_job(job_id, "retry", BOB)

    leg = jobs.leg(job_id)
    assert jobs.get(job_id).status == "queued" and leg == 1  # the retry took effect either way
    jobs.mark(job_id, "running", only_if=("queued",), leg=leg, worker="w2", beat=True)
    gate = JobHuman(jobs, job_id).gate
    gate.holder = ("w2", leg)
    refused = gate.may_send("POST", PAY, PAID)
    jobs.close()
    assert refused is not None, "the started-over run sent on the previous run's approval (nobody asked)"
    assert "no signed approval" in refused, refused


def test_a_retry_interrupted_before_the_job_database_changes_only_holds_back(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side of the write-ahead: the signed entry is there, the job database was not
    changed. The job stays finished, the approvals stay void; the next retry runs it, asking again."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = _approved(jobs, authority)
    jobs.mark(job_id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    jobs.finish(job_id, "done", "paid", leg=0)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(Jobs, "retry", interrupted)
        with pytest.raises(KeyboardInterrupt):
            authority.act_on_job(job_id, "retry", BOB)
    assert (jobs.get(job_id).status, jobs.leg(job_id)) == ("finished", 0)
    [begun] = _signed(authority, "retrying", job_id)
    assert begun.payload["leg"] == 0 and begun.payload["void"]
    assert authority.leg_over(job_id, 0) is not None

    authority.act_on_job(job_id, "retry", BOB)  # not wedged: retried again, it runs
    jobs.mark(job_id, "running", only_if=("queued",), leg=1, worker="w2", beat=True)
    gate = JobHuman(jobs, job_id).gate
    gate.holder = ("w2", 1)
    assert gate.leg_refusal() is None
    assert gate.may_send("POST", PAY, PAID) is not None  # asks again
    jobs.close()


def test_a_cancel_the_job_database_refuses_after_its_entry_still_stops_every_leg_and_says_so(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cancel's entry is written; the job finishes before the database's cancel (a race). The
    cancel is refused by the database, the person is told it is recorded all the same, and a retry
    (the job is finished) lets it run again."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = _approved(jobs, authority)
    jobs.mark(job_id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    real = Jobs.cancel

    def finished_first(self: Jobs, job_id: str, *, by: str) -> Any:
        self.finish(job_id, "done", "the leg ended meanwhile", leg=0)
        return real(self, job_id, by=by)

    with monkeypatch.context() as patch:
        patch.setattr(Jobs, "cancel", finished_first)
        with pytest.raises(RecordedOnly) as refused:
            authority.act_on_job(job_id, "cancel", BOB)
    said = str(refused.value)
    assert "not changed" in said and "recorded in the signed audit log" in said, said
    assert isinstance(refused.value, InvalidChange)  # what the CLI and the console show
    assert jobs.get(job_id).status == "finished"
    assert "cancelled by bob" in (authority.leg_over(job_id, 0) or "")
    approval = jobs.approvals(job_id=job_id)[0].id
    assert approval in authority.void_decisions(job_id)

    authority.act_on_job(job_id, "retry", BOB)
    assert authority.leg_over(job_id, jobs.leg(job_id)) is None  # retried after the cancel: it runs
    jobs.close()


def test_a_retried_cancelled_job_whose_retry_entry_was_cut_off_ends_cancelled_not_wedged(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retry of a cancelled job lets its legs act again only once it is in the job database
    (``retry``, written last). Cut off before that entry, the new leg is still cancelled by the
    log; the worker that takes it up ends it cancelled, saying why, and a retry then runs it."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = _approved(jobs, authority)
    authority.act_on_job(job_id, "cancel", BOB)
    real = AuditLog.append

    def append(self: AuditLog, who: str, action: str, target: str, payload: Any = None) -> Any:
        if action == "retry":
            raise KeyboardInterrupt
        return real(self, who, action, target, payload)

    with monkeypatch.context() as patch:
        patch.setattr(AuditLog, "append", append)
        with pytest.raises(KeyboardInterrupt):
            authority.act_on_job(job_id, "retry", BOB)
    assert (jobs.get(job_id).status, jobs.leg(job_id)) == ("queued", 1)
    assert authority.leg_over(job_id, 1) is not None  # cancelled, and no retry done since

    settled = authority.settle(job_id, 1, "w2")  # what the worker that claims leg 1 does first
    assert settled is not None and "cancelled by bob" in settled, settled
    job = jobs.get(job_id)
    assert job.status == "cancelled" and "signed audit log" in job.reason, job.reason
    authority.act_on_job(job_id, "retry", BOB)
    assert authority.leg_over(job_id, jobs.leg(job_id)) is None
    jobs.close()


@pytest.mark.parametrize("replayed", [False, True])
def test_a_cancelled_job_set_back_and_taken_over_runs_no_new_leg(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, replayed: bool
) -> None:
    """A database writer sets a cancelled job's row back to "running on w1, leg 0"; w1 is silent, so
    another worker's own watch loop finds it orphaned. The cancel ends every leg of the job (not only
    leg 0): no leg 1 is paid for under the job's signed --auto-approve, nobody asked."""
    rules = yaml.safe_load(DEFAULT_RULES.read_text(encoding="utf-8"))
    rules["auto_approve"] = [{"identities": ["ana"], "paths": ["/bills/.*/pay"]}]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(tmp_path / "rules.yaml"))
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    jobs = Jobs.open(url)
    authority = Authority(jobs)
    job = jobs.submit(
        "Mark BILL-0004 paid", submitted_by="ana", options=JobOptions(auto_approve=True), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    saved = _row(jobs, job.id)  # the row as it was while leg 0 ran: signed
    authority.act_on_job(job.id, "cancel", BOB)  # bob cancels ana's job (signed)
    if replayed:
        _set_back(jobs, job.id, saved)
    watch(jobs, WorkerSettings(url=url, worker_id="w2", stale_after_s=0))  # w1 is silent
    leg = jobs.leg(job.id)
    assert jobs.get(job.id).status == "cancelled"  # the log's cancel, not a new leg on the queue
    assert authority.leg_over(job.id, leg + 1) is not None  # nor any leg after it
    claimed = jobs.mark(job.id, "running", only_if=("queued", "running"), leg=leg, worker="w2", beat=True)

    human = JobHuman(jobs, job.id, auto_approve=True)
    human.gate.holder = ("w2", leg)
    cleared = None
    if claimed is not None:
        try:
            if human.approve(_request(authority)).approved:
                cleared = human.gate.may_send("POST", PAY, PAID)
                cleared = "SENT" if cleared is None else cleared
        except BaseException as exc:  # Stopped: the leg stops, as it should
            cleared = f"stopped: {exc}"
    jobs.close()
    assert cleared != "SENT", f"cancelled job {job.id} paid on leg {leg} (auto-approved, nobody asked)"


def test_a_takeover_is_signed_before_the_job_moves_and_undone_when_the_database_refuses_it(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch loop records a takeover before it changes the job database. Refused there (the
    holder beat meanwhile: the compare-and-set changed nothing), it is recorded as undone and the
    holder acts on. A failure whose outcome is unknown leaves it standing: the leg stops, and the
    job is handed on to a new leg (``settle``), not left on a leg nobody may run."""
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    jobs = Jobs.open(url)
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    settings = WorkerSettings(url=url, worker_id="w2", stale_after_s=0)

    with monkeypatch.context() as patch:
        patch.setattr(Jobs, "take_over", lambda *a, **kw: None)  # the holder beat meanwhile
        watch(jobs, settings)
    [taken] = _signed(authority, "take_over", job.id)
    [undone] = _signed(authority, "take_over_undone", job.id)
    assert undone.payload["entry"] == taken.seq
    assert authority.leg_over(job.id, 0) is None and jobs.leg(job.id) == 0  # w1 acts on

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise sa.exc.OperationalError("UPDATE", {}, Exception("the database went away"))

    with monkeypatch.context() as patch:
        patch.setattr(Jobs, "take_over", fails)
        watch(jobs, settings)  # (the watch loop survives it)
    assert len(_signed(authority, "take_over", job.id)) == 2
    assert "taken over by worker w2" in (authority.leg_over(job.id, 0) or "")  # leg 0 stops
    settled = authority.settle(job.id, 0, "w1")  # what leg 0 does as it stops (``LegRunner._stopped``)
    assert settled is not None and "new leg" in settled, settled
    assert (jobs.get(job.id).status, jobs.leg(job.id)) == ("queued", 1)
    assert authority.leg_over(job.id, 1) is None
    jobs.close()


def test_a_live_holder_that_beats_while_a_takeover_is_written_ahead_keeps_its_leg(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch loop signs ``take_over`` before its compare-and-set; a holder that beats in between
    makes the compare-and-set fail, and the takeover is signed undone. A check of the leg in that
    window (its heartbeat, or the last check before a send) used to read the takeover and stop a live
    leg; it waits for the outcome. A takeover that went through still stops it, by the row."""
    import threading
    import time

    from taskcrew.approvals.worker import leg_refusal
    from taskcrew.jobs.worker import WorkerSettings, watch

    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    jobs = Jobs.open(url)
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", beat=True)
    settings = WorkerSettings(url=url, worker_id="w2", stale_after_s=0)
    signed, go_on = threading.Event(), threading.Event()
    compare_and_set = Jobs.take_over

    def slow(self: Jobs, *args: Any, **kwargs: Any) -> Any:
        signed.set()  # the takeover is in the signed log; its compare-and-set waits for the holder
        assert go_on.wait(10)
        return compare_and_set(self, *args, **kwargs)

    def holder_checks() -> list[str | None]:
        assert signed.wait(10)
        jobs.heartbeat(job.id, "w1")  # the holder beats: the compare-and-set will change nothing
        found: list[str | None] = []
        checking = threading.Thread(target=lambda: found.append(leg_refusal(authority, job.id, "w1", 0)))
        checking.start()
        time.sleep(0.3)  # the check reads the takeover while its outcome is not yet known
        go_on.set()
        checking.join(30)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(Jobs, "take_over", slow)
        watcher = threading.Thread(target=watch, args=(jobs, settings))
        watcher.start()
        found = holder_checks()
        watcher.join(30)
    assert len(_signed(authority, "take_over_undone", job.id)) == 1
    assert found == [None], f"a live leg was stopped by a takeover that did not happen: {found}"
    assert (jobs.get(job.id).status, jobs.leg(job.id)) == ("running", 0)

    signed.clear()
    go_on.clear()
    with monkeypatch.context() as patch:  # this time the holder stays silent: the takeover goes through
        patch.setattr(Jobs, "take_over", slow)
        watcher = threading.Thread(target=watch, args=(jobs, settings))
        watcher.start()
        assert signed.wait(10)
        found = []
        checking = threading.Thread(target=lambda: found.append(leg_refusal(authority, job.id, "w1", 0)))
        checking.start()
        go_on.set()
        checking.join(30)
        watcher.join(30)
    assert found and found[0] is not None and "no longer this leg's (queued, leg 1" in found[0], found
    jobs.close()


def test_a_batch_item_whose_job_id_is_taken_by_another_submission_is_an_error_not_skipped(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A child's id is the batch's and 64 bits of its item's fingerprint; an id already taken by
    another submission (a collision, injected here) is refused with why, never returned as if it
    were this item's job (which would then never be created)."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    template, items = "Enter {item}'s newest invoice", ["Initech", "Globex Corp"]
    batch = "batch-collided"
    taken = f"{batch}-{fingerprint({'item': 'Globex Corp'})[:ITEM_ID]}"
    jobs.submit("Enter Initech's newest invoice", submitted_by="eve", job_id=taken, enqueue=False)
    with pytest.raises(InvalidChange) as refused:
        submit_each(jobs, template, items, submitted_by="ana", batch_id=batch)
    assert "already another submission's" in str(refused.value) and "Globex" in str(refused.value)
    children = submit_each(jobs, template, items[:1], submitted_by="ana", batch_id=batch)
    again = submit_each(jobs, template, items[:1], submitted_by="ana", batch_id=batch)
    assert [c.id for c in again] == [c.id for c in children]  # the same submission: idempotent
    assert len(taken) - len(batch) - 1 == 16  # 64 bits of the item's fingerprint
    with pytest.raises(InvalidChange):  # the same id, another submitter
        jobs.submit(
            children[0].task, submitted_by="eve", parent_id=batch, item="Initech", job_id=children[0].id
        )
    jobs.close()
