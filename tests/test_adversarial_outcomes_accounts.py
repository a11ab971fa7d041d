"""How a job accounts for what it sent, against a refused send "confirmed" and rows of the job
database deleted or added.

Found (red team): (1) when a repeat's read-back found the record, the intent log marked an earlier
attempt ``confirmed`` (saved) even when every earlier attempt had been refused: the ERP refused the
bill as a duplicate (a colleague had entered it), the model pressed Save again, the read-back found
the colleague's bill, and the retried leg reported "1 change(s) saved" and ended ``done`` instead of
``nothing_to_do`` (``jobs show`` listed the refused send as confirmed). (2) A resumed leg's account
read only the job database's intent rows: deleting the row of a saved payment made it "Nothing was
changed in any system", and a row nobody signed ("pay BILL-0009, 99999.00") made a job that sent
nothing ``done``, its answer naming the payment.

The rule now: the gate's classification of a definite answer (saved, refused, bounced, not sent) is
final; a read-back confirms the latest saved attempt, else the latest one whose answer nobody knows
and whose row the store vouches for, and when there is none, the record found is not this job's
change: the repeat is recorded as held back ("not sent"), never as a saved send
(``IntentLog._landed``). A resumed leg's account checks the rows against the job's sends in the
signed audit log (``tools.intents.reconcile``, ``StoreIntents.signed_sends``): a signed send no row
accounts for is a change whose answer nobody knows (may be saved); a row that does not check out and
matches no signed send is named as not counted, never as the job's change. A doubtful row still holds
a resend back, as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskcrew.approvals.authority import Authority
from taskcrew.crew.models import CriterionCheck, RunState, Verdict
from taskcrew.crew.outcome import Facts, decide, gather
from taskcrew.jobs import Jobs
from taskcrew.jobs.models import Intent
from taskcrew.jobs.runner import StoreIntents
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.intents import IntentLog, IntentRecord, SendOutcome
from taskcrew.tools.readback import ReadBack, ReadBackRules

ERP = "http://erp.test"
NEW = f"{ERP}/bills/new"
BILL = [("vendor_id", "2"), ("invoice_number", "GX-5531"), ("amount", "2150.00"), ("currency", "USD")]
LISTED = "<table><tr><td>BILL-0003</td><td>Globex Corp</td><td>GX-5531</td><td>2150.00 USD</td></tr></table>"
EMPTY = "<table></table>"
RULES = ReadBackRules(
    rules=[ReadBack(target=NEW, read_back=f"{ERP}/bills?vendor={{vendor_id}}", identify=["invoice_number"])]
)
PAY = f"{ERP}/bills/BILL-0005/pay"
PAYMENT = [("amount", "980.00"), ("paid_on", "2026-10-02")]
FORGED_URL = f"{ERP}/bills/BILL-0009/pay"
FORGED = [("amount", "99999.00"), ("paid_on", "2026-10-02")]


class MemorySink:
    def __init__(self) -> None:
        self.rows: dict[str, IntentRecord] = {}

    def get(self, key: str) -> IntentRecord | None:
        row = self.rows.get(key)
        return None if row is None else row.model_copy(deep=True)

    def put(self, record: IntentRecord) -> None:
        self.rows[record.key] = record.model_copy(deep=True)

    def claim(self, record: IntentRecord) -> IntentRecord | None:
        if record.key in self.rows:
            return self.rows[record.key]
        self.put(record)
        return None

    def records(self) -> list[IntentRecord]:
        return sorted(self.rows.values(), key=lambda r: r.at)


class Resumed:
    """A retried leg that sends nothing: it reads the job's facts from the same sink."""

    def __init__(self, sink: object) -> None:
        self.sink, self.mine = sink, set[str]()


def later() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=1)


def verified(claim: str = "done") -> RunState:
    check = CriterionCheck(criterion="the bill is there", met=True, source=f"{ERP}/bills", observed="GX-5531")
    return RunState(
        outcome="done",
        outcome_reason="the bill is in the ERP",
        claim=claim,  # type: ignore[arg-type]
        verdicts=[Verdict(verified=True, checks=[check], reason="there")],
    )


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path) -> Iterator[tuple[Jobs, Authority, Path]]:
    db = tmp_path / "jobs.sqlite3"
    jobs = Jobs.open(f"sqlite:///{db}")
    yield jobs, Authority(jobs), db
    jobs.close()


