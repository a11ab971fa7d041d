# ruff: noqa: F811 — the fixture env is imported from test_changed_payee_s45
"""Keys, approvals and earlier attempts after a3111bd (red team, rt_bypass8).

1. No version is hashed into a key, so the key the previous version made of a request (its fields
   sorted) is today's key of those fields sorted: a pre-upgrade approval of "Freight 900.00, Pallets
   100.00" was honoured by key equality for a page that sent the same pairs grouped and sorted (read by
   position: Freight 100.00, Pallets 900.00). Now an approval that stores its request covers a key
   only when today's key of that request is the key (``WorkerGate._covers``), and a decision given
   under today's rule is never said to be one given before the upgrade.
2. Every key depended on the ``excluded_fields`` in force when it was looked up: an ordinary edit of
   the rules between two legs made a send in doubt a first attempt again. Now an earlier attempt is
   looked for whatever the rules left out when it was keyed (intent rows by what they stored,
   ``approvals.key.earlier_attempt``; signed sends by the exclusions recorded with them).
3. A durable job whose record changed before every resume parked again and again, each re-ask naming
   the oldest approval's reading. Now the newest approval's reading is named, and past the terminal's
   limit (``REASKS``) the request is not sent, saying why.

Real job database, audit log, ERP over HTTP; no model is involved."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_changed_payee_s45 import _asked, _park, _token, env, runner  # noqa: F401 (fixture)
from test_key_versions_s45 import BOB, ROWS, SWAPPED, URL, northwind, old_decision, request_of, resumed

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.key import LEGACY_ASKED_AGAIN
from taskcrew.approvals.rules import DEFAULT_RULES
from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import FieldValue
from taskcrew.tools.intents import IntentLog, IntentRecord, intent_key
from taskcrew.tools.policy import REASKS, Submission
from taskcrew.tools.readback import ReadBackRules, load_rules

REGROUPED = sorted(SWAPPED)  # the same pairs grouped by name: read by position, other rows
NARROWED = (
    "hosts: ['127.0.0.1:*', 'localhost:*']\n    fields: ['csrf_token']",
    "hosts: ['127.0.0.1:8000', 'localhost:8000']\n    fields: ['csrf_token']",
)


def _store(tmp_path: Path) -> Jobs:
    return Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")


# --- 1: an approval covers only the request it stored, keyed by today's rule -------------------------


def test_a_pre_upgrade_approval_is_not_honoured_for_its_rows_regrouped_and_the_reask_says_why(
    tmp_path: Path, isolated_home: Path
) -> None:
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    old_decision(jobs, authority, job.id, URL, SWAPPED, "approve")  # Freight 900.00, Pallets 100.00
    assert authority.key_of("POST", URL, REGROUPED) == jobs.approvals(job_id=job.id)[0].key  # the collision
    human = resumed(jobs, authority, job.id, 0)

    assert human.gate.may_send("POST", URL, REGROUPED) is not None
    with pytest.raises(Parked) as parked:
        human.approve(request_of(URL, REGROUPED))
    asked = jobs.approval(parked.value.approval_id)
    assert asked.request is not None and asked.request.asked_again
    assert asked.request.asked_again.startswith(LEGACY_ASKED_AGAIN.split("{who}")[0])
    jobs.close()


def test_a_decision_given_today_is_never_said_to_be_given_before_the_upgrade(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Bob approved the grouped rows today; the run now sends the rows in the page's order (whose
    sorted key is the key of bob's approval): asked again as a new request, not "before the upgrade"."""
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    key = authority.key_of("POST", URL, REGROUPED)
    approval = jobs.park(job.id, kind="approval", key=key, request=request_of(URL, REGROUPED, key))
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    human = resumed(jobs, authority, job.id, 0)
    assert human.gate.may_send("POST", URL, REGROUPED) is None  # it covers what it stored

    assert human.gate.may_send("POST", URL, ROWS) is not None
    with pytest.raises(Parked) as parked:
        human.approve(request_of(URL, ROWS))
    asked = jobs.approval(parked.value.approval_id)
    assert asked.request is not None and "before the upgrade" not in (asked.request.asked_again or "")
    jobs.close()


