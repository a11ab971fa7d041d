"""Intents against the real ERP: recorded before sending, read back before a repeat is sent."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fixtures_erp import NORTHWIND_2057, ErpUser

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.readback import load_rules


def test_a_repeat_is_sent_only_when_the_read_back_does_not_find_it(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    log = IntentLog(StoreIntents(jobs, job.id), job.id, rules)
    vendor_id = erp_user.vendor_ids()["Northwind Traders"]
    url = f"{erp.url}/bills/new"
    fields = [("csrf_token", "t1"), ("vendor_id", vendor_id)]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    assert log.before_send("POST", url, fields, fetch) is None  # first time: recorded, then sent
    [intent] = jobs.intents(job.id)
    assert intent.status == "recorded" and intent.payload.method == "POST"
    # no answer came (killed, or still on its way): the read-back finding nothing is not enough to
    # send it again; with nobody to approve the repeat, it is held back
    held = log.before_send("POST", url, [("csrf_token", "t2"), *fields[1:]], fetch)
    assert held is not None and "NOT sent again" in held, held
    # a person approves sending it again: a second attempt, the first one's record kept
    log.ask_again = lambda *a: True
    assert log.before_send("POST", url, [("csrf_token", "t2"), *fields[1:]], fetch) is None
    assert erp_user.new_bill().status_code == 303  # this time it went through
    log.after_send("POST", url, fields, SendOutcome(http_status=303))
    assert len(jobs.intents(job.id)) == 2
    # a resumed step tries again: the read-back finds the bill, nothing is sent
    refusal = log.before_send("POST", url, [("csrf_token", "t3"), *fields[1:]], fetch)
    assert refusal is not None and "NOT sent again" in refusal and "in the system" in refusal
    assert "confirmed" in {i.status for i in jobs.intents(job.id)}
    # a read-back that cannot tell (logged out: a login page, not the list) refuses rather than guesses
    refusal = log.before_send("POST", url, fields, lambda page: None)
    assert refusal is not None and "could not tell" in refusal
    # another job's intent is its own
    other = IntentLog(StoreIntents(jobs, "job-2"), "job-2", rules)
    assert other.before_send("POST", url, fields, lambda page: None) is None


def test_a_resend_a_person_approved_that_the_system_then_refused_is_retried_without_asking_her_twice(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    # the flake CI showed: killed mid-send, a person approved sending it again, the ERP answered that
    # one 503; the next try asked her again (the first attempt still counted as in doubt), so the job
    # parked a second time after her approval
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    vendor_id = erp_user.vendor_ids()["Northwind Traders"]
    url = f"{erp.url}/bills/new"
    fields = [("csrf_token", "t1"), ("vendor_id", vendor_id)]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    asked: list[str] = []

    def leg(approve: bool) -> IntentLog:  # each leg its own log over the job's records
        def ask(*a: object) -> bool:
            asked.append(str(a[3]))
            return approve

        return IntentLog(StoreIntents(jobs, job.id), job.id, rules, ask_again=ask)

    assert leg(False).before_send("POST", url, fields, fetch) is None  # sent; the worker is killed
    first = leg(True)
    assert first.before_send("POST", url, fields, fetch) is None and len(asked) == 1  # she approves
    first.after_send("POST", url, fields, SendOutcome(http_status=503))  # the system refuses it
    # not asked again: she judged the first attempt did not apply, and the second one was answered
    assert first.before_send("POST", url, fields, fetch) is None and len(asked) == 1
    first.after_send("POST", url, fields, SendOutcome(detail="timed out"))  # no answer this time
    # the third attempt may still land: a fourth is asked again, whoever approved the second
    held = leg(False).before_send("POST", url, fields, fetch)
    assert held is not None and "NOT sent again" in held and len(asked) == 2, held
    # a record taskcrew did not sign approves nothing: the one she approved, edited, is in doubt
    second = next(i for i in jobs.intents(job.id) if i.approved_again)
    with jobs.engine.begin() as conn:
        doc = json.loads(
            conn.execute(
                sa.text("SELECT doc FROM taskcrew_intents WHERE key = :k"), {"k": second.key}
            ).scalar()
        )
        doc["result"] = "answered HTTP 503"
        conn.execute(
            sa.text("UPDATE taskcrew_intents SET doc = :d WHERE key = :k"),
            {"d": json.dumps(doc), "k": second.key},
        )
    [forged] = [i for i in jobs.intents(job.id) if i.key == second.key]
    assert not forged.trusted and not forged.approved_again


class _Racing(StoreIntents):
    """Two legs of one job (a takeover while the old worker still runs) look at the same intent
    before either records it: each looks (under every key the request has had), then waits for the
    other to have looked too before it records its attempt."""

    def __init__(self, jobs: Jobs, job_id: str, looked: threading.Barrier) -> None:
        super().__init__(jobs, job_id)
        self.looked, self.waited = looked, False

    def claim(self, record: Any) -> Any:
        if not self.waited:  # the first record only (a leg that loses reads the winner's record)
            self.waited = True
            self.looked.wait(timeout=30)
        return super().claim(record)


def test_two_legs_that_both_find_no_intent_record_it_once_and_only_one_sends(tmp_path: Path) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    url, fields = "http://127.0.0.1:9/bills/new", [("vendor_id", "3"), ("amount", "1284.50")]
    looked = threading.Barrier(2)
    answers: list[str | None] = []

    def leg() -> None:
        log = IntentLog(_Racing(jobs, job.id, looked), job.id, [])  # no read-back rule
        answers.append(log.before_send("POST", url, fields, lambda page: None))

    legs = [threading.Thread(target=leg) for _ in range(2)]
    for thread in legs:
        thread.start()
    for thread in legs:
        thread.join(30)
    assert sorted(answers, key=str) == [None, answers[0] or answers[1]]  # one may send, one may not
    refusal = answers[0] or answers[1]
    assert refusal is not None and "another attempt of this job" in refusal and "NOT sent again" in refusal
    [intent] = jobs.intents(job.id)
    assert intent.status == "recorded"
    # the store's first record is atomic: a second one for the key returns the first, unchanged
    again = intent.model_copy(update={"status": "confirmed", "result": "forged"})
    assert jobs.add_intent(again) is not None
    assert jobs.intents(job.id)[0].status == "recorded"
    jobs.close()


def _approved(jobs: Jobs, authority: Authority, job_id: str, url: str, fields: list[tuple[str, str]]) -> str:
    """Park a POST of ``fields`` to ``url`` in the job and have bob approve it; its key."""
    key = authority.key_of("POST", url, fields)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        key=key,
    )
    approval = jobs.park(job_id, kind="approval", key=key, request=request)
    assert authority.decide(approval.id, "approve", Identity(name="bob", proof="console")).status == "decided"
    return key


def test_the_audit_log_says_send_only_of_what_left_the_browser(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser, isolated_home: Path
) -> None:
    """The worker's gate clears a payment before the intent log (``may_send``) and records the send
    as the intent log's last check (``sending``): a repeat the read-back holds back was approved but
    never sent, and the signed audit log (what a later leg takes as sent: ``sent_before``) says so.
    Before, the send was recorded when it was cleared, so the log said "send" twice for one bill."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False)
    url = f"{erp.url}/bills/new"
    fields = [("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]
    _approved(jobs, authority, job.id, url, fields)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", 0)
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    log = IntentLog(
        StoreIntents(jobs, job.id), job.id, rules, witness=gate.sent_before, last_check=gate.sending
    )

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    def sends() -> int:
        return len([e for e in authority.audit.signed("send") if e.payload.get("job_id") == job.id])

    assert gate.may_send("POST", url, fields) is None and sends() == 0  # cleared, not sent yet
    assert log.before_send("POST", url, fields, fetch) is None and sends() == 1  # on its way
    assert erp_user.new_bill().status_code == 303
    log.after_send("POST", url, fields, SendOutcome(http_status=303))
    assert gate.may_send("POST", url, fields) is None  # the model submits it again: still approved
    held = log.before_send("POST", url, fields, fetch)
    assert held is not None and "NOT sent again" in held and sends() == 1, held
    jobs.close()


def test_two_requests_cleared_at_once_each_record_their_own_send(tmp_path: Path, isolated_home: Path) -> None:
    """Playwright's sync API runs each route handler in a greenlet of its own on the one browser
    thread: while A's handler waits in its read-back, B's runs. Each handler's clearance is its own
    (before, a thread-local: A left while the audit log recorded B's send, and B was refused)."""
    import greenlet

    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Pay two bills", submitted_by="ana", enqueue=False)
    url = "http://127.0.0.1:9/bills/new"
    sent = {"A": [("amount", "10.00"), ("ref", "A")], "B": [("amount", "99999.00"), ("ref", "B")]}
    keys = {_approved(jobs, authority, job.id, url, fields): name for name, fields in sent.items()}
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", 0)
    said: dict[str, str | None] = {}
    main = greenlet.getcurrent()

    def handler(name: str) -> None:
        assert gate.may_send("POST", url, sent[name]) is None
        main.switch()  # waits in the intent log's read-back: the other request's handler runs
        said[name] = gate.sending()

    a, b = greenlet.greenlet(handler), greenlet.greenlet(handler)
    a.switch("A"), b.switch("B"), a.switch(), b.switch()
    assert said == {"A": None, "B": None}
    recorded = [
        keys[e.payload["key"]] for e in authority.audit.signed("send") if e.payload.get("job_id") == job.id
    ]
    assert recorded == ["A", "B"]
    jobs.close()


def test_a_resend_a_person_approved_that_never_left_leaves_the_first_attempt_in_doubt(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    url = f"{erp.url}/bills/new"
    fields = [("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    asked: list[str] = []
    sink = StoreIntents(jobs, job.id)
    assert IntentLog(sink, job.id, rules).before_send("POST", url, fields, fetch) is None  # then killed
    cancelled = IntentLog(
        sink, job.id, rules, last_check=lambda: "cancelled by bob", ask_again=lambda *a: not asked.append("1")
    )
    held = cancelled.before_send("POST", url, fields, fetch)  # she approves; the leg loses the job
    assert held is not None and "was not sent" in held
    later = IntentLog(sink, job.id, rules, ask_again=lambda *a: bool(asked.append("2")))
    held = later.before_send("POST", url, fields, fetch)  # the first attempt may still land: asked
    assert held is not None and "NOT sent again" in held and asked == ["1", "2"], held
    jobs.close()