def durable_leg(
    jobs: Jobs, authority: Authority, job_id: str, rules: ReadBackRules | None = None
) -> IntentLog:
    """As ``jobs/foreground.py`` wires a leg: every send signed as it leaves, read back as a witness."""
    return IntentLog(
        StoreIntents(jobs, job_id),
        job_id,
        rules or ReadBackRules(),
        witness=lambda m, u, f: authority.sent_before(job_id, m, u, f),
        leaving=lambda m, u, f: authority.record_send(job_id, authority.key_of(m, u, f), m, u, job_id),
    )


def send(
    log: IntentLog, url: str, fields: list[tuple[str, str]], outcome: SendOutcome, page: str = EMPTY
) -> None:
    assert log.before_send("POST", url, fields, lambda u: page) is None
    log.after_send("POST", url, fields, outcome)


def delete_rows(db: Path, job_id: str) -> None:
    """Someone with write access to the job database (not the signing key) removes the job's rows."""
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))


def add_row(db: Path, job_id: str, key: str, url: str, fields: list[tuple[str, str]], **said: object) -> None:
    """Someone with write access to the job database adds a row nobody signed."""
    intent = Intent(
        key=key,
        job_id=job_id,
        target=url,
        payload=ApprovalRequest(
            kind="form_submission",
            method="POST",
            url=url,
            fields=[FieldValue(name=n, value=v) for n, v in fields],
        ),
        recorded_at=datetime.now(UTC) - timedelta(hours=1),
        sig="not-a-signature",
        **{"status": "sent", "result": "answered HTTP 303", "seen": "saved", **said},  # type: ignore[arg-type]
    )
    with sqlite3.connect(str(db)) as conn:
        conn.execute(
            "INSERT INTO taskcrew_intents (key, job_id, doc) VALUES (?, ?, ?)",
            (key, job_id, intent.model_dump_json()),
        )


# ---- a read-back does not confirm a refused send ---------------------------------------------------


@pytest.mark.parametrize(
    "refused",
    [
        SendOutcome(http_status=422, seen="refused", reason="invoice GX-5531 already exists"),
        SendOutcome(http_status=302, location="/login", seen="bounced"),
        SendOutcome(detail="connect ECONNREFUSED 127.0.0.1:8800", seen="not_sent"),
    ],
    ids=["refused", "bounced", "not_sent"],
)
def test_a_read_back_of_a_record_the_job_did_not_make_is_not_a_saved_change(refused: SendOutcome) -> None:
    sink = MemorySink()
    leg = IntentLog(sink, "job-1", RULES)
    send(leg, NEW, BILL, refused, LISTED)
    # the model presses Save again: the read-back finds the colleague's bill, and it is held back
    held = leg.before_send("POST", NEW, BILL, lambda u: LISTED)
    assert held is not None and "NOT sent again" in held and "not this job's change" in held, held
    first, repeat = sink.records()
    assert first.status == "not_applied" and first.seen == refused.seen  # the gate's answer stands
    assert repeat.seen == "not_sent" and not repeat.left  # recorded as held back, never "confirmed"
    facts = gather([], Resumed(sink), later())  # the worker dies; the retried leg sends nothing
    assert not facts.changed_something, facts.changed_line()
    assert decide(verified(), facts)[0] == "nothing_to_do"


def test_a_refused_duplicate_read_back_is_not_listed_confirmed_in_the_job_store(
    world: tuple[Jobs, Authority, Path],
) -> None:
    jobs, authority, _ = world
    job = jobs.submit("Enter Globex GX-5531", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id, RULES)
    send(leg, NEW, BILL, SendOutcome(http_status=422, seen="refused", reason="duplicate"), LISTED)
    assert leg.before_send("POST", NEW, BILL, lambda u: LISTED) is not None
    assert "confirmed" not in {i.status for i in jobs.intents(job.id)}  # what `jobs show` lists
    facts = gather([], durable_leg(jobs, authority, job.id, RULES), later())
    assert not facts.changed_something, facts.changed_line()