def test_an_approval_of_a_chosen_option_covers_the_request_it_stored(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A select's value is stored as "3 (Northwind Traders)" with its text in ``label``: the stored
    request is keyed as it was sent ("3")."""
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    key = authority.key_of("POST", URL, ROWS)
    shown = request_of(URL, ROWS, key)
    shown.fields[0] = FieldValue(name="vendor_id", value="3 (Northwind Traders)", label="Northwind Traders")
    approval = jobs.park(job.id, kind="approval", key=key, request=shown)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    human = resumed(jobs, authority, job.id, 0)
    assert human.gate.may_send("POST", URL, ROWS) is None
    jobs.close()


# --- 2: an earlier attempt is found whatever the rules left out when it was keyed --------------------


def _rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rules = tmp_path / "rules.yaml"
    rules.write_text(DEFAULT_RULES.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(rules))
    return rules


def _narrow(rules: Path) -> None:
    """The operator narrows the csrf_token rule to the port the ERP is documented on (an ordinary edit,
    read live by the running worker)."""
    text = rules.read_text(encoding="utf-8")
    assert NARROWED[0] in text
    rules.write_text(text.replace(*NARROWED), encoding="utf-8")


def _leg0_sent(
    jobs: Jobs, authority: Authority, job_id: str, url: str, fields: list[tuple[str, str]], target: str
) -> None:
    """Leg 0 recorded its attempt and sent it (signed); no answer came back; the worker stopped."""
    key = authority.key_of("POST", url, fields)
    record = IntentRecord(
        key=intent_key(job_id, "POST", url, fields), method="POST", url=url, fields=fields, send_key=key
    )
    assert StoreIntents(jobs, job_id, authority).claim(record) is None
    authority.record_send(job_id, key, "POST", url, target)
    assert jobs.hand_back(job_id, 0, "w1", "the worker stopped", leg_ends=True)


def test_a_signed_send_is_found_by_sent_before_after_the_rules_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    url = "http://127.0.0.1:8800/bills/new"
    fields = [("csrf_token", "t-1"), ("vendor_id", "1"), ("invoice_number", "INV-7"), ("amount", "900.00")]
    authority.record_send(job.id, authority.key_of("POST", url, fields), "POST", url, job.id)
    _narrow(rules)
    assert authority.sent_before(job.id, "POST", url, fields) is not None  # the same bytes
    again = [("csrf_token", "t-2"), *fields[1:]]  # the next leg's page: a new token
    assert authority.sent_before(job.id, "POST", url, again) is not None
    assert authority.sent_before(job.id, "POST", url, [*again[:3], ("amount", "90.00")]) is None
    jobs.close()


@pytest.mark.parametrize("row_kept", [True, False], ids=["row-kept", "row-deleted"])
def test_a_send_in_doubt_is_not_a_first_attempt_after_the_rules_edit(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    erp: ErpServer,
    erp_user: Any,
    row_kept: bool,
) -> None:
    """Leg 0 sent bob's approved Northwind bill (csrf_token left out of its key); no answer. The
    operator narrows the csrf_token rule; leg 1 builds the page again (a new token), bob approves it
    again (the key changed): the intent log finds leg 0's attempt (its row, or only its signed send)."""
    rules = _rules(tmp_path, monkeypatch)
    page, fields = northwind(erp_user)
    url = f"{erp.url}{page}"
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False)
    sent = [("csrf_token", "tok-leg0"), *fields]
    key = authority.key_of("POST", url, sent)
    approval = jobs.park(job.id, kind="approval", key=key, request=request_of(url, sent, key))
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1") is not None
    _leg0_sent(jobs, authority, job.id, url, sent, approval.id)
    if not row_kept:
        with sqlite3.connect(tmp_path / "jobs.sqlite3") as db:
            db.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job.id,))
    _narrow(rules)

    human = resumed(jobs, authority, job.id, 1)
    now = [("csrf_token", "tok-leg1"), *fields]
    new = authority.key_of("POST", url, now)
    assert new != key
    again = jobs.park(job.id, kind="approval", key=new, request=request_of(url, now, new))
    assert authority.decide(again.id, "approve", BOB).status == "decided"
    assert human.gate.may_send("POST", url, now) is None
    asked: list[str] = []
    log = IntentLog(
        StoreIntents(jobs, job.id, authority),
        job.id,
        load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url}),
        witness=human.gate.sent_before,
        last_check=human.gate.sending,
        ask_again=lambda *a: asked.append(a[-1]) is not None,
    )
    said = log.before_send("POST", url, now, lambda at: erp_user.http.get(at).text)
    assert said is not None or asked, f"sent again as a first attempt: {authority.sends_of(job.id)}"
    assert len(authority.sends_of(job.id)) == 1
    jobs.close()


