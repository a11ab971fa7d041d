# ruff: noqa: F811 — the fixture env is imported from test_changed_payee_s45
"""Whom a request pays is read with which vendor record that is (``authority.payee_record``): a
bill moved to another vendor record named like the one approved (a trailing, double or leading
space; the ERP allows it) is another payee, asked again; a payee named like more than one listed
vendor record is unclear and flagged as a look-alike on every surface. The demo ERP over HTTP, a
real SQLite job store and the real CLI (no model)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from test_changed_payee_s45 import _asked, _park, _token, env, runner  # noqa: F401 (fixture)

from taskcrew.approvals.authority import payee_flags, request_payee, system_reading
from taskcrew.approvals.record import read_record
from taskcrew.cli import app
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.policy import Submission

HOOLI = "Hooli Cloud Services"


def _pay(erp: ErpServer) -> tuple[str, Submission]:
    hooli = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    sub = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{hooli.id}/pay",
                     page_url=f"{erp.url}/bills/{hooli.id}",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    return hooli.id, sub


def _approved_by_bob(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, request: ApprovalRequest) -> str:
    jobs = env["jobs"]
    job_id, approval_id = _park(jobs, request)
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", approval_id]).exit_code == 0
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    return job_id


def _resumed(env: dict[str, Any], job_id: str, request: ApprovalRequest) -> Any:
    """The job comes back to the request: the approval parked again (asked again)."""
    with pytest.raises(Parked) as parked:
        JobHuman(env["jobs"], job_id, authority=env["authority"]).approve(request)
    return env["jobs"].approval(parked.value.approval_id)


@pytest.mark.parametrize("twin", [f"{HOOLI} ", "Hooli  Cloud Services", f" {HOOLI}"])
def test_a_bill_moved_to_another_vendor_record_named_alike_is_asked_again_and_flagged(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch, twin: str
) -> None:
    """bob approved paying Hooli's bill (vendor record 10). A second employee adds a vendor record
    named like it and moves the bill to it: the bill's page shows the same name, the vendor list two
    records called so. Asked again, saying which records; flagged as a look-alike; never in bulk."""
    authority = env["authority"]
    bill, pay = _pay(erp)
    ask = lambda: _asked(erp, erp_user, pay, authority.rules)  # noqa: E731
    first = ask()
    job_id = _approved_by_bob(env, monkeypatch, first)
    with sqlite3.connect(erp.db_path) as db:  # the twin, and the bill moved to it (same amount)
        db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (twin,))
        (new,) = db.execute("SELECT id FROM vendors WHERE name = ?", (twin,)).fetchone()
        db.execute("UPDATE bills SET vendor_id = ? WHERE invoice_number = 'HCS-2026-09'", (new,))
    request = ask()
    assert request.key == first.key  # the same bytes: only the ERP changed
    again = _resumed(env, job_id, request)
    assert again.request.asked_again == (
        f"bob approved it when the payee read from {erp.url}/bills/{bill} was {HOOLI}, vendor record 10 "
        f"listed at {erp.url}/vendors; it is now {HOOLI} (unclear), vendor records 10 and {new} listed at "
        f"{erp.url}/vendors"
    )
    assert (
        system_reading(first, authority.rules)["payee_record"]
        == f"vendor record 10 listed at {erp.url}/vendors"
    )
    payee = request_payee(again.request, authority.rules)
    assert payee.unclear
    assert [f.rule for f in payee_flags(payee, again.request)] == ["lookalike_vendor"]  # said once
    view = authority.view(again)
    assert "lookalike_vendor" in [f.rule for f in view.assessment.flags]
    shown = runner.invoke(app, ["approvals", "show", again.id]).output.replace("\n  ┆ ", "")
    assert "asked again: bob approved it when the payee read from" in shown
    assert f"2 are called “{HOOLI}”" in " ".join(shown.split())


def test_a_bill_moved_to_a_record_that_took_the_approved_vendors_name_is_asked_again(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No twin left to see: Hooli's record 10 is renamed, a new record takes its exact name and the
    bill moves to it. The name read is the same; the record is not."""
    authority = env["authority"]
    bill, pay = _pay(erp)
    ask = lambda: _asked(erp, erp_user, pay, authority.rules)  # noqa: E731
    job_id = _approved_by_bob(env, monkeypatch, ask())
    with sqlite3.connect(erp.db_path) as db:
        db.execute("UPDATE vendors SET name = 'Hooli (old)' WHERE id = 10")
        db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (HOOLI,))
        (new,) = db.execute("SELECT id FROM vendors WHERE name = ?", (HOOLI,)).fetchone()
        db.execute("UPDATE bills SET vendor_id = ? WHERE invoice_number = 'HCS-2026-09'", (new,))
    request = ask()
    assert not request_payee(request, authority.rules).unclear  # one record is called so now
    again = _resumed(env, job_id, request)
    assert again.request.asked_again == (
        f"bob approved it when the payee read from {erp.url}/bills/{bill} was {HOOLI}, vendor record 10 "
        f"listed at {erp.url}/vendors; it is now {HOOLI}, vendor record {new} listed at {erp.url}/vendors"
    )


def test_the_vendor_record_a_bill_page_links_is_the_payee_record(env: dict[str, Any], erp: ErpServer) -> None:
    """A system that links the bill's vendor to its record ("/vendors/10") says which record it is,
    whatever the vendor list shows: read from the link, a move to another record is another payee."""
    rules = env["authority"].rules
    page = f"{erp.url}/bills/BILL-0005"

    def bill_page(vendor_id: int) -> str:
        return (
            f'<dl><dt>Vendor</dt><dd><a href="/vendors/{vendor_id}">Hooli Cloud Services</a></dd>'
            "<dt>Amount</dt><dd>499.00 USD</dd></dl>"
        )

    def request(vendor_id: int) -> ApprovalRequest:
        return ApprovalRequest(
            kind="form_submission", method="POST", url=f"{page}/pay", page_url=page,
            fields=[FieldValue(name="paid_on", value="2026-10-01")],
            record=read_record(page, lambda url: bill_page(vendor_id)),
        )  # fmt: skip

    then, now = system_reading(request(10), rules), system_reading(request(11), rules)
    assert then["payee"] == now["payee"] == HOOLI
    assert then["payee_record"] == f"vendor record {erp.url}/vendors/10"
    assert now["payee_record"] == f"vendor record {erp.url}/vendors/11"
    dumped = request(10).model_dump()
    assert dumped["record"]["links"] == {"Vendor": f"{erp.url}/vendors/10"}
    assert "links" not in ApprovalRequest(**{**dumped, "record": {"page": page}}).model_dump()["record"]