def test_a_row_nobody_signed_is_not_confirmed_by_a_read_back(world: tuple[Jobs, Authority, Path]) -> None:
    """A forged row "in doubt" for a bill that is already in the ERP: a read-back would have re-signed
    it as this job's saved send."""
    jobs, authority, db = world
    job = jobs.submit("Enter Globex GX-5531", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id, RULES)
    add_row(db, job.id, leg_key(leg, BILL), NEW, BILL, status="recorded", result=None, seen=None)
    held = leg.before_send("POST", NEW, BILL, lambda u: LISTED)
    assert held is not None and "NOT sent again" in held
    assert not [i for i in jobs.intents(job.id) if i.trusted and i.status == "confirmed"]
    facts = gather([], durable_leg(jobs, authority, job.id, RULES), later())
    assert not facts.changed_something, facts.changed_line()


def leg_key(leg: IntentLog, fields: list[tuple[str, str]], url: str = NEW) -> str:
    from taskcrew.tools.intents import intent_key

    return intent_key(leg.scope, "POST", url, fields, leg.risk)


# ---- the account checks the rows against the signed audit log ------------------------------------


def test_a_deleted_row_does_not_erase_a_saved_payment_from_the_resumed_account(
    world: tuple[Jobs, Authority, Path],
) -> None:
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    send(durable_leg(jobs, authority, job.id), PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    delete_rows(db, job.id)
    resumed = durable_leg(jobs, authority, job.id)
    facts = gather([], resumed, later())
    assert facts.changed_something and "BILL-0005/pay" in facts.changed_line(), facts.changed_line()
    assert decide(verified(), facts)[0] == "done"
    # and it is still never sent twice: the signed send holds the repeat back
    held = resumed.before_send("POST", PAY, PAYMENT, lambda u: None)
    assert held is not None and "NOT sent again" in held


def test_a_deleted_row_is_found_even_beside_a_refused_attempt_of_the_same_payment(
    world: tuple[Jobs, Authority, Path],
) -> None:
    """Two attempts, two signed sends: the saved one's row deleted, the refused one's kept."""
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id)
    send(leg, PAY, PAYMENT, SendOutcome(http_status=422, seen="refused"))
    send(leg, PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ? AND key LIKE '%.2'", (job.id,))
    assert len(jobs.intents(job.id)) == 1
    facts = gather([], durable_leg(jobs, authority, job.id), later())
    assert facts.changed_something, facts.changed_line()


def test_a_deleted_row_beside_a_refused_attempt_still_holds_the_payment_back(
    world: tuple[Jobs, Authority, Path],
) -> None:
    """The refused attempt's row kept, the saved one's deleted: the signed log has two sends and the
    rows account for one, so the repeat is not a second payment (before: sent again, as if the
    refused attempt were the last)."""
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id)
    send(leg, PAY, PAYMENT, SendOutcome(http_status=422, seen="refused"))
    send(leg, PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ? AND key LIKE '%.2'", (job.id,))
    resumed = durable_leg(jobs, authority, job.id)
    held = resumed.before_send("POST", PAY, PAYMENT, lambda u: None)
    assert held is not None and "NOT sent again" in held, held
    # with a read-back rule that finds it paid: confirmed as the job's change, not sent
    rules = ReadBackRules(
        rules=[ReadBack(target=PAY, read_back=f"{ERP}/bills/BILL-0005", identify=["amount"])]
    )
    again = durable_leg(jobs, authority, job.id, rules)
    held = again.before_send("POST", PAY, PAYMENT, lambda u: "<p>Paid 980.00 on 2026-10-02</p>")
    assert held is not None and "NOT sent again" in held, held


def test_a_row_added_to_the_database_is_not_reported_as_the_jobs_send(
    world: tuple[Jobs, Authority, Path],
) -> None:
    jobs, authority, db = world
    job = jobs.submit("Check whether BILL-0005 is paid", submitted_by="ana", enqueue=False)
    add_row(db, job.id, "k-forged", FORGED_URL, FORGED)
    leg = durable_leg(jobs, authority, job.id)
    facts = gather([], leg, datetime.now(UTC))
    line = facts.changed_line()
    assert not facts.changed_something and "99999" not in line, line
    assert "Nothing was changed in any system" in line and "Not counted: 1 record(s)" in line, line
    assert decide(verified(claim="nothing_to_do"), facts)[0] == "nothing_to_do"


def test_a_row_nobody_signed_still_holds_a_resend_back(world: tuple[Jobs, Authority, Path]) -> None:
    """Not this job's change in the account, yet a repeat of it is not sent without a person."""
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0009", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id)
    add_row(db, job.id, leg_key(leg, FORGED, FORGED_URL), FORGED_URL, FORGED)
    held = leg.before_send("POST", FORGED_URL, FORGED, lambda u: None)
    assert held is not None and "NOT sent again" in held, held
    assert authority.sent_before(job.id, "POST", FORGED_URL, FORGED) is None  # nothing left


def test_an_edited_row_of_a_signed_send_is_still_a_change_that_may_be_saved(
    world: tuple[Jobs, Authority, Path],
) -> None:
    """The row of a saved payment rewritten "refused" (its signature no longer checks out): the signed
    send vouches that it left, so it is an answer nobody knows, never "nothing changed"."""
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id)
    send(leg, PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    key = leg_key(leg, PAYMENT, PAY)
    delete_rows(db, job.id)
    add_row(
        db,
        job.id,
        key,
        PAY,
        PAYMENT,
        status="not_applied",
        result="answered HTTP 422 — refused",
        seen="refused",
    )
    facts = gather([], durable_leg(jobs, authority, job.id), later())
    assert [s.result for s in facts.submissions] == ["unknown"]
    assert "may be saved" in facts.changed_line() and "Not counted" not in facts.changed_line()


# ---- honest controls -------------------------------------------------------------------------------


def test_a_saved_send_read_back_after_the_worker_died_is_still_saved(
    world: tuple[Jobs, Authority, Path],
) -> None:
    jobs, authority, _ = world
    job = jobs.submit("Enter Globex GX-5531", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id, RULES)
    send(leg, NEW, BILL, SendOutcome(http_status=303, seen="saved"))
    held = leg.before_send("POST", NEW, BILL, lambda u: LISTED)  # the retried step: read back, found
    assert held is not None and "already sent" in held
    assert [i.status for i in jobs.intents(job.id)] == ["confirmed"]
    facts = gather([], durable_leg(jobs, authority, job.id, RULES), later())
    assert len(facts.saved) == 1 and not facts.unknown, facts.changed_line()
    assert decide(verified(), facts)[0] == "done"


def test_a_send_with_no_answer_found_by_its_read_back_is_confirmed(
    world: tuple[Jobs, Authority, Path],
) -> None:
    jobs, authority, _ = world
    job = jobs.submit("Enter Globex GX-5531", submitted_by="ana", enqueue=False)
    killed = durable_leg(jobs, authority, job.id, RULES)
    assert killed.before_send("POST", NEW, BILL, lambda u: EMPTY) is None  # the worker dies mid-send
    resumed = durable_leg(jobs, authority, job.id, RULES)
    held = resumed.before_send("POST", NEW, BILL, lambda u: LISTED)
    assert held is not None and "NOT sent again" in held
    assert [i.status for i in jobs.intents(job.id)] == ["confirmed"]
    facts = gather([], durable_leg(jobs, authority, job.id, RULES), later())
    assert len(facts.saved) == 1, facts.changed_line()


def test_a_resumed_leg_reports_its_change_once(world: tuple[Jobs, Authority, Path]) -> None:
    jobs, authority, _ = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    send(durable_leg(jobs, authority, job.id), PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    facts = gather([], durable_leg(jobs, authority, job.id), later())
    assert len(facts.submissions) == 1 and len(facts.saved) == 1
    assert facts.changed_line() == f"1 change(s) saved: POST {PAY} [amount=980.00, paid_on=2026-10-02]"


def test_an_attempt_its_last_check_stopped_accounts_for_no_signed_send(
    world: tuple[Jobs, Authority, Path],
) -> None:
    """An attempt held back before it left has no signed send: it does not stand in for a later
    attempt's send whose row was deleted."""
    jobs, authority, db = world
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    leg = durable_leg(jobs, authority, job.id)
    leg.last_check = lambda: "the job was cancelled"
    assert leg.before_send("POST", PAY, PAYMENT, lambda u: None) is not None
    leg.last_check = None
    send(leg, PAY, PAYMENT, SendOutcome(http_status=303, seen="saved"))
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ? AND key LIKE '%.2'", (job.id,))
    facts = gather([], durable_leg(jobs, authority, job.id), later())
    assert facts.changed_something, facts.changed_line()


def test_a_plain_sink_without_a_signed_log_is_read_as_before() -> None:
    sink = MemorySink()
    send(IntentLog(sink, "job-1", RULES), NEW, BILL, SendOutcome(http_status=303, seen="saved"))
    assert (
        Facts(submissions=gather([], Resumed(sink), later()).submissions)
        .changed_line()
        .startswith("1 change(s) saved")
    )
