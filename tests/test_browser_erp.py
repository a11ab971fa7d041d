"""The browser layer against the real mock ERP (Acme Payables): perception, the gate, the vault."""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_browser import SessionFactory

from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.browser import (
    Back,
    BrowserSession,
    Click,
    DismissModal,
    Navigate,
    Observation,
    Select,
    Type,
)
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.vault import Vault

pytestmark = pytest.mark.browser

VAULT = {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}
BILL = {
    "vendor_id": "Northwind Traders",
    "invoice_number": "INV-2057",
    "amount": "1284.50",
    "currency": "USD",
    "invoice_date": "2026-09-12",
    "due_date": "2026-10-12",
}


def field(obs: Observation, name: str) -> int:
    found = [el.index for el in obs.elements if el.field is not None and el.field.name == name]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def named(obs: Observation, name: str) -> int:
    found = [el.index for el in obs.elements if el.name == name]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def unique_selectors(session: BrowserSession, obs: Observation) -> bool:
    def count(page: Any) -> set[int]:
        return {page.locator(el.playwright_selector).count() for el in obs.elements}

    return session.run(count) == {1}  # type: ignore[no-any-return]


def login(session: BrowserSession, erp: ErpServer) -> Observation:
    obs = session.goto(f"{erp.url}/login").observation
    result = session.act(
        [
            Type(index=field(obs, "username"), text="{{secret:ERP_USERNAME}}"),
            Type(index=field(obs, "password"), text="{{secret:ERP_PASSWORD}}"),
            Click(index=named(obs, "Log in")),
        ]
    )
    assert result.ok, result.render()
    return result.observation


def fill_bill(obs: Observation, **overrides: str) -> list[Any]:
    values = {**BILL, **overrides}
    return [
        Select(index=field(obs, "vendor_id"), option=values["vendor_id"]),
        Type(index=field(obs, "invoice_number"), text=values["invoice_number"]),
        Type(index=field(obs, "amount"), text=values["amount"]),
        Select(index=field(obs, "currency"), option=values["currency"]),
        Type(index=field(obs, "invoice_date"), text=values["invoice_date"]),
        Type(index=field(obs, "due_date"), text=values["due_date"]),
        Click(index=named(obs, "Save bill")),
    ]


def test_observe_login_bills_list_and_new_bill_form(make_session: SessionFactory, erp: ErpServer) -> None:
    session = make_session(base_url=erp.url, vault=Vault(VAULT))
    login_page = session.goto(f"{erp.url}/login").observation
    assert [o.kind for o in login_page.obstacles] == ["login_form"]
    assert login_page.element(field(login_page, "password")).field.type == "password"  # type: ignore[union-attr]
    assert unique_selectors(session, login_page)
    bills = login(session, erp)
    assert bills.title.startswith("Bills")
    assert "| Globex Corp | GX-5531 | 2150.00 | USD |" in bills.text
    assert "Signed in as {{secret:ERP_USERNAME}}" in bills.text
    assert len([el for el in bills.elements if el.name.startswith("BILL-")]) == 10
    assert unique_selectors(session, bills)
    new_bill = next(el.index for el in bills.elements if el.name == "New bill")
    opened = session.act([Click(index=new_bill)])
    form = opened.observation
    assert form.title.startswith("New bill"), [(r.ok, r.message) for r in opened.ran]
    vendor = form.element(field(form, "vendor_id"))
    assert vendor is not None and vendor.field is not None and vendor.field.options is not None
    assert "Northwind Traders" in [o.label for o in vendor.field.options]
    save = form.element(named(form, "Save bill"))
    assert save is not None and save.submits is not None
    assert (save.submits.method, save.submits.action) == ("POST", f"{erp.url}/bills/new")
    assert form.element(field(form, "invoice_date")).field.type == "date"  # type: ignore[union-attr]
    assert unique_selectors(session, form)


def test_a_secret_goes_only_into_the_fields_it_is_bound_to(
    make_session: SessionFactory, erp: ErpServer
) -> None:
    host = erp.url.removeprefix("http://")
    vault = Vault(VAULT, public=["ERP_USERNAME"], hosts={name: [host] for name in VAULT})
    session = make_session(base_url=erp.url, vault=vault)
    login(session, erp)  # the login form's user and password fields: typed
    form = session.goto(f"{erp.url}/bills/new").observation
    # the right host, the wrong field: the invoice number would store the password in a bill
    result = session.act([Type(index=field(form, "invoice_number"), text="{{secret:ERP_PASSWORD}}")])
    assert not result.ok, result.render()
    assert "may only be typed into a login form's user or password field" in result.render()
    value = session.run(lambda page: page.evaluate("document.querySelector('[name=invoice_number]').value"))
    assert value == ""
    refused = [d for d in session.policy.decisions if d.kind == "typing" and d.outcome == "blocked"]
    assert len(refused) == 1 and "invoice" in refused[0].reason.lower()
    # a rule naming the field allows it there (and still nowhere else)
    named_vault = Vault(VAULT, hosts={"ERP_PASSWORD": [host]}, fields={"ERP_PASSWORD": ["amount"]})
    assert named_vault.field_rules("ERP_PASSWORD") == ["amount"]


