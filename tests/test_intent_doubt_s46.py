"""Sends in doubt whose row cannot be told from the request at hand, and sends in doubt settled by a
resend under another key (review of 1323e4e).

1. An intent row written before rows recorded the fields left out of their key is read by the set its
   key proves (``approvals.key.keyed_with``). Where its key proves none (an old rule left out a field
   whose value has not changed and today's rules no longer leave it out), the row was read as neither
   an earlier attempt nor another request: after an upgrade and a narrowing of ``excluded_fields``, a
   bill in doubt (no answer recorded) was sent again as a first attempt, by an ``--auto-approve`` job
   with nobody asked. Now such a row — same method, address and field names in the same order — is
   possibly this request (``earlier_attempt`` None) and counts as an earlier attempt: the send is held
   and a person is asked, told it may still apply and why it cannot be told apart.
2. ``liveness.send_in_doubt`` grouped a job's attempts by their key's prefix: a send in doubt that a
   person judged and approved again after a rules edit (the resend recorded under today's key, and
   answered: saved) still read "a send may have been saved" on every surface. Now a job's attempts
   are grouped by the intent log's own rule (``earlier_attempt``: the same request by content).

Real job database (SQLite), signed audit log, the demo ERP over HTTP (its read-back rule and a real
save), the real CLI; no model is involved."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_erp import NORTHWIND_2057, ErpUser, erp_state
from test_key_covers_s45 import _rules
from test_key_versions_s45 import BOB, request_of, resumed
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.key import keyed_with, request_key
from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import Parked
from taskcrew.jobs.liveness import send_in_doubt, sends_in_doubt
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.intents import IntentLog, IntentRecord, SendOutcome
from taskcrew.tools.readback import ReadBackRules, load_rules

RULE = "fields: ['csrf_token']"
WIDE = ["csrf_token", "form_ts", "form_rev"]  # the rule before the operator cut it back


def _set_rule(rules: Path, fields: list[str]) -> None:
    """The operator edits the ERP's ``excluded_fields`` rule (an ordinary edit, read live)."""
    text = rules.read_text(encoding="utf-8")
    start = text.index("fields: [", text.index("excluded_fields:"))
    end = text.index("]", start) + 1
    rules.write_text(text[:start] + f"fields: {fields!r}" + text[end:], encoding="utf-8")


def _bill(erp_user: ErpUser, token: str, ts: str) -> list[tuple[str, str]]:
    """The new-bill form as the page sends it: its CSRF token and per-page timestamp change with each
    page, its template revision does not."""
    fields = [("csrf_token", token), ("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]
    return [*fields, ("form_ts", ts), ("form_rev", "r12")]


def _fetch(erp_user: ErpUser):  # type: ignore[no-untyped-def]
    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    return fetch


@pytest.mark.parametrize("readback", [True, False], ids=["read-back-rule", "no-read-back-rule"])
def test_a_pre_release_row_in_doubt_whose_exclusions_cannot_be_proven_is_held_and_a_person_asked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    erp: ErpServer,
    erp_user: ErpUser,
    isolated_home: Path,
    readback: bool,
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    _set_rule(rules, WIDE)
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    url = f"{erp.url}/bills/new"
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False,
                      options=JobOptions(auto_approve=True))  # fmt: skip
    # what a worker of the previous release left: its attempt recorded under the key its rules made
    # (no set of left-out fields recorded, no request key kept), the send signed as that release
    # signed it (no set either), no answer: the worker was stopped mid-send for the upgrade
    sent = _bill(erp_user, "tok-leg0", "1765085000")
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1") is not None
    old = IntentRecord(
        key=request_key("POST", url, sent, excluded=WIDE, scope=job.id), method="POST", url=url, fields=sent
    )
    assert StoreIntents(jobs, job.id, authority).claim(old) is None
    send = {
        "job_id": job.id,
        "key": request_key("POST", url, sent, excluded=WIDE),
        "method": "POST",
        "url": url,
    }
    authority.audit.append("worker", "send", job.id, send)
    assert jobs.hand_back(job.id, 0, "w1", "the worker stopped", leg_ends=True)
    assert send_in_doubt(jobs.intents(job.id)) is not None  # every surface names it
    _set_rule(rules, ["csrf_token"])  # after the upgrade: the rule cut back to the CSRF token
    bills = len(erp_state(erp).bills)

    now = _bill(erp_user, "tok-leg1", "1765085412")  # the page again, on the upgraded worker's leg
    # its key proves no set of left-out fields: form_rev (unchanged, no longer left out) is not tried
    assert keyed_with(old.key, ("POST", url, sent), {"csrf_token", "form_ts"}, scope=job.id) is None
    human = resumed(jobs, authority, job.id, 1, auto=True)
    gate = human.gate
    assert human.approve(request_of(url, now)).approved  # --auto-approve, under today's key
    log = IntentLog(
        StoreIntents(jobs, job.id, authority),
        job.id,
        load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url}) if readback else ReadBackRules(),
        witness=gate.sent_before,
        last_check=gate.sending,
        ask_again=lambda *asked: human.approve(gate.again(*asked)).approved,
    )
    assert gate.may_send("POST", url, now) is None
    try:
        said = log.before_send("POST", url, now, _fetch(erp_user))
    except Parked as parked:  # read back: not in the system, but it may still land: a person decides
        assert readback
        asked = jobs.approval(parked.approval_id).request
        assert asked is not None and asked.asked_again is not None
        assert "MAY STILL APPLY" in asked.asked_again, asked.asked_again
        assert "cannot be told" in asked.asked_again, asked.asked_again  # and why it may be this one
    else:
        assert said is not None, "sent again as a first attempt: the earlier attempt was not found"
        assert not readback and "NOT sent again" in said, said
        assert "cannot be told" in said, said
    assert len(authority.sends_of(job.id)) == 1  # only the previous release's send
    assert [i.key for i in jobs.intents(job.id)] == [old.key]  # no new attempt recorded
    assert len(erp_state(erp).bills) == bills
    jobs.close()


