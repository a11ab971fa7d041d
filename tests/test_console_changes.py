"""What changes in the system, read from the system: the worker's gate reads the changed record's
page (read-only) and the system's vendor list when it asks, and the console shows a before/after
per field and flags a payee the system does not know — whatever the form. Real ERP over HTTP, a
second real HTTP system with a vendor bank-details form, real job store, real Chromium."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fixtures_console import ConsoleEnv, shots

from taskcrew.approvals.rules import VendorList, load_rules
from taskcrew.jobs import Jobs
from taskcrew.mock_erp import fetch_state
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

OLD_IBAN = "DE02 1203 0000 0000 2020 51"
NEW_IBAN = "GB33 BUKB 2020 1555 5555 55"
VENDOR_SYSTEM = {
    "/suppliers": "<h1>Suppliers</h1><table><tr><th>Supplier</th><th>City</th></tr>"
    "<tr><td>Globex Corp</td><td>Springfield</td></tr><tr><td>Initech</td><td>Austin</td></tr></table>",
    "/suppliers/7/bank": "<h1>Bank details of Globex Corp</h1><form method=post action=/suppliers/7/bank>"
    '<label for="holder">Account holder</label><input id="holder" name="holder" value="Globex Corp">'
    f'<label for="iban">IBAN</label><input id="iban" name="iban" value="{OLD_IBAN}">'
    '<input type="hidden" name="token" value="t1"><button>Save</button></form>',
}


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = VENDOR_SYSTEM.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(f"<!doctype html><html><body>{body or 'not found'}</body></html>".encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def vendor_system() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _ask(policy: Policy, human: ScriptedHuman, url: str, page_url: str, **fields: str) -> ApprovalRequest:
    sub = Submission(
        origin="form", method="POST", url=url, page_url=page_url,
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )  # fmt: skip
    policy.submission(sub)
    return human.requests[-1]


def _park(jobs: Jobs, request: ApprovalRequest, task: str) -> str:
    job = jobs.submit(task, submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    approval = jobs.park(job.id, kind="approval", key=request.key, request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval.id


@pytest.mark.browser
def test_what_changes_is_read_from_the_system_and_unknown_payees_are_new_vendors(
    console_env: ConsoleEnv, erp: Any, erp_user: Any, vendor_system: str
) -> None:
    unpaid = next(b for b in fetch_state(erp.url).bills if b.status == "unpaid")
    rules = load_rules()
    human = ScriptedHuman([ApprovalDecision.reject()] * 4)

    def fetch(url: str) -> str | None:  # the worker's session: the ERP's login cookie, any page
        response = erp_user.http.get(url)
        return response.text if response.status_code == 200 else None

    erp_policy = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    erp_policy.page_fetch = fetch
    pay = _ask(erp_policy, human, f"{erp.url}/bills/{unpaid.id}/pay", f"{erp.url}/bills/{unpaid.id}",
               paid_on="2026-12-01")  # fmt: skip
    known = _ask(erp_policy, human, f"{erp.url}/bills/new", f"{erp.url}/bills/new",
                 vendor="Northwind Traders", amount="120.00", currency="USD")  # fmt: skip
    unknown = _ask(erp_policy, human, f"{erp.url}/bills/new", f"{erp.url}/bills/new",
                   vendor="Initrode Ltd", amount="99.00", currency="USD")  # fmt: skip
    suppliers = [VendorList(hosts=["127.0.0.1:*"], page="/suppliers")]  # another system, another page
    other_rules = rules.model_copy(update={"vendor_lists": suppliers})
    bank_policy = Policy(PolicyConfig.for_url(vendor_system), human, rules=other_rules)
    bank_policy.page_fetch = fetch
    bank = _ask(bank_policy, human, f"{vendor_system}/suppliers/7/bank", f"{vendor_system}/suppliers/7/bank",
                supplier="Globex Corp", holder="Globex Corp", iban=NEW_IBAN)  # fmt: skip
    assert pay.record is not None and pay.record.values["Status"].startswith("Unpaid")
    assert unknown.known_vendors and "Northwind Traders" in unknown.known_vendors
    assert bank.known_vendors == ["Globex Corp", "Initech"]

    jobs = console_env.jobs
    ids = {
        "pay": _park(jobs, pay, f"Mark the bill {unpaid.id} as paid on 2026-12-01"),
        "known": _park(jobs, known, "Enter the Northwind invoice"),
        "unknown": _park(jobs, unknown, "Enter the Initrode invoice"),
        "bank": _park(jobs, bank, "Change Globex's bank account"),
    }
    erp_host = erp.url.split("//")[1]
    console_env.settings = console_env.settings.model_copy(update={"systems": {erp_host: "Acme Payables"}})
    console_env.restart()
    page = console_env.page_as("bob")

    def row(name: str) -> str:
        return str(page.locator("#worklist tr", has_text=ids[name]).inner_text())

    assert "new vendor" in row("unknown") and "new vendor" not in row("known")
    assert unpaid.vendor in row("pay") and unpaid.due_date in row("pay")  # what the form does not carry
    assert "new vendor" not in row("bank") and "bank details change" in row("bank")
    # the system by its name, its address beside it; a system without a name by its address
    system = page.locator("#worklist tr", has_text=ids["pay"]).locator("td.system")
    assert system.locator("strong").inner_text() == "Acme Payables" and erp_host in system.inner_text()
    assert (
        page.locator("#worklist tr", has_text=ids["bank"]).locator("td.system strong").inner_text()
        == (vendor_system.split("//")[1])
    )

    page.goto(f"{console_env.url}/approvals/{ids['unknown']}")
    flag = page.locator("#risk-flags li", has_text="new vendor").inner_text()
    assert "“Initrode Ltd” is not among the" in flag and "/vendors" in flag

    page.goto(f"{console_env.url}/approvals/{ids['bank']}")
    iban = page.locator("#fields tr", has_text="iban")
    assert OLD_IBAN in iban.locator("td.before").inner_text() and "changes" in iban.inner_text()
    assert OLD_IBAN in page.locator("#key-values tr", has_text="Bank details").inner_text()
    assert NEW_IBAN in iban.inner_text()
    assert "unchanged" in page.locator("#fields tr", has_text="holder").locator("td.before").inner_text()
    shots(page, "approval-change")

    page.goto(f"{console_env.url}/approvals/{ids['pay']}")
    record = page.locator("#record")
    assert "Unpaid" in record.locator("tr", has_text="Status").inner_text()
    assert unpaid.invoice_number in record.inner_text()
    assert "Acme Payables" in page.locator("#action").inner_text()
    payee = page.locator("#key-values tr", has_text="Payee").inner_text()
    assert unpaid.vendor in payee and "the record in Acme Payables" in payee
    assert "(new record)" not in page.locator("#fields").inner_text()
    assert "paid_on" not in record.inner_text()  # the pay form's suggested date is not the record's
    assert "should show “paid on 2026-12-01”" in page.locator(".expected").inner_text()  # read-back rule
    shots(page, "approval-pay")
    page.goto(f"{console_env.url}/approvals/{ids['known']}")
    assert "(new record)" in page.locator("#fields").inner_text()


def test_a_record_is_read_from_any_page_shape_and_its_vendors_from_any_list() -> None:
    from taskcrew.approvals.record import record_values, vendor_names

    table = (
        "<table><tr><th>Supplier</th><td>Hooli</td></tr><tr><th>Sort code</th><td>20-00-00</td></tr>"
        "<tr><td>a</td><td>b</td></tr></table>"
    )
    assert record_values(table) == {"Supplier": "Hooli", "Sort code": "20-00-00"}
    edit = (
        '<form><label for="n">Name</label><input id="n" name="name" value="Hooli Inc">'
        '<select name="terms"><option value="30">30 days</option><option value="60" selected>60 days</option></select>'
        '<textarea name="note"> pays late </textarea><input type="checkbox" name="active" value="yes">'
        '<input type="password" name="pw" value="x"><input type="hidden" name="t" value="1"></form>'
    )
    assert record_values(edit) == {"Name (name)": "Hooli Inc", "terms": "60 days", "note": "pays late"}
    picker = '<select name="payee_id"><option value="">Choose a payee…</option><option value="4">Hooli</option></select>'
    assert vendor_names(picker) == ["Hooli"]
    listing = "<table><tr><th>#</th><th>Vendor name</th></tr><tr><td>1</td><td>Hooli</td></tr></table>"
    assert vendor_names(listing) == ["Hooli"]
    assert vendor_names("<p>no list here</p>") is None  # no vendor list shown: not read, not "0 vendors"


def test_what_a_page_hides_is_not_read_as_the_record_or_a_known_vendor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The "before" and the known vendors are what a person sees on the page; form controls are
    read as served (hidden by a style or not, they are what the form sends)."""
    from taskcrew.approvals.record import read_record, record_values, vendor_list, vendor_names

    details = (
        "<style>.x{display:none}</style><dl><dt class=x>IBAN</dt><dd class=x>DE00 HIDDEN</dd>"
        '<dt>IBAN</dt><dd>GB33 SEEN</dd><dt>Terms</dt><dd style="color:#fff;background:#fff">90 days</dd></dl>'
    )
    assert record_values(details) == {"IBAN": "GB33 SEEN", "Terms": ""}
    form = '<form><input name="iban" value="GB33 SEEN"><input name="sort" style="display:none" value="20-00-00"></form>'
    assert record_values(form) == {"iban": "GB33 SEEN", "sort": "20-00-00"}
    listing = (
        "<table><tr><th>Vendor</th></tr><tr><td>Hooli</td></tr>"
        '<tr style="display:none"><td>Evil Payee Ltd</td></tr><tr hidden><td>Other Ltd</td></tr></table>'
    )
    assert vendor_names(listing) == ["Hooli"]
    picker = '<select name="vendor"><option>Hooli</option><option hidden>Evil Payee Ltd</option></select>'
    assert vendor_names(picker) == ["Hooli"]
    # a page too costly to judge is not read: no "before", no known vendors (the payee stays new)
    costly = "<style>" + "div " * 12 + "p{display:none}</style>" + "<div>" * 40 + "<p>x</p>" * 400
    monkeypatch.setenv("TASKCREW_STYLE_CHECKS", "1000")
    assert read_record("http://erp/vendors/1", lambda _: costly) is None
    rules = load_rules().model_copy(update={"vendor_lists": [VendorList(hosts=["erp:*"], page="/vendors")]})
    assert vendor_list("http://erp:80/bills/new", rules, lambda _: costly)[:2] == (
        None,
        "http://erp:80/vendors",
    )