def test_unapproved_save_never_changes_the_erp(make_session: SessionFactory, erp: ErpServer) -> None:
    human = ScriptedHuman([ApprovalDecision.reject("check the amount first"), ApprovalDecision.approve()])
    session = make_session(base_url=erp.url, vault=Vault(VAULT), human=human)
    login(session, erp)
    before = erp.state()
    form = session.goto(f"{erp.url}/bills/new").observation
    rejected = session.act(fill_bill(form))
    assert not rejected.ok and "check the amount first" in rejected.render()
    assert erp.state().bills == before.bills
    assert erp.state().chaos.counters.valid_saves == 0
    shown = {f.name: f.value for f in human.requests[0].fields}
    assert human.requests[0].url == f"{erp.url}/bills/new"
    assert shown["vendor_id"].endswith("(Northwind Traders)") and shown["amount"] == "1284.50"
    assert shown["csrf_token"].startswith("(left out of the approval")  # a rule names it for this system
    # approving the same form saves exactly that bill
    saved = session.act([Click(index=named(rejected.observation, "Save bill"))])
    assert saved.ok, saved.render()
    assert "Bill BILL-0011 saved" in saved.render()
    bill = erp.state().bill("BILL-0011")
    assert bill is not None
    assert (bill.vendor, bill.invoice_number, bill.amount, bill.due_date) == (
        "Northwind Traders",
        "INV-2057",
        "1284.50",
        "2026-10-12",
    )
    human.assert_complete()


def test_read_only_session_refuses_writes(make_session: SessionFactory, erp: ErpServer) -> None:
    session = make_session(base_url=erp.url, vault=Vault(VAULT), read_only=True)  # the human is never asked
    login(session, erp)  # login is allowed in read-only mode
    before = erp.state()
    form = session.goto(f"{erp.url}/bills/new").observation
    refused = session.act(fill_bill(form))
    assert not refused.ok and "read-only" in refused.ran[-1].message
    detail = session.goto(f"{erp.url}/bills/BILL-0004").observation
    pay = session.act([Click(index=named(detail, "Mark paid"))])
    assert not pay.ok and "read-only" in pay.ran[0].message
    blocked = session.act([Navigate(url=f"{erp.url}/_debug/state")])
    assert not blocked.ok and "off limits" in blocked.ran[0].message
    after = erp.state()
    assert after.bills == before.bills and after.payments == before.payments


def test_validation_errors_come_back_as_text(make_session: SessionFactory, erp: ErpServer) -> None:
    human = ScriptedHuman([ApprovalDecision.approve()])
    session = make_session(base_url=erp.url, vault=Vault(VAULT), human=human)
    login(session, erp)
    form = session.goto(f"{erp.url}/bills/new").observation
    result = session.act(fill_bill(form, amount="1,284.50"))
    assert not result.ok and result.http_status == 422
    assert any("HTTP 422" in e for e in result.errors)
    text = result.render()
    assert "Amount must be a plain number" in text
    amount = result.observation.element(field(result.observation, "amount"))
    assert amount is not None and amount.field is not None and amount.field.invalid is not None
    assert "plain number" in amount.field.invalid
    assert len(erp.state().bills) == 10


def test_chaos_expired_session_then_503_then_saved(make_session: SessionFactory, erp_factory: Any) -> None:
    erp = erp_factory(chaos=ChaosConfig(seed=0))  # 1st valid save: session expires; 2nd: HTTP 503
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.approve()])
    session = make_session(base_url=erp.url, vault=Vault(VAULT), human=human)
    login(session, erp)
    form = session.goto(f"{erp.url}/bills/new").observation
    expired = session.act(fill_bill(form))
    assert "Your session has expired" in expired.render()
    assert [o.kind for o in expired.observation.obstacles] == ["login_form"]
    login(session, erp)
    form = session.goto(f"{erp.url}/bills/new").observation
    unavailable = session.act(fill_bill(form))  # bounced (not saved): not asked again
    assert not unavailable.ok and unavailable.http_status == 503
    assert any("HTTP 503" in e for e in unavailable.errors)
    back = session.act([Back()])
    form = back.observation if back.observation.title.startswith("New bill") else session.observe()
    saved = session.act(fill_bill(form))  # a 503 may have saved it: asked again
    assert saved.ok, saved.render()
    assert len(human.requests) == 2
    assert [b.invoice_number for b in erp.state().bills_of("Northwind Traders")].count("INV-2057") == 1
    human.assert_complete()


def test_notice_modal_is_detected_and_dismissed(make_session: SessionFactory, erp_factory: Any) -> None:
    erp = erp_factory(chaos=ChaosConfig(seed=0, modal=True, save_faults=[]))
    session = make_session(base_url=erp.url, vault=Vault(VAULT))  # no approval needed to dismiss
    obs = session.goto(f"{erp.url}/login").observation
    (modal,) = [o for o in obs.obstacles if o.kind == "modal"]
    assert modal.index is not None
    assert obs.element(field(obs, "username")).state == "occluded"  # type: ignore[union-attr]
    blocked = session.act([Type(index=field(obs, "username"), text="demo")])
    assert not blocked.ok and "covered by" in blocked.ran[0].message
    dismissed = session.act([DismissModal()])
    assert dismissed.ok, dismissed.render()
    assert not [o for o in dismissed.observation.obstacles if o.kind == "modal"]
    bills = login(session, erp)
    assert bills.title.startswith("Bills")