def test_an_auto_approved_send_in_doubt_is_not_sent_again_after_the_rules_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    url = "http://127.0.0.1:8800/bills/new"
    fields = [("vendor_id", "3"), ("invoice_number", "INV-7"), ("amount", "900.00"), ("currency", "USD")]
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False, options=JobOptions(auto_approve=True))
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1") is not None
    _leg0_sent(jobs, authority, job.id, url, [("csrf_token", "tok-leg0"), *fields], job.id)
    _narrow(rules)

    human = resumed(jobs, authority, job.id, 1, auto=True)
    now = [("csrf_token", "tok-leg1"), *fields]
    assert human.approve(request_of(url, now)).approved  # --auto-approve, under the new key
    gate = human.gate
    log = IntentLog(
        StoreIntents(jobs, job.id, authority),
        job.id,
        ReadBackRules(),
        witness=gate.sent_before,
        last_check=gate.sending,
        ask_again=lambda *asked: human.approve(gate.again(*asked)).approved,
    )
    assert gate.may_send("POST", url, now) is None
    said = log.before_send("POST", url, now, lambda at: None)
    assert said is not None and "NOT sent again" in said, said
    assert len(authority.sends_of(job.id)) == 1
    jobs.close()


# --- 3: a record that changes before every resume ----------------------------------------------------


def test_a_durable_job_on_a_record_that_changes_on_every_reading_stops_after_the_terminals_limit(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, authority = env["jobs"], env["authority"]
    bill = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(
        origin="form",
        method="POST",
        url=f"{erp.url}/bills/{bill.id}/pay",
        page_url=f"{erp.url}/bills/{bill.id}",
        fields=[FieldValue(name="paid_on", value="2026-10-01")],
    )
    job_id, approval_id = _park(jobs, _asked(erp, erp_user, pay, authority.rules))
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    parks = [approval_id]
    for _ in range(REASKS + 2):
        assert runner.invoke(app, ["approvals", "approve", parks[-1]]).exit_code == 0
        jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
        with sqlite3.connect(erp.db_path) as db:  # the amount read moves before every resume
            db.execute("UPDATE bills SET amount_cents = amount_cents + 1 WHERE invoice_number='HCS-2026-09'")
            (cents,) = db.execute(
                "SELECT amount_cents FROM bills WHERE invoice_number='HCS-2026-09'"
            ).fetchone()
        try:
            decision = JobHuman(jobs, job_id, authority=authority).approve(
                _asked(erp, erp_user, pay, authority.rules)
            )
        except Parked as parked:
            parks.append(parked.approval_id)
            request = jobs.approval(parks[-1]).request
            assert request is not None and request.asked_again
            newest = f"{(cents - 1) // 100}.{(cents - 1) % 100:02d}"  # what bob last approved
            assert newest in request.asked_again, request.asked_again
            jobs.mark(job_id, "waiting", only_if=("running",))
            continue
        assert (
            not decision.approved
            and decision.text
            and "the record changed each time it was approved" in decision.text
        )
        assert len(parks) == REASKS + 1  # the first ask and REASKS re-asks, as at the terminal
        return
    pytest.fail(f"parked {len(parks)} times for one payment, no end said")
