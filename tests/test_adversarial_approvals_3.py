# ruff: noqa: F811 — the fixtures (env, make, attacker) are imported from test_approvals and test_adversarial_browser
"""Third review of the approval authority (a second employee, a database writer, someone who can
write the audit log's file but not read the key, a hostile page):

1. bulk approval's "identical" covers the whole target the key binds, its query too;
2. a failed job can be cancelled, so an approval given before it failed can be taken back before a
   retry resumes on it;
3. which decision of a key counts is the order the signed audit log gave them in, not a date in the
   job database, and a rejection deleted or edited in the database does not let an older approval count;
4. a line of audit.jsonl the key did not sign changes nothing the worker does;
5. a currency named only by a chosen option's label (the page's text, not sent) does not lower the
   threshold an amount is judged under.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from test_adversarial_browser import (  # noqa: F401  (module fixtures: one Chromium, ERP, attacker)
    Factory,
    attacker,
    canary,
    erp,
    idx,
    make,
    runtime,
    settle,
)
from test_approvals import ERP_URL, _parked, _request, env  # noqa: F401

from taskcrew.approvals.audit import AuditEntry
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import assess, load_rules
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import Approval
from taskcrew.jobs.store import A, fingerprint
from taskcrew.tools.browser import Click
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, ScriptedHuman

ANA, BOB = Identity(name="ana", proof="token"), Identity(name="bob", proof="token")
CAROL = Identity(name="carol", proof="console")


# ---- 1: bulk approval of items that differ in their query ----------------------------------------
def test_bulk_approval_refuses_items_that_differ_only_in_their_query_or_scheme(env: dict[str, Any]) -> None:
    jobs, authority = env["jobs"], env["authority"]
    ids = [
        _parked(jobs, "ana", _request().model_copy(update={"url": url}))[1]
        for url in (
            f"{ERP_URL}/bills/new?vendor=3",
            f"{ERP_URL}/bills/new?vendor=3&pay_to=attacker",
            "https://127.0.0.1:8800/bills/new?vendor=3",
        )
    ]
    for pair in ([ids[0], ids[1]], [ids[0], ids[2]]):
        (refused,) = authority.bulk_approve(pair, BOB)
        assert refused.status == "refused" and "not identical" in refused.message
        assert all(jobs.approval(i).status == "pending" for i in pair)
    same = _parked(
        jobs, "ana", _request(amount="99.00").model_copy(update={"url": f"{ERP_URL}/bills/new?vendor=3"})
    )
    assert [r.status for r in authority.bulk_approve([ids[0], same[1]], BOB)] == ["decided", "decided"]


# ---- 2: a failed job's approvals can be taken back -------------------------------------------------
def test_a_failed_job_can_be_cancelled_so_its_retry_asks_its_approvals_again(env: dict[str, Any]) -> None:
    """bob approved ana's bill; the job failed (the ERP was down) before it was sent; bob takes his
    approval back by cancelling it (before: refused, "only queued, running or waiting jobs"), and
    ana's retry asks again instead of sending on bob's approval."""
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request(amount="120.00"))
    assert authority.decide(approval_id, "approve", BOB).status == "decided"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    jobs.mark(job_id, "failed", only_if=("running",), reason="the ERP was down")
    assert authority.act_on_job(job_id, "cancel", BOB).status == "cancelled"
    authority.act_on_job(job_id, "retry", ANA)
    assert approval_id in authority.void_decisions(job_id)
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, job_id).approve(_request(amount="120.00"))


# ---- 3: the order of decisions is the audit log's --------------------------------------------------
PAY = f"{ERP_URL}/bills/BILL-5/pay"


def _pay(amount: str) -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=PAY,
        fields=[FieldValue(name="csrf_token", value="t")],
        looked_up={"amount": amount, "currency": "USD", "source": f"{ERP_URL}/bills/BILL-5"},
    )


def _approved_then_rejected(env: dict[str, Any]) -> tuple[str, str, str]:
    """bob approved paying BILL-5 at 450.00; it became 8,000.00, the run asked again and carol
    rejected it; the bill is 450.00 again (a rejection stands whatever changed)."""
    jobs, authority = env["jobs"], env["authority"]
    job_id, first = _parked(jobs, "ana", _pay("450.00"))
    assert authority.decide(first, "approve", BOB).status == "decided"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job_id).approve(_pay("8000.00"))
    jobs.mark(job_id, "waiting", only_if=("running",))
    assert authority.decide(parked.value.approval_id, "reject", CAROL).status == "decided"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, job_id).approve(_pay("450.00")).outcome == "reject"
    return job_id, first, parked.value.approval_id


@pytest.mark.parametrize("edit", ["created_at moved", "row deleted", "decision edited"])
def test_a_database_writer_cannot_make_an_earlier_approval_outrank_a_later_rejection(
    env: dict[str, Any], edit: str
) -> None:
    jobs = env["jobs"]
    job_id, first, rejected = _approved_then_rejected(env)
    with jobs.engine.begin() as conn:
        if edit == "row deleted":
            conn.execute(A.delete().where(A.c.id == rejected))
        else:
            doc = conn.execute(A.select().with_only_columns(A.c.doc).where(A.c.id == rejected)).scalar_one()
            row = Approval.model_validate_json(str(doc))
            if edit == "created_at moved":  # signed decision untouched: only its date
                row.created_at = jobs.approval(first).created_at - timedelta(minutes=5)
            else:
                row.decided_by = "nobody"
            conn.execute(A.update().where(A.c.id == rejected).values(doc=row.model_dump_json()))
    human = JobHuman(jobs, job_id)
    if edit == "created_at moved":
        assert human.approve(_pay("450.00")).outcome == "reject"
    else:  # the rejection's row is gone or void: asked again, never sent on bob's older approval
        with pytest.raises(Parked):
            human.approve(_pay("450.00"))
    assert human.gate.send_check("POST", PAY, [("csrf_token", "t")]) is not None


# ---- 4: unsigned lines of the audit log ------------------------------------------------------------
def _forge(
    env: dict[str, Any], action: str, target: str, payload: dict[str, Any], *, first: bool = False
) -> None:
    """A line written by someone who can write audit.jsonl but cannot read the key."""
    log = env["authority"].audit
    last = log.entries()[-1]
    line = AuditEntry(
        seq=0 if first else last.seq + 1,
        at=last.at,
        who="worker",
        action=action,
        target=target,
        payload=payload,
        prev=last.hash,
        hash="k1:" + "f" * 64,
    ).model_dump_json()
    lines = log.path.read_text().splitlines()
    lines.insert(0 if first else len(lines), line)
    log.path.write_text("\n".join(lines) + "\n")


def test_unsigned_audit_lines_void_nothing_claim_no_send_and_reorder_no_answer(env: dict[str, Any]) -> None:
    jobs, authority = env["jobs"], env["authority"]
    # a forged retry voids no approval
    job_id, approval_id = _parked(jobs, "ana", _request(amount="120.00"))
    assert authority.decide(approval_id, "approve", BOB).status == "decided"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    _forge(env, "retry", job_id, {"proof": "token", "void": [approval_id]})
    assert authority.void_decisions(job_id) == set()
    assert JobHuman(jobs, job_id).approve(_request(amount="120.00")).approved
    # a forged send makes no earlier run have sent it (it would stop the payment as "uncertain")
    gate = JobHuman(jobs, job_id).gate
    fields = [(f.name, f.value) for f in _request(amount="120.00").fields]
    key = authority.key_of("POST", f"{ERP_URL}/bills/new", fields)
    _forge(env, "send", approval_id, {"job_id": job_id, "key": key, "method": "POST", "url": ERP_URL})
    assert gate.sent_before("POST", f"{ERP_URL}/bills/new", fields) is None
    # a forged question entry put first hands a reworded question another question's answer
    asked = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(asked.id, "running", only_if=("queued",), worker="w1")
    gate = JobHuman(jobs, asked.id).gate
    ids = []
    for text in ("Which vendor: Northwind or Contoso?", "Which amount: 95.00 or 9500.00?"):
        question = jobs.park(asked.id, kind="question", key=fingerprint({"question": text}), question=text)
        gate.asked(question)
        ids.append(question.id)
    for question_id, answer in zip(ids, ("Northwind", "95.00"), strict=True):
        assert authority.decide(question_id, "answer", BOB, answer).status == "decided"
    _forge(env, "question", ids[1], {"job_id": asked.id, "key": "x"}, first=True)
    _forge(env, "answer_handed", ids[0], {"job_id": asked.id})
    assert JobHuman(jobs, asked.id).ask("Which vendor is it (reworded)?") == "Northwind"


# ---- 5: a currency named by a relabelled option ----------------------------------------------------
def test_a_currency_named_only_by_an_options_label_is_judged_under_the_lowest_threshold() -> None:
    rules, url = load_rules(), f"{ERP_URL}/bills/new"
    labelled = [("currency_id", "1 (JPY)"), ("amount", "500000.00")]
    flags = assess(labelled, url, rules, labels={"currency_id": "JPY"}).flags
    assert [f.rule for f in flags] == ["amount_above_threshold"] and "label" in flags[0].message
    # what is sent names it: its own threshold (500,000 JPY is below JPY's 750,000)
    assert assess([("currency", "JPY"), ("amount", "500000.00")], url, rules).low_risk
    # a small amount stays low risk whatever the label says
    assert assess(
        [("currency_id", "1 (JPY)"), ("amount", "120.00")], url, rules, labels={"currency_id": "JPY"}
    ).low_risk


_RELABEL = (
    "<title>Pay</title><form method=post action='/collect-jpy'>"
    "<label>Currency <select name=currency_id><option value=1 selected>EUR</option>"
    "<option value=2>JPY</option></select></label>"
    "<label>Amount <input name=amount value='500000.00'></label><button>Pay now</button></form>"
    "<script>setTimeout(() => { document.querySelector('option[value=\"1\"]').textContent = 'JPY'; }, 0);"
    "</script>"
)


@pytest.mark.browser
def test_a_page_that_relabels_the_chosen_currency_does_not_lower_the_threshold(
    make: Factory, attacker: Any, env: dict[str, Any]
) -> None:
    """Option "1" is EUR to the system; the page's script relabels it "JPY" before the click. The
    approval shows "1 (JPY)" and sends "1": 500,000.00 EUR must need two people (before: judged
    under JPY's 750,000, low risk, one person)."""
    attacker.pages["/relabel"] = _RELABEL
    human = ScriptedHuman([ApprovalDecision.reject()])
    session = make(human=human)
    obs = session.goto(attacker.url + "/relabel").observation
    session.act([Click(index=idx(obs, "Pay now"))])
    settle(session)
    (request,) = human.requests
    assert {f.name: f.value for f in request.fields}["currency_id"] == "1 (JPY)"
    assert any("label" in flag for flag in request.flags), request.flags
    assert env["authority"].needs_two(env["authority"].assess(request))