def test_a_send_in_doubt_a_person_approved_again_under_another_key_is_settled_on_every_surface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, erp: ErpServer, erp_user: ErpUser, isolated_home: Path
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    jobs = Jobs.open()  # the CLI's default store, in this test's home
    authority = Authority(jobs)
    url = f"{erp.url}/bills/new"
    readback = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False)
    # leg 0 recorded its attempt and sent it; no answer came; the worker stopped
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", started_at=utcnow())
    first = _bill(erp_user, "tok-leg0", "1765085000")
    leg0 = IntentLog(StoreIntents(jobs, job.id, authority), job.id, readback)
    assert leg0.before_send("POST", url, first, _fetch(erp_user)) is None
    assert jobs.hand_back(job.id, 0, "w1", "the worker stopped", leg_ends=True)
    assert send_in_doubt(jobs.intents(job.id)) is not None
    _set_rule(rules, ["csrf_token", "form_ts"])  # the operator adds the per-page timestamp: new keys

    # leg 1: the read-back does not find the bill; bob, told it may still apply, approves a resend
    human = resumed(jobs, authority, job.id, 1)
    again = _bill(erp_user, erp_user.csrf_token("/bills/new"), "1765085412")
    log = IntentLog(
        StoreIntents(jobs, job.id, authority),
        job.id,
        readback,
        ask_again=lambda *asked: human.approve(human.gate.again(*asked)).approved,
    )
    with pytest.raises(Parked) as parked:
        log.before_send("POST", url, again, _fetch(erp_user))
    assert authority.decide(parked.value.approval_id, "approve", BOB).status == "decided"
    assert log.before_send("POST", url, again, _fetch(erp_user)) is None  # her approval: it leaves
    answer = erp_user.http.post("/bills/new", data=dict(again))
    assert answer.status_code == 303, answer.text[:300]  # saved
    log.after_send("POST", url, again, SendOutcome(http_status=303, location=answer.headers["location"]))
    first_key, resend = (i.key.split(".")[0] for i in jobs.intents(job.id))
    assert first_key != resend  # the resend went under today's key

    # her judgement and the answered resend settle the first attempt: no surface names a doubt
    assert send_in_doubt(jobs.intents(job.id)) is None, "a send may have been saved: a false alarm"
    assert sends_in_doubt(jobs, [jobs.get(job.id)]) == {}
    listed = CliRunner().invoke(app, ["jobs", "list"])
    assert listed.exit_code == 0, listed.output
    assert job.id in listed.output and "a send may have been saved" not in " ".join(listed.output.split())
    jobs.close()
