"""State a version before request keys kept the fields' order left behind, read by today's code.

Found (red team, upgrade seam 5cd6add -> e286939): request keys went from sorted fields to the order
sent, and nothing read state keyed the old way. A send in doubt recorded by a worker of the previous
version (intent row recorded, no answer; its signed send in the audit log) was not found by today's
intent log: the upgraded worker sent it again as a first attempt (an --auto-approve job with nobody
asked). And an approval given before the upgrade for exactly the same request was voided without a
word: the approver was asked again with no reason.

The rule now (``approvals/key.py``): keys are versioned. An earlier attempt of a send (intent rows,
signed sends) is looked for under every key the request has had (``request_keys``); an approval is
never honoured by a legacy key (the rows of a form re-paired by the page have the same sorted key),
only when the request it stored, keyed by today's rule, is this one (``WorkerGate._covers``); otherwise the
person is asked again and told why.

The old state is written here as the previous version wrote it, through the real job database and
audit log, under the keys the key module's legacy rule (``LEGACY``) makes; today's code then runs
through its real paths (``JobHuman``, ``WorkerGate``, ``IntentLog`` on ``StoreIntents``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_erp import NORTHWIND_2057, ErpUser, erp_state

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.key import LEGACY, request_key
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.intents import NOT_SENT_AGAIN, IntentLog, IntentRecord
from taskcrew.tools.readback import ReadBackRules, load_rules

BOB = Identity(name="bob", proof="console")
URL = "http://erp.example/bills/new"
# a bill of two rows, in the page's order (not sorted) ...
ROWS = [
    ("vendor_id", "3"),
    ("invoice_number", "INV-7"),
    ("description", "Freight"),
    ("amount", "100.00"),
    ("description", "Pallets"),
    ("amount", "900.00"),
]
# ... and the same rows with their amounts swapped (re-paired by a page at submit): sorted, one key
SWAPPED = [ROWS[0], ROWS[1], ROWS[2], ("amount", "900.00"), ROWS[4], ("amount", "100.00")]


def request_of(url: str, fields: list[tuple[str, str]], key: str = "") -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        key=key,
    )


def legacy_key(authority: Authority, url: str, fields: list[tuple[str, str]], scope: str = "") -> str:
    """The key the previous version made of this request (its fields sorted)."""
    excluded = authority.rules.excluded_for(url)
    return request_key("POST", url, fields, excluded=excluded, scope=scope, version=LEGACY)


def old_decision(
    jobs: Jobs, authority: Authority, job_id: str, url: str, stored: list[tuple[str, str]], action: str
) -> str:
    """A decision the previous version parked and signed: the request stored as built (in the page's
    order), under the key that version made of it."""
    key = legacy_key(authority, url, stored)
    approval = jobs.park(job_id, kind="approval", key=key, request=request_of(url, stored, key))
    assert authority.decide(approval.id, action, BOB).status == "decided"  # type: ignore[arg-type]
    return approval.id


def resumed(jobs: Jobs, authority: Authority, job_id: str, leg: int, *, auto: bool = False) -> JobHuman:
    """The upgraded worker's leg of the job (today's code), as ``LegRunner`` wires it."""
    assert jobs.mark(job_id, "running", only_if=("queued",), leg=leg, worker="w2") is not None
    human = JobHuman(jobs, job_id, authority=authority, auto_approve=auto)
    human.gate.holder = ("w2", leg, None)
    return human


# --- an approval given before the upgrade -------------------------------------------------------


def test_an_approval_stored_for_exactly_this_request_is_honoured(tmp_path: Path, isolated_home: Path) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    old = old_decision(jobs, authority, job.id, URL, ROWS, "approve")
    assert legacy_key(authority, URL, ROWS) != authority.key_of("POST", URL, ROWS)  # the keys differ
    human = resumed(jobs, authority, job.id, 0)

    decision = human.approve(request_of(URL, ROWS))  # the run reaches the very request bob approved
    assert decision.approved and decision.basis == "resumed"
    assert [a.id for a in jobs.approvals(job_id=job.id)] == [old]  # nobody asked again
    assert human.gate.may_send("POST", URL, ROWS) is None  # the send check honours it too
    jobs.close()


def test_an_approval_under_the_legacy_key_of_another_order_is_not_honoured_and_the_reask_says_why(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Bob approved the rows as the page first showed them (SWAPPED); the run now sends ROWS: the
    legacy key is the same (sorted), the request is not."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    old = old_decision(jobs, authority, job.id, URL, SWAPPED, "approve")
    assert legacy_key(authority, URL, SWAPPED) == legacy_key(authority, URL, ROWS)
    human = resumed(jobs, authority, job.id, 0)

    assert human.gate.may_send("POST", URL, ROWS) is not None  # not sent on bob's approval of SWAPPED
    with pytest.raises(Parked) as parked:
        human.approve(request_of(URL, ROWS))
    asked = jobs.approval(parked.value.approval_id)
    assert asked.id != old
    assert asked.key == authority.key_of("POST", URL, ROWS)
    said = asked.request.asked_again if asked.request else None
    assert said is not None and "previous version" in said and old in said, said
    assert human.gate.may_send("POST", URL, SWAPPED) is None  # what bob approved, as he saw it
    jobs.close()


def test_a_rejection_stored_for_exactly_this_request_stands(tmp_path: Path, isolated_home: Path) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    old_decision(jobs, authority, job.id, URL, ROWS, "reject")
    human = resumed(jobs, authority, job.id, 0)
    decision = human.gate.decision(authority.key_of("POST", URL, ROWS), request_of(URL, ROWS))
    assert decision is not None and decision.status == "rejected"
    assert human.gate.may_send("POST", URL, ROWS) is not None
    jobs.close()


# --- a send in doubt recorded before the upgrade -------------------------------------------------


def old_send_in_doubt(
    jobs: Jobs, authority: Authority, url: str, fields: list[tuple[str, str]], *, auto: bool, row: bool = True
) -> str:
    """What a worker of the previous version left: the job approved (by bob, or --auto-approve), its
    attempt recorded under the legacy keys, the send signed in the audit log under its legacy key, no
    answer (the worker died on the way); the leg is handed back."""
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False,
                      options=JobOptions(auto_approve=auto))  # fmt: skip
    send_key = legacy_key(authority, url, fields)
    target = job.id if auto else old_decision(jobs, authority, job.id, url, fields, "approve")
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1") is not None
    if row:
        record = IntentRecord(
            key=legacy_key(authority, url, fields, scope=job.id), method="POST", url=url, fields=fields,
            send_key=send_key,
        )  # fmt: skip
        assert StoreIntents(jobs, job.id).claim(record) is None
    authority.record_send(job.id, send_key, "POST", url, target)
    assert jobs.hand_back(job.id, 0, "w1", "the worker stopped", leg_ends=True)
    return job.id


def northwind(erp_user: ErpUser) -> tuple[str, list[tuple[str, str]]]:
    fields = [("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]  # the page's order
    assert fields != sorted(fields)
    return "/bills/new", fields


@pytest.mark.parametrize("landed", [True, False], ids=["it-landed", "it-did-not-land"])
def test_a_send_in_doubt_from_the_previous_version_is_found_not_sent_again(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser, isolated_home: Path, landed: bool
) -> None:
    """Landed: the read-back finds it and the old attempt is confirmed; not landed: it may still
    arrive, so a person is asked, told so (she says no here). Never a fresh first send."""
    page, fields = northwind(erp_user)
    url = f"{erp.url}{page}"
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = old_send_in_doubt(jobs, authority, url, fields, auto=False)
    if landed:
        assert erp_user.new_bill().status_code == 303
    bills = len(erp_state(erp).bills)
    human = resumed(jobs, authority, job_id, 1)
    assert human.approve(request_of(url, fields)).approved  # bob's approval, carried over
    asked: list[str] = []

    def ask_again(method: str, u: str, f: list[tuple[str, str]], attempt: str, warning: str) -> bool:
        asked.append(warning)
        return False

    log = IntentLog(
        StoreIntents(jobs, job_id, authority),
        job_id,
        load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url}),
        witness=human.gate.sent_before,
        last_check=human.gate.sending,
        ask_again=ask_again,
    )

    def fetch(at: str) -> str | None:
        response = erp_user.http.get(at)
        return response.text if response.status_code == 200 else None

    assert human.gate.may_send("POST", url, fields) is None
    said = log.before_send("POST", url, fields, fetch)
    assert said is not None and "NOT sent again" in said, said
    if landed:
        assert NOT_SENT_AGAIN in said and not asked
        [row] = jobs.intents(job_id)
        assert row.status == "confirmed"  # the old attempt, under its legacy key
    else:
        assert len(asked) == 1 and "MAY STILL APPLY" in asked[0]
    assert len(authority.sends_of(job_id)) == 1  # only the old worker's send
    assert len(erp_state(erp).bills) == bills
    jobs.close()


@pytest.mark.parametrize("row", [True, False], ids=["its-row", "its-row-lost"])
def test_an_auto_approved_job_asks_a_person_before_sending_again_what_the_previous_version_sent(
    tmp_path: Path, isolated_home: Path, row: bool
) -> None:
    """No read-back rule: the earlier attempt (its row, or only its signed send when the row is gone)
    holds the repeat back, though --auto-approve approved the request again under today's key; and the
    witness of a run without the job database's rows (``Authority.sent_before``) reads the send too."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job_id = old_send_in_doubt(jobs, authority, URL, ROWS, auto=True, row=row)
    human = resumed(jobs, authority, job_id, 1, auto=True)
    assert human.approve(request_of(URL, ROWS)).approved  # --auto-approve, under today's key
    gate = human.gate
    log = IntentLog(
        StoreIntents(jobs, job_id, authority),
        job_id,
        ReadBackRules(),
        witness=gate.sent_before,
        last_check=gate.sending,
        ask_again=lambda *asked: human.approve(gate.again(*asked)).approved,
    )
    assert gate.may_send("POST", URL, ROWS) is None
    said = log.before_send("POST", URL, ROWS, lambda at: None)
    assert said is not None and "NOT sent again" in said, said
    assert len(authority.sends_of(job_id)) == 1
    assert authority.sent_before(job_id, "POST", URL, ROWS) is not None  # the witness reads it too
    jobs.close()
